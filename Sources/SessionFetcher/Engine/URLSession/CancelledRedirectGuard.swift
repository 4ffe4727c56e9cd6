import Foundation

/// Keeps a redirect's answer from reaching a URLSession task that has been cancelled.
///
/// FoundationNetworking (Swift 6.3) asks the delegate whether to follow a redirect from its work
/// queue, and takes the answer back on that queue; meanwhile the task waits in a state of its own.
/// A cancellation that reaches the work queue first moves the task out of that state, and the
/// answer arriving after it kills the process (`fatalError("Received callback for HTTP redirection,
/// but we're not waiting for it")` in `_HTTPURLProtocol.didCompleteRedirectCallback`). The fetcher
/// cancels tasks at any moment (a timeout, a stop, an unwritable download), and the delegate's
/// answer can wait for seconds behind a busy delegate queue, so the two meet.
///
/// Every URLSession task the library cancels is marked first (``mark(_:)``, then `cancel()`), and
/// a session cancelled whole is marked (``markSession(_:)``, then `invalidateAndCancel()`); the
/// delegate gives its answer through ``answer(_:session:_:)``, only to a task that is not marked,
/// under the same lock. So an answer is queued on the work queue before the cancellation, or not at
/// all; a task left without an answer is ended by its cancellation.
///
/// One gate serves the process (``URLSessionDelegateRouter/redirectGate``); it is generic over the task's
/// type so that its bookkeeping can be tested without URLSession.
package final class CancelledRedirectGuard<Task: AnyObject>: @unchecked Sendable {
  // `@unchecked Sendable`: `state` is only touched under its lock; `sweepAt` is immutable.
  private struct MarkedTask {
    weak var task: Task?
  }

  private struct State {
    /// Tasks cancelled by the library, until their completion is reported. Weak, and checked by
    /// identity: an identifier is never mistaken for a later task's.
    var tasks: [ObjectIdentifier: MarkedTask] = [:]
    /// Sessions (by their delegates) invalidated with their tasks cancelled; a delegate is removed
    /// when it is released, so an identifier is never a later one's.
    var cancelledSessions: Set<ObjectIdentifier> = []
  }

  private let state = Locked(State())
  private let sweepAt: Int

  /// A gate that sweeps the marks of released tasks whenever it holds `sweepAt` marks (a task marked
  /// after its completion was reported keeps its mark until then).
  package init(sweepAt: Int = 1024) {
    self.sweepAt = sweepAt
  }

  /// Marks `task` as cancelled by the library: from now on no redirect answer reaches it. Its
  /// `cancel()` must follow (it may come later, from a queue of the library's: marking at once
  /// keeps an answer from slipping in while the cancellation waits for FoundationNetworking).
  package func mark(_ task: Task) {
    state.withLock { state in
      if state.tasks.count >= sweepAt { state.tasks = state.tasks.filter { $0.value.task != nil } }
      state.tasks[ObjectIdentifier(task)] = MarkedTask(task: task)
    }
  }

  /// Marks every task of the session whose delegate is `session`: its `invalidateAndCancel()` must
  /// follow.
  package func markSession(_ session: AnyObject) {
    state.withLock { _ = $0.cancelledSessions.insert(ObjectIdentifier(session)) }
  }

  /// Calls `give` (which hands the answer to FoundationNetworking) unless the library has cancelled
  /// `task` or its session (named by its delegate).
  package func answer(_ task: Task, session: AnyObject, _ give: () -> Void) {
    state.withLock { state in
      guard !state.cancelledSessions.contains(ObjectIdentifier(session)),
        state.tasks[ObjectIdentifier(task)]?.task !== task
      else { return }
      // Under the lock: a cancellation marked after this waits, and reaches the work queue after the
      // answer (`give` only queues it there).
      give()
    }
  }

  /// `task` reported its completion: it needs no mark any more.
  package func completed(_ task: Task) {
    state.withLock { state in
      if state.tasks[ObjectIdentifier(task)]?.task === task { state.tasks[ObjectIdentifier(task)] = nil }
    }
  }

  /// The session whose delegate is `session` is gone (called from the delegate's `deinit`).
  package func released(_ session: ObjectIdentifier) {
    state.withLock { _ = $0.cancelledSessions.remove(session) }
  }

  /// The number of tasks marked.
  package var markedCount: Int { state.withLock { $0.tasks.count } }
}
