import Foundation

// A failed attempt: refresh the authorization, retry after a delay, ask `retryBlock`, or finish.
extension SessionFetcher {
  /// The result of one attempt, before the retry decision.
  struct AttemptFailure {
    var error: any Error
    var response: HTTPURLResponse?
    var data: Data?

    /// The HTTP status the attempt failed with: that of a `.status` error (a final response, a
    /// refused redirect, a stream window answered with an error), nil for any other failure.
    var statusCode: Int? { (error as? SessionFetcherError)?.statusCode }
  }

  /// An attempt failed before reaching the server (body unavailable, session gone).
  func attemptFailed(error: any Error) {
    attemptFailed(AttemptFailure(error: error))
  }

  /// Decides what follows a failed attempt (`RetryDecision`) and does it.
  func attemptFailed(_ failure: AttemptFailure) {
    let context = storage.withLock { $0.retryContext(for: failure, at: Date()) }
    guard let context else { return }
    discardPartFile()
    switch RetryDecision.decide(context.input) {
    case .refreshAuthorization:
      guard let authorizer = context.authorizer else { return finishFailed(failure) }
      storage.withLock { $0.run.didRefreshAuthorization = true }
      Task {
        LockAudit.userBlock("the authorizer's primeForRefresh")
        if await authorizer.primeForRefresh() {
          self.retryNow()
        } else {
          self.finishFailed(failure)
        }
      }
    case .finish:
      finishFailed(failure)
    case .retry(let delay):
      retry(after: delay, failure: failure)
    case .askRetryBlock(let suggested, let delay):
      guard let block = context.block else { return finishFailed(failure) }
      deliver(on: context.queue) {
        LockAudit.userBlock("retryBlock")
        block(suggested, failure.error) { shouldRetry in
          if shouldRetry {
            self.retry(after: delay, failure: failure)
          } else {
            self.finishFailed(failure)
          }
        }
      }
    }
  }

  /// Deletes the attempt's part file, or keeps it for the next attempt to continue with a range
  /// request when the server takes ranges (see `DownloadResume`).
  private func discardPartFile() {
    let cleanup = storage.withLock { storage in
      StreamWindows.endDownloadWindows(&storage)
      return DownloadResume.park(&storage)
    }
    cleanup.perform()
  }

  private func finishFailed(_ failure: AttemptFailure) {
    finish(data: failure.data, error: failure.error)
  }

  /// Ends the attempt and waits `delay` before the next one.
  private func retry(after delay: TimeInterval, failure: AttemptFailure) {
    guard let ended = storage.withLock({ $0.attemptEndedForRetry(after: delay) }) else { return }
    let (postStopped, queue, retryCount) = (ended.postStopped, ended.queue, ended.retryCount)
    for monitor in allMonitors() { monitor.fetcher(self, willRetryAfter: delay, error: failure.error) }
    if postStopped { post(.sessionFetcherStopped, on: queue) }
    post(.sessionFetcherRetryDelayStarted, on: queue)
    serviceHooks?.fetcher(self, isWaitingToRetry: true)
    // Armed after the notifications, so that a short delay cannot end before they are posted; kept
    // only if this is still the wait it was armed for (a stop, or a delay that already ended, in
    // between: let go of at once).
    let wait = RetryDelay(seconds: delay, on: ended.clock) { [weak self] in self?.retryDelayEnded() }
    let kept = storage.withLock { storage in
      storage.run.timing.retryCount == retryCount && storage.lifecycle.retryDelayArmed(wait)
    }
    if !kept { wait.cancel(on: ended.clock) }
  }

  private func retryDelayEnded() {
    let queue: DispatchQueue? = storage.withLock { storage in
      guard storage.lifecycle.retryDelayEnded() == .startAttempt, let plan = storage.plan else { return nil }
      storage.run.timing.retryCount += 1
      return plan.callbackQueue
    }
    guard let queue else { return }
    post(.sessionFetcherRetryDelayStopped, on: queue)
    serviceHooks?.fetcher(self, isWaitingToRetry: false)
    startAttempt()
  }

  /// Cuts a pending retry delay short (the service's early retry after a success on the same host).
  package func retryImmediatelyIfWaiting() {
    let (wait, clock) = storage.withLock { ($0.lifecycle.pendingRetryDelay, $0.clock) }
    // Whoever cancels a pending wait ends it: the clock's wake, if it lost the race, never runs.
    guard let wait, wait.cancel(on: clock) else { return }
    retryDelayEnded()
  }

  /// An authorization refresh: a new attempt at once, without a delay.
  private func retryNow() {
    guard let ended = storage.withLock({ $0.attemptEndedForImmediateRetry() }) else { return }
    if ended.postStopped { post(.sessionFetcherStopped, on: ended.queue) }
    startAttempt()
  }
}

/// What the retry decision reads, and what acting on it needs, taken under the fetcher's lock by
/// `FetcherStorage.retryContext(for:at:)`.
struct RetryContext {
  var input: RetryDecision.Input
  var authorizer: (any FetcherAuthorizer)?
  var block: SessionFetcher.RetryBlock?
  var queue: DispatchQueue
}

/// An attempt that ended to be tried again, decided under the fetcher's lock by
/// `FetcherStorage.attemptEndedForRetry(after:)` or `.attemptEndedForImmediateRetry()`.
struct AttemptEndAction {
  /// Post Stopped: the attempt's Started was posted.
  var postStopped: Bool
  /// The fetch's callback queue.
  var queue: DispatchQueue
  /// The retry count once the attempt ended (a delay's wait is kept only while it is unchanged).
  var retryCount: Int
  /// Where the retry's wait is armed: the fetch's clock.
  var clock: any FetchClock
}

extension FetcherStorage {
  /// The retry decision's input for `failure` at `now`, with the backoff made on the first failure:
  /// nil when the fetch is not under way (stopped meanwhile).
  mutating func retryContext(for failure: SessionFetcher.AttemptFailure, at now: Date) -> RetryContext? {
    guard lifecycle.isFetching, let plan else { return nil }
    let run = lifecycle.run
    let backoff =
      run.backoff
      ?? RetryBackoff(
        minInterval: config.effectiveMinRetryInterval, maxInterval: config.effectiveMaxRetryInterval,
        factor: config.retryFactor)
    run.backoff = backoff
    let authorizer = plan.authorization?.authorizer
    let input = RetryDecision.Input(
      statusCode: failure.statusCode, error: failure.error,
      retryAfter: failure.response?.value(forHTTPHeaderField: "Retry-After"),
      method: (plan.baseRequest.httpMethod ?? "GET").uppercased(),
      receivedPartialBody: lifecycle.exchange?.receivedPartialBody ?? false,
      isRetryEnabled: config.isRetryEnabled,
      canRefreshAuthorization: authorizer != nil && !run.didRefreshAuthorization,
      streamHoldsBody: !StreamWindows.allowsRetry(after: failure.error, storage: self),
      retriesLeft: config.maxRetryCount.map { run.timing.retryCount < $0 } ?? true,
      hasRetryBlock: config.retryBlock != nil, backoff: backoff,
      elapsed: now.timeIntervalSince(run.timing.startDate ?? now), now: now)
    return RetryContext(
      input: input, authorizer: authorizer, block: config.retryBlock, queue: plan.callbackQueue)
  }

  /// The attempt failed and is tried again after `delay`: nil when it was not running (stopped
  /// meanwhile).
  mutating func attemptEndedForRetry(after delay: TimeInterval) -> AttemptEndAction? {
    guard let plan, case .scheduleRetry(let postStopped) = lifecycle.attemptEndedForRetry() else {
      return nil
    }
    run.backoff?.recordRetry(after: delay)
    return AttemptEndAction(
      postStopped: postStopped, queue: plan.callbackQueue, retryCount: run.timing.retryCount,
      clock: plan.clock)
  }

  /// The attempt failed and is tried again at once (an authorization refresh): nil when it was not
  /// running.
  mutating func attemptEndedForImmediateRetry() -> AttemptEndAction? {
    guard let plan, case .retryNow(let postStopped) = lifecycle.attemptEndedForImmediateRetry() else {
      return nil
    }
    run.timing.retryCount += 1
    return AttemptEndAction(
      postStopped: postStopped, queue: plan.callbackQueue, retryCount: run.timing.retryCount,
      clock: plan.clock)
  }
}
