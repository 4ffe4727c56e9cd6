import Foundation

/// What follows a failed attempt: value in, action out, no lock and no I/O.
///
/// The fetcher reads an ``Input`` under its lock (`FetcherStorage.retryInput(for:)`), decides here,
/// and performs the ``Action`` after the lock (`SessionFetcher.attemptFailed(_:)`). The rules, in
/// order:
/// 1. A 401 with an authorizer that has not refreshed in this fetch: refresh it and try again at
///    once (whether or not retries are on, as GTMSessionFetcher does).
/// 2. Retries off, a stream consumer already holding part of the body, or `maxRetryCount` reached:
///    finish.
/// 3. A `Retry-After` (on 429 or 503) longer than the longest delay the backoff accepts: finish.
/// 4. The delay is the larger of the backoff's next one and the server's `Retry-After`; past the
///    backoff's window (its next delay has reached the cap, or three times the cap has passed since
///    the first attempt): finish. A `Retry-After` cannot reopen a window whose cap is reached: it
///    would have to be longer than the cap, which rule 3 refuses.
/// 5. With a `retryBlock`: ask it, with ``RetryPolicy/isRetryable(statusCode:error:method:receivedPartialBody:)``
///    as its suggestion; without one: retry after the delay if that says so, else finish.
package enum RetryDecision {
  /// What the decision reads of the failed attempt and of the fetch.
  package struct Input {
    /// The HTTP status the attempt failed with (nil: not an HTTP status failure).
    package var statusCode: Int?
    /// The attempt's error.
    package var error: any Error
    /// The failed response's `Retry-After` value, if it had one.
    package var retryAfter: String?
    /// The request's method, upper-cased.
    package var method: String
    /// Whether part of the response body arrived before the failure.
    package var receivedPartialBody: Bool
    /// ``SessionFetcher/isRetryEnabled``.
    package var isRetryEnabled: Bool
    /// The fetch has an authorizer that has not refreshed yet.
    package var canRefreshAuthorization: Bool
    /// A stream consumer holds part of the body, and the failure cannot be continued with a Range
    /// window after it (see `StreamWindows.allowsRetry`): another attempt would deliver it twice.
    package var streamHoldsBody: Bool
    /// ``SessionFetcher/maxRetryCount`` is not reached.
    package var retriesLeft: Bool
    /// The fetch has a ``SessionFetcher/retryBlock``.
    package var hasRetryBlock: Bool
    /// The fetch's backoff, with the delay of its latest retry.
    package var backoff: RetryBackoff
    /// Seconds since the first attempt began.
    package var elapsed: TimeInterval
    /// The time an HTTP-date `Retry-After` is counted from.
    package var now: Date

    package init(
      statusCode: Int?, error: any Error, retryAfter: String? = nil, method: String = "GET",
      receivedPartialBody: Bool = false, isRetryEnabled: Bool = true, canRefreshAuthorization: Bool = false,
      streamHoldsBody: Bool = false, retriesLeft: Bool = true, hasRetryBlock: Bool = false,
      backoff: RetryBackoff, elapsed: TimeInterval = 0, now: Date = Date()
    ) {
      self.statusCode = statusCode
      self.error = error
      self.retryAfter = retryAfter
      self.method = method
      self.receivedPartialBody = receivedPartialBody
      self.isRetryEnabled = isRetryEnabled
      self.canRefreshAuthorization = canRefreshAuthorization
      self.streamHoldsBody = streamHoldsBody
      self.retriesLeft = retriesLeft
      self.hasRetryBlock = hasRetryBlock
      self.backoff = backoff
      self.elapsed = elapsed
      self.now = now
    }
  }

  /// What the fetcher does after the lock.
  package enum Action: Equatable, Sendable {
    /// Ask the authorizer to refresh; try again at once if it did, else finish.
    case refreshAuthorization
    /// End the fetch with the attempt's failure.
    case finish
    /// End the attempt and try again after `after` seconds.
    case retry(after: TimeInterval)
    /// Ask the retry block, with the library's suggestion; retry after `delay` if it says so.
    case askRetryBlock(suggested: Bool, delay: TimeInterval)
  }

  package static func decide(_ input: Input) -> Action {
    if input.statusCode == 401, input.canRefreshAuthorization { return .refreshAuthorization }
    guard input.isRetryEnabled, !input.streamHoldsBody, input.retriesLeft else { return .finish }
    var serverDelay: TimeInterval?
    if let status = input.statusCode, RetryPolicy.retryAfterStatuses.contains(status),
      let value = input.retryAfter
    {
      serverDelay = RetryPolicy.retryAfterDelay(value, now: input.now)
      // A server asking for more than the longest delay accepted ends the retries.
      if let serverDelay, serverDelay > input.backoff.maxInterval { return .finish }
    }
    // The server may lengthen the backoff's delay, never shorten it.
    let (delay, isServers) = input.backoff.delay(serverDelay: serverDelay)
    guard input.backoff.allowsRetry(elapsedSinceFirstAttempt: input.elapsed, hasRetryAfter: isServers) else {
      return .finish
    }
    let suggested = RetryPolicy.isRetryable(
      statusCode: input.statusCode, error: input.error, method: input.method,
      receivedPartialBody: input.receivedPartialBody)
    if input.hasRetryBlock { return .askRetryBlock(suggested: suggested, delay: delay) }
    return suggested ? .retry(after: delay) : .finish
  }
}
