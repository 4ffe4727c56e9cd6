import Dispatch

/// Makes the queue one fetch's callbacks go through: serial, whatever the caller's queue is.
///
/// A fetcher's ``SessionFetcher/callbackQueue`` may be a concurrent queue, where blocks queued one
/// after the other can run at the same time and finish in any order: a progress block could then
/// still run after the completion handler. A serial queue that targets the caller's queue runs the
/// fetch's blocks there, one at a time, in the order they were queued, while blocks of other fetches
/// (or of the caller) still run concurrently beside them.
///
/// A fetch whose completion was delivered gives its queue back (``reuse(_:targeting:)``), and the
/// next fetch to the same queue takes it instead of making one: nothing of the first fetch runs on
/// it after that but blocks that find the fetch over and return. A queue is given to one fetch at a
/// time; a few are kept (``IdleQueues/limit``), each holding the caller's queue it targets.
package enum SerialCallbackQueue {
  /// A serial queue targeting `queue`, or the main queue itself (already serial: callbacks queued
  /// on it directly keep the behaviour of the run-loop waits on the main thread).
  package static func make(targeting queue: DispatchQueue) -> DispatchQueue {
    if let kept = idle.withLock({ $0.take(targeting: queue) }) { return kept }
    if CallbackQueueMark.isMain(queue) { return queue }
    return DispatchQueue(label: "SessionFetcher.callbacks", target: queue)
  }

  /// Takes back `serial`, made by ``make(targeting:)`` for `target`, from a fetch that will queue
  /// nothing more on it. Call once per fetch.
  package static func reuse(_ serial: DispatchQueue, targeting target: DispatchQueue) {
    guard serial !== target else { return }
    idle.withLock { $0.keep(serial, targeting: target) }
  }

  private static let idle = Locked(IdleQueues())

  /// The serial queues no fetch has, with the queue each targets, the last kept last.
  package struct IdleQueues {
    /// The most queues kept (each holds its target alive).
    package static let limit = 8
    private(set) var entries: [(target: DispatchQueue, serial: DispatchQueue)] = []

    package init() {}

    /// The queue kept last for `target`, taken out; nil when none is kept.
    package mutating func take(targeting target: DispatchQueue) -> DispatchQueue? {
      guard let index = entries.lastIndex(where: { $0.target === target }) else { return nil }
      return entries.remove(at: index).serial
    }

    /// Keeps `serial`, dropping the one kept first when ``limit`` are kept already.
    package mutating func keep(_ serial: DispatchQueue, targeting target: DispatchQueue) {
      if entries.count >= Self.limit { entries.removeFirst() }
      entries.append((target: target, serial: serial))
    }

    /// How many queues are kept.
    package var count: Int { entries.count }
  }
}
