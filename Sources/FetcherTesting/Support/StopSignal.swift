import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A one-shot "the server is stopping" signal that every blocked server thread can wait on.
///
/// It is a pipe that nobody reads: once ``fire()`` writes a byte, the read end stays readable
/// forever, so any number of `poll(2)` calls that include ``readDescriptor`` wake up, now and
/// later, without each waiter having to be found and interrupted.
final class StopSignal: Sendable {
  /// Polled (for `POLLIN`) next to a socket by every blocking wait in the server.
  let readDescriptor: Int32
  private let writeDescriptor: Int32
  /// Protects nothing but the flag that makes ``fire()`` idempotent.
  private let fired = LockedState(false)

  init() throws {
    guard let pipe = POSIX.makePipe() else {
      throw TestServerError.systemCall("pipe", POSIX.errorNumber)
    }
    readDescriptor = pipe.read
    writeDescriptor = pipe.write
  }

  deinit {
    // Only reached once no server thread holds the signal any more, so no poll can still use it.
    POSIX.closeDescriptor(readDescriptor)
    POSIX.closeDescriptor(writeDescriptor)
  }

  /// Whether ``fire()`` has been called.
  var isFired: Bool { fired.withLock { $0 } }

  /// Wakes every current and future waiter. Idempotent.
  func fire() {
    let first = fired.withLock { value -> Bool in
      defer { value = true }
      return !value
    }
    guard first else { return }
    var byte: UInt8 = 1
    _ = write(writeDescriptor, &byte, 1)
  }

  /// Sleeps for `seconds` unless the signal fires first.
  ///
  /// - Returns: `true` when the whole time passed, `false` when the server is stopping.
  func sleep(seconds: Double) -> Bool {
    let deadline = Date().addingTimeInterval(max(0, seconds))
    while true {
      let remaining = deadline.timeIntervalSinceNow
      if remaining <= 0 { return !isFired }
      var descriptor = pollfd(fd: readDescriptor, events: Int16(POLLIN), revents: 0)
      let result = poll(&descriptor, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
      if result > 0 { return false }
      if result < 0 && POSIX.errorNumber != EINTR { return !isFired }
    }
  }
}
