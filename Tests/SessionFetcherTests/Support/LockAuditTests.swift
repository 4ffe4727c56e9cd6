import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// The debug builds' check behind "no user block runs while the library holds a lock": a block
/// called with one of the library's locks held is reported by name; one called with none is not.
@Suite("Lock audit")
struct LockAuditTests {
  struct Failure: Error {}

  #if DEBUG
    @Test func aBlockCalledUnderALockIsReportedByName() {
      let reports = Recorder<String>()
      let lock = Locked(0)
      lock.withLock { _ in LockAudit.userBlock("retryBlock", violation: { reports.append($0) }) }
      #expect(reports.values == ["SessionFetcher: retryBlock called while the library holds a lock"])
    }

    @Test func aBlockCalledWithNoLockHeldIsNotReported() throws {
      let reports = Recorder<String>()
      let outer = Locked(0)
      let inner = Locked(0)
      LockAudit.userBlock("before any lock", violation: { reports.append($0) })
      outer.withLock { _ in inner.withLock { _ in } }
      LockAudit.userBlock("after two nested locks", violation: { reports.append($0) })
      #expect(throws: Failure.self) { try outer.withLock { _ in throw Failure() } }
      LockAudit.userBlock("after a lock whose body threw", violation: { reports.append($0) })
      #expect(reports.values.isEmpty)
      #expect(LockAudit.depth == 0)
    }

    /// The count is per thread: a lock held on one thread does not count on another.
    @Test func anotherThreadsLockDoesNotCount() async {
      let reports = Recorder<String>()
      let lock = Locked(0)
      let held = DispatchSemaphore(value: 0)
      let release = DispatchSemaphore(value: 0)
      Thread.detachNewThread {
        lock.withLock { _ in
          held.signal()
          release.wait()
        }
      }
      held.wait()
      LockAudit.userBlock("a block on this thread", violation: { reports.append($0) })
      release.signal()
      #expect(reports.values.isEmpty)
    }
  #endif
}
