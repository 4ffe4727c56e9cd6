import Foundation

/// A value protected by a lock.
///
/// `@unchecked Sendable`: every access to `value` goes through `withLock`, which holds `lock`.
package final class Locked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  package init(_ value: Value) {
    self.value = value
  }

  @discardableResult
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }

  package var current: Value {
    withLock { $0 }
  }
}
