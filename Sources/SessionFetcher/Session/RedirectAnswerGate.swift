import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

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
/// a session cancelled whole is marked through ``invalidateAndCancel(_:dispatcher:)``; the delegate
/// gives its answer through ``answer(_:dispatcher:_:)``, only to a task that is not marked, under
/// the same lock. So an answer is queued on the work queue before the cancellation, or not at all;
/// a task left without an answer is ended by its cancellation.
package enum RedirectAnswerGate {
  private struct MarkedTask {
    weak var task: URLSessionTask?
  }

  private struct State {
    /// Tasks cancelled by the library, until their completion is reported. Weak, and checked by
    /// identity: an identifier is never mistaken for a later task's.
    var tasks: [ObjectIdentifier: MarkedTask] = [:]
    /// Dispatchers whose sessions were invalidated with their tasks cancelled (a dispatcher
    /// removes itself when it is released, so an identifier is never a later one's).
    var cancelledSessions: Set<ObjectIdentifier> = []
  }

  private static let state = Locked(State())

  /// Marks `task` as cancelled by the library: from now on no redirect answer reaches it. Its
  /// `cancel()` must follow (it may come later, from a queue of the library's: marking at once
  /// keeps an answer from slipping in while the cancellation waits for FoundationNetworking).
  package static func mark(_ task: URLSessionTask) {
    state.withLock { state in
      if state.tasks.count >= 1024 { state.tasks = state.tasks.filter { $0.value.task != nil } }
      state.tasks[ObjectIdentifier(task)] = MarkedTask(task: task)
    }
  }

  /// Cancels every task of `session` (whose delegate is `dispatcher`) and invalidates it, so that no
  /// redirect answer can reach its tasks afterwards.
  package static func invalidateAndCancel(_ session: URLSession, dispatcher: SessionDispatcher) {
    state.withLock { _ = $0.cancelledSessions.insert(ObjectIdentifier(dispatcher)) }
    session.invalidateAndCancel()
  }

  /// Calls `give` (which hands the answer to FoundationNetworking) unless the library has cancelled
  /// `task` or its session. Returns whether it did.
  @discardableResult
  package static func answer(_ task: URLSessionTask, dispatcher: SessionDispatcher, _ give: () -> Void)
    -> Bool
  {
    state.withLock { state in
      guard !state.cancelledSessions.contains(ObjectIdentifier(dispatcher)),
        state.tasks[ObjectIdentifier(task)]?.task !== task
      else { return false }
      // Under the lock: a cancellation marked after this waits, and reaches the work queue after the
      // answer (`give` only queues it there).
      give()
      return true
    }
  }

  /// `task` reported its completion: it needs no mark any more.
  package static func completed(_ task: URLSessionTask) {
    state.withLock { state in
      if state.tasks[ObjectIdentifier(task)]?.task === task { state.tasks[ObjectIdentifier(task)] = nil }
    }
  }

  /// `dispatcher` is being released.
  package static func released(_ dispatcher: ObjectIdentifier) {
    state.withLock { _ = $0.cancelledSessions.remove(dispatcher) }
  }

  /// The number of tasks marked (for tests).
  package static var markedCount: Int { state.withLock { $0.tasks.count } }
}
