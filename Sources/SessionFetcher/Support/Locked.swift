import Foundation

/// A value protected by a lock.
///
/// `@unchecked Sendable`: every access to `value` goes through `withLock`, which holds `lock`.
/// In debug builds each `withLock` is counted for `LockAudit`.
package final class Locked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  // Exclusive access is what `lock` guarantees: the runtime's own check (a lookup per access, on
  // every `withLock`) would only repeat it.
  @exclusivity(unchecked) private var value: Value

  package init(_ value: Value) {
    self.value = value
  }

  @discardableResult
  package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    #if DEBUG
      LockAudit.acquired()
      defer { LockAudit.released() }
    #endif
    defer { lock.unlock() }
    return try body(&value)
  }

  package var current: Value {
    withLock { $0 }
  }
}
