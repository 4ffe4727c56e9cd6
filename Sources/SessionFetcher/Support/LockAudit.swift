import Foundation

/// Debug builds' check that no user block runs while the library holds a lock.
///
/// The library's locks (`Locked`) are not reentrant, and a user block may read its own fetcher,
/// service or upload: called under a lock, such a block would wait on itself for ever. In debug
/// builds every `Locked` counts, per thread, the locks the thread holds, and the library calls
/// `userBlock(_:violation:)` just before it runs a block of the user's (configuration, decorator,
/// authorizer, user-agent provider, retry, redirect, challenge, response, metrics, progress, data,
/// test, resume-data and completion blocks, on fetchers, services and uploads): with a lock held,
/// that stops the process with a message that names the block. Release builds compile it away.
package enum LockAudit {
  /// Checks, in debug builds, that the calling thread holds none of the library's locks before
  /// the user's block `name` runs; if it holds one, `violation` gets a message naming the block
  /// (by default the process stops with it).
  @inline(__always)
  package static func userBlock(
    _ name: @autoclosure () -> String,
    violation: (String) -> Void = { preconditionFailure($0) }
  ) {
    #if DEBUG
      guard depth > 0 else { return }
      violation("SessionFetcher: \(name()) called while the library holds a lock")
    #endif
  }

  #if DEBUG
    /// The locks the calling thread holds.
    package static var depth: Int {
      Int(bitPattern: pthread_getspecific(key))
    }

    static func acquired() { pthread_setspecific(key, UnsafeRawPointer(bitPattern: depth + 1)) }

    static func released() { pthread_setspecific(key, UnsafeRawPointer(bitPattern: depth - 1)) }

    private static let key: pthread_key_t = {
      var key = pthread_key_t()
      pthread_key_create(&key, nil)
      return key
    }()
  #endif
}
