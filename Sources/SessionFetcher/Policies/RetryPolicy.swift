import Foundation

/// Which failures are worth another attempt, and when the next attempt may start.
///
/// Pure logic: the fetcher feeds it the outcome of an attempt and the time, and acts on the answer.
package enum RetryPolicy {
  /// Statuses retried for idempotent requests.
  package static let retryableStatuses: Set<Int> = [408, 429, 502, 503, 504]
  /// Statuses that prove a non-idempotent request was not processed.
  package static let unprocessedStatuses: Set<Int> = [408, 429, 503]
  /// Statuses whose `Retry-After` header replaces the computed delay.
  package static let retryAfterStatuses: Set<Int> = [429, 503]
  /// The `userInfo` key an engine sets (to `true`) on an error it reports after sending the request
  /// again on its own: such an error is not retried again (each retry would be multiplied by the
  /// engine's).
  package static let retriedByTransportKey = "SessionFetcherRetriedByTransport"

  /// The methods RFC 9110 calls idempotent; others (POST, PATCH, …) are retried only when the
  /// failure proves the server did not process the request.
  package static func isIdempotent(_ method: String) -> Bool {
    ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(method.uppercased())
  }

  /// The transport error codes that mean "try again": Apple's names, and the `-1` libcurl-based
  /// FoundationNetworking reports for some of the same conditions, for an error that did not come
  /// through an engine (the engines give Apple's codes, see the Engines article).
  ///
  /// `.badServerResponse` is not retried: it is an answer that is not HTTP (or one the request
  /// could not have asked for), which another attempt would get again. A connection closed before
  /// any answer is `.networkConnectionLost` on every engine.
  package static func isTransientTransportError(_ error: URLError, receivedPartialBody: Bool) -> Bool {
    // libcurl sent the request again itself before it gave up (an HTTP/2 stream refused each
    // time): a retry here would be multiplied by libcurl's own.
    if error.userInfo[retriedByTransportKey] as? Bool == true { return false }
    switch error.code {
    case .timedOut, .networkConnectionLost, .cannotConnectToHost:
      return true
    case .unknown:
      // FoundationNetworking: "transfer closed with N bytes remaining to read" is -1; a TLS
      // handshake failure is -1 too, and is not retried.
      return receivedPartialBody || mentions(error, "transfer closed") || isRefusedConnection(error)
        || isResetConnection(error)
    default:
      return false
    }
  }

  /// Whether FoundationNetworking's `-1` is libcurl's "Couldn't connect to server" (CURLE_COULDNT_CONNECT:
  /// a refused or reset connection attempt, so the request was never sent). FoundationNetworking
  /// reports it as `.unknown`, not `.cannotConnectToHost`, when the connection is refused or reset
  /// right after it was accepted (a server restarting behind a proxy, found by the network soak).
  package static func isRefusedConnection(_ error: URLError) -> Bool {
    error.code == .unknown
      && (mentions(error, "Couldn't connect to server") || mentions(error, "Failed to connect"))
  }

  /// Whether FoundationNetworking's `-1` is a connection reset or broken while the request or the
  /// response head was under way ("Recv failure: Connection reset by peer", "Send failure: Broken
  /// pipe"): the connection was lost, which is retried for idempotent requests.
  package static func isResetConnection(_ error: URLError) -> Bool {
    error.code == .unknown && (mentions(error, "Recv failure") || mentions(error, "Send failure"))
  }

  private static func mentions(_ error: URLError, _ text: String) -> Bool {
    error.localizedDescription.contains(text) || String(describing: error).contains(text)
  }

  /// The default suggestion for `retryBlock`: whether this failure is worth retrying.
  package static func isRetryable(
    statusCode: Int?, error: Error?, method: String, receivedPartialBody: Bool = false
  ) -> Bool {
    let idempotent = isIdempotent(method)
    if let statusCode, statusCode >= 300 {
      return idempotent ? retryableStatuses.contains(statusCode) : unprocessedStatuses.contains(statusCode)
    }
    guard let urlError = error as? URLError else { return false }
    if !idempotent { return urlError.code == .cannotConnectToHost || isRefusedConnection(urlError) }
    return isTransientTransportError(urlError, receivedPartialBody: receivedPartialBody)
  }

  /// The delay a `Retry-After` value asks for: delta-seconds or an HTTP date; `nil` if malformed.
  package static func retryAfterDelay(_ value: String, now: Date = Date()) -> TimeInterval? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    if let seconds = Int(trimmed) { return seconds >= 0 ? TimeInterval(seconds) : nil }
    guard let date = HTTPDate.parse(trimmed) else { return nil }
    return max(0, date.timeIntervalSince(now))
  }
}

/// The exponential backoff of a fetcher's retries (the original's rules).
///
/// The first delay is `minInterval`; each next one is the previous times `factor`, capped by
/// `maxInterval`. Retrying ends once the next delay would reach the cap, or once three times the cap
/// has passed since the first attempt.
package struct RetryBackoff: Sendable, Equatable {
  package var minInterval: TimeInterval
  package var maxInterval: TimeInterval
  package var factor: Double
  /// The delay used before the latest retry, 0 before any.
  package private(set) var lastInterval: TimeInterval = 0

  package init(minInterval: TimeInterval, maxInterval: TimeInterval, factor: Double) {
    self.minInterval = minInterval
    self.maxInterval = maxInterval
    self.factor = factor
  }

  /// The delay the next retry would wait.
  package var nextInterval: TimeInterval {
    max(min(lastInterval * factor, maxInterval), minInterval)
  }

  /// The delay before the next retry when the server asked for `serverDelay` (its `Retry-After`;
  /// nil: it did not): the larger of that and the backoff's own ``nextInterval``, so a server can
  /// lengthen the wait but never shorten it (`Retry-After: 0` on every answer would otherwise retry
  /// at once, again and again, until the retry window closes). `isServers` tells that the server's
  /// delay won, which lets the retry go past the backoff's cap (see ``allowsRetry(elapsedSinceFirstAttempt:hasRetryAfter:)``).
  package func delay(serverDelay: TimeInterval?) -> (interval: TimeInterval, isServers: Bool) {
    let own = nextInterval
    guard let serverDelay, serverDelay > own else { return (own, false) }
    return (serverDelay, true)
  }

  /// Whether another retry may be attempted, given the time since the first attempt began.
  /// A server-given `Retry-After` skips the "next delay reaches the cap" rule.
  package func allowsRetry(elapsedSinceFirstAttempt elapsed: TimeInterval, hasRetryAfter: Bool) -> Bool {
    if !hasRetryAfter && nextInterval >= maxInterval { return false }
    return elapsed <= 3 * maxInterval
  }

  /// Records that a retry is about to wait `interval` (the computed one, or a `Retry-After`).
  package mutating func recordRetry(after interval: TimeInterval) {
    lastInterval = interval
  }
}
