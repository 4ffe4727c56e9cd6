import Dispatch
import Foundation

/// Delivers monitor work off the fetch's queues: a bounded FIFO drained by one serial queue.
///
/// A ``FetcherEventMonitor`` method runs synchronously on the fetcher's internal queue, so a logging,
/// metrics or tracing backend called there would hold up the fetch. Monitors take a snapshot of
/// what they need (cheap, no I/O) and ``submit(_:)`` the call to the backend instead. When the
/// backend falls behind by ``capacity`` items, new items are dropped and counted
/// (``droppedCount``), so a stuck backend costs bounded memory and never blocks a fetch.
package final class EventPump: @unchecked Sendable {
  private let lock = NSLock()
  private var pending: [@Sendable () -> Void] = []
  private var head = 0
  private var draining = false
  private var dropped = 0
  private let queue: DispatchQueue
  /// The most items waiting at once.
  package let capacity: Int

  /// Creates a pump whose work runs on a serial queue named `label`.
  package init(label: String, capacity: Int) {
    self.queue = DispatchQueue(label: label)
    self.capacity = max(1, capacity)
  }

  /// Items dropped because ``capacity`` items were waiting.
  package var droppedCount: Int {
    lock.lock()
    defer { lock.unlock() }
    return dropped
  }

  /// Queues `work`; returns at once. Items run one at a time, in the order submitted.
  package func submit(_ work: @escaping @Sendable () -> Void) {
    lock.lock()
    if pending.count - head >= capacity {
      dropped += 1
      lock.unlock()
      return
    }
    pending.append(work)
    let schedule = !draining
    draining = true
    lock.unlock()
    if schedule { queue.async { self.drain() } }
  }

  private func drain() {
    while true {
      lock.lock()
      if head >= pending.count {
        pending.removeAll(keepingCapacity: pending.count < 1024)
        head = 0
        draining = false
        lock.unlock()
        return
      }
      let work = pending[head]
      head += 1
      if head >= 1024 && head * 2 >= pending.count {
        pending.removeFirst(head)
        head = 0
      }
      lock.unlock()
      work()
    }
  }

  /// Returns once every item submitted before the call has run.
  package func waitUntilIdle() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      // A drain in progress runs to empty before this block; a drain scheduled later is queued
      // before it.
      queue.async { continuation.resume() }
    }
  }
}
