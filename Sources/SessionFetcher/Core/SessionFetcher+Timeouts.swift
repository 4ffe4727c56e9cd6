import Foundation

/// The fetcher's timeouts: one clock for every fetcher, the idle timeout and the attempt's
/// deadline armed, checked and disarmed under the fetcher's lock.
extension SessionFetcher {
  /// The queue of every fetcher's timeout clock: a serial queue of its own, which libdispatch serves
  /// from its overcommitting pool, so that a program keeping the global queues busy (as many
  /// CPU-bound blocks as cores) does not hold up timeouts. Its handlers check, and end the attempts
  /// that timed out.
  static let timeoutQueue = DispatchQueue(label: "SessionFetcher.timeouts")

  /// URLSession's own timeout for a request whose fetcher times out after `idleTimeout` seconds: a
  /// backstop at least 2 s later, in whole seconds (FoundationNetworking cuts a fraction, and fires
  /// a timeout below one second at once), and at most 10^7 s (it turns the value into milliseconds
  /// in an `Int`, so an infinite one would trap).
  package static func transportTimeout(backing idleTimeout: TimeInterval) -> TimeInterval {
    let limit: TimeInterval = 10_000_000
    guard idleTimeout.isFinite else { return limit }
    return min(limit, max(1, (idleTimeout + 2).rounded(.up)))
  }

  /// The clock of every fetcher's timeouts on the real engines (``SystemFetchClock``), on
  /// ``timeoutQueue``.
  static let timeoutClock = TimeoutClock<SessionFetcher>(queue: timeoutQueue) { fetcher, token in
    fetcher.checkTimeout(token: token)
  }

  /// Arms the timeout check: the idle timeout since the last activity, and the attempt's deadline.
  func scheduleTimeout(after delay: TimeInterval) {
    storage.withLock { armTimeout(&$0, after: delay) }
  }

  /// ``scheduleTimeout(after:)`` under the fetcher's lock. Nothing is armed unless the fetch is
  /// running and its transfer is not suspended (a paused stream is not idle: it is armed again when
  /// it resumes), since the clock holds the fetcher until the check fires or is disarmed.
  func armTimeout(_ storage: inout FetcherStorage, after delay: TimeInterval) {
    Self.disarmTimeout(&storage)
    guard storage.lifecycle.phase == .running, !storage.lifecycle.current.isSuspended else { return }
    storage.run.timeoutToken = storage.clock.armTimeoutCheck(of: self, after: delay)
  }

  /// Disarms the fetcher's timeout check, if armed (under the fetcher's lock).
  static func disarmTimeout(_ storage: inout FetcherStorage) {
    let run = storage.run
    guard let token = run.timeoutToken else { return }
    run.timeoutToken = nil
    storage.clock.disarmTimeoutCheck(token)
  }

  /// Ends the attempt if it has been idle for the idle timeout or has reached its deadline, else
  /// checks again when it next could.
  ///
  /// A timed-out attempt ends here and now, without waiting for the engine: FoundationNetworking
  /// cancels a task, and reports the cancellation, through a serial work queue that every URLSession
  /// of the process shares, which falls seconds behind with many transfers in flight on a busy
  /// machine. The task is let go of
  /// first, so that nothing it still reports reaches the fetcher (see `accepts`), and cancelled
  /// after the attempt has ended.
  package func checkTimeout(token: UInt64) {
    let timedOut: (any EngineTask)?? = storage.withLock { storage in
      // A check disarmed or replaced after the clock took it out does nothing.
      let run = storage.run
      guard run.timeoutToken == token else { return nil }
      run.timeoutToken = nil
      // A hop with its task, or one whose task is still being made.
      guard storage.lifecycle.phase == .running, case let exchange = storage.lifecycle.current,
        exchange.task != nil || exchange.pendingHop != nil,
        let plan = storage.plan, !exchange.isSuspended
      else { return nil }
      let action = TimeoutDecision.decide(
        idleTimeout: plan.idleTimeout, lastActivity: exchange.lastActivity,
        resourceTimeout: plan.resourceTimeout, attemptStart: storage.attemptStart, now: plan.clock.now)
      switch action {
      case .timedOut:
        // Every other end of the attempt (a failure the fetcher decided, a pause, a stop) lets go
        // of the task under the lock that decides it, so the task here has no other reason.
        return .some(storage.lifecycle.cancelTask(.timedOut).task)
      case .checkAgain(let delay):
        // Armed again under the same lock, so that a pause or an end meanwhile cannot be missed.
        armTimeout(&storage, after: delay)
        return nil
      }
    }
    guard let timedOut else { return }
    completeHop(error: nil)
    if let task = timedOut { Self.letGo(task) }
  }
}
