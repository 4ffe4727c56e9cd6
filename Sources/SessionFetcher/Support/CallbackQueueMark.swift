import Dispatch
import Foundation

/// Tells whether the current code runs on a given dispatch queue, so that a blocking wait can see
/// that it holds the queue it waits for (Dispatch has no query for that, only a precondition).
///
/// A queue is marked with a number of its own under one private key the first time it is asked
/// about; `DispatchQueue.getSpecific(key:)` then reads the mark of the queue the caller runs on.
/// Marking changes nothing else about the queue. The main thread counts as the main queue even
/// outside a main-queue block, so this cannot tell a main-queue block from top-level code.
enum CallbackQueueMark {
  private static let key = DispatchSpecificKey<UInt64>()
  private static let lastMark = Locked<UInt64>(0)

  /// Whether the caller is running a block of `queue` (or of a queue that targets it and was
  /// itself marked: the nearest mark wins).
  static func isRunning(on queue: DispatchQueue) -> Bool {
    var mark = queue.getSpecific(key: key)
    if mark == nil {
      // Two first askers may mark it at once: the last write stays, and is read back below.
      let fresh = lastMark.withLock { last in
        last += 1
        return last
      }
      queue.setSpecific(key: key, value: fresh)
      mark = queue.getSpecific(key: key)
    }
    return DispatchQueue.getSpecific(key: key) == mark
  }

  /// Whether `queue` is the main queue (a `DispatchQueue.main` may be a new wrapper each time).
  static func isMain(_ queue: DispatchQueue) -> Bool {
    queue === DispatchQueue.main || queue.label == DispatchQueue.main.label
  }
}
