import Dispatch

/// Makes the queue one fetch's callbacks go through: serial, whatever the caller's queue is.
///
/// A fetcher's ``SessionFetcher/callbackQueue`` may be a concurrent queue, where blocks queued one
/// after the other can run at the same time and finish in any order: a progress block could then
/// still run after the completion handler. A serial queue that targets the caller's queue runs the
/// fetch's blocks there, one at a time, in the order they were queued, while blocks of other fetches
/// (or of the caller) still run concurrently beside them.
package enum SerialCallbackQueue {
  /// A serial queue targeting `queue`, or the main queue itself (already serial: callbacks queued
  /// on it directly keep the behaviour of the run-loop waits on the main thread).
  package static func make(targeting queue: DispatchQueue) -> DispatchQueue {
    if CallbackQueueMark.isMain(queue) { return queue }
    return DispatchQueue(label: "SessionFetcher.callbacks", target: queue)
  }
}
