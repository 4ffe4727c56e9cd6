import Foundation

/// A value that is only ever read or written while holding its own lock.
///
/// `@unchecked Sendable` is sound because ``value`` is private and every access goes through
/// ``withLock(_:)``, which holds ``lock`` for the whole closure.
final class LockedState<Value: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) {
    self.value = value
  }

  /// Runs `body` with exclusive access to the value. Do not block or call back into the server
  /// from `body`.
  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
