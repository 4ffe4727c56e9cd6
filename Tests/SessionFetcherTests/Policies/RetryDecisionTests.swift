import Foundation
import Testing

@testable import SessionFetcher

/// `RetryDecision`: what follows a failed attempt, one row per rule (the scripted engine's
/// `ScriptedRetryTests` check that the fetcher acts on each answer).
@Suite("Retry decision")
struct RetryDecisionTests {
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var status: Int? = nil
    var urlError: URLError.Code? = nil
    var retriedByTransport = false
    var retryAfter: String? = nil
    var method = "GET"
    var partial = false
    var enabled = true
    var canRefresh = false
    var streamHoldsBody = false
    var retriesLeft = true
    var block = false
    /// The backoff's delay before the latest retry (0: none yet); min 1 s, max 60 s, factor 2.
    var lastInterval: TimeInterval = 0
    var elapsed: TimeInterval = 0
    var expected: RetryDecision.Action
    var testDescription: String { "\(name) → \(expected)" }
  }

  /// Fri, 15 Jan 2027 08:00:00 GMT.
  static let now = Date(timeIntervalSince1970: 1_800_000_000)

  static let rows: [Row] = [
    Row(name: "503 on a GET", status: 503, expected: .retry(after: 1)),
    Row(name: "retries off", status: 503, enabled: false, expected: .finish),
    Row(name: "maxRetryCount reached", status: 503, retriesLeft: false, expected: .finish),
    Row(
      name: "a stream consumer holds part of the body", status: 503, streamHoldsBody: true, expected: .finish),
    Row(name: "500 is not retried", status: 500, expected: .finish),
    Row(name: "404 is not retried", status: 404, expected: .finish),
    Row(name: "502 on a POST may have been processed", status: 502, method: "POST", expected: .finish),
    Row(name: "503 on a POST was not processed", status: 503, method: "POST", expected: .retry(after: 1)),
    Row(name: "timeout on a GET", urlError: .timedOut, expected: .retry(after: 1)),
    Row(name: "timeout on a POST", urlError: .timedOut, method: "POST", expected: .finish),
    Row(
      name: "refused connection on a POST", urlError: .cannotConnectToHost, method: "POST",
      expected: .retry(after: 1)),
    Row(
      name: "not HTTP: another attempt would get it again", urlError: .badServerResponse, expected: .finish),
    Row(name: "truncated body reported as -1", urlError: .unknown, partial: true, expected: .retry(after: 1)),
    Row(
      name: "the engine already sent it again", urlError: .networkConnectionLost, retriedByTransport: true,
      expected: .finish),
    // Retry-After lengthens the delay, never shortens it.
    Row(name: "Retry-After: 0", status: 503, retryAfter: "0", expected: .retry(after: 1)),
    Row(
      name: "Retry-After: 0 after a 4 s delay", status: 503, retryAfter: "0", lastInterval: 4,
      expected: .retry(after: 8)),
    Row(name: "Retry-After: 5", status: 429, retryAfter: "5", expected: .retry(after: 5)),
    Row(
      name: "Retry-After as an HTTP date 10 s ahead", status: 503,
      retryAfter: "Fri, 15 Jan 2027 08:00:10 GMT", expected: .retry(after: 10)),
    Row(name: "Retry-After that does not parse", status: 503, retryAfter: "soon", expected: .retry(after: 1)),
    Row(name: "Retry-After on a 502 is not read", status: 502, retryAfter: "30", expected: .retry(after: 1)),
    Row(name: "Retry-After past the longest delay", status: 503, retryAfter: "61", expected: .finish),
    // The backoff's window.
    Row(name: "the next delay reaches the cap", status: 503, lastInterval: 30, expected: .finish),
    Row(
      name: "a Retry-After at the cap does not pass it", status: 503, retryAfter: "60", lastInterval: 30,
      expected: .finish),
    Row(name: "three times the cap since the first attempt", status: 503, elapsed: 181, expected: .finish),
    Row(name: "just inside the window", status: 503, elapsed: 180, expected: .retry(after: 1)),
    // The retry block decides, with the library's suggestion, inside the window only.
    Row(
      name: "block asked about a 503", status: 503, block: true,
      expected: .askRetryBlock(suggested: true, delay: 1)),
    Row(
      name: "block asked about a 500", status: 500, block: true,
      expected: .askRetryBlock(suggested: false, delay: 1)),
    Row(
      name: "block not asked with retries off", status: 500, enabled: false, block: true, expected: .finish),
    Row(name: "block not asked past the window", status: 503, block: true, elapsed: 181, expected: .finish),
    // A 401 refreshes the authorizer once, before any retry rule.
    Row(name: "401 with an authorizer", status: 401, canRefresh: true, expected: .refreshAuthorization),
    Row(
      name: "401 with an authorizer, retries off", status: 401, enabled: false, canRefresh: true,
      expected: .refreshAuthorization),
    Row(name: "401 after the refresh", status: 401, expected: .finish),
    Row(name: "403 with an authorizer", status: 403, canRefresh: true, expected: .finish),
  ]

  @Test(arguments: rows)
  func decision(_ row: Row) {
    var backoff = RetryBackoff(minInterval: 1, maxInterval: 60, factor: 2)
    if row.lastInterval > 0 { backoff.recordRetry(after: row.lastInterval) }
    let error: any Error
    if let code = row.urlError {
      error = URLError(
        code, userInfo: row.retriedByTransport ? [RetryPolicy.retriedByTransportKey: true] : [:])
    } else {
      error = SessionFetcherError.status(code: row.status ?? 0, data: nil)
    }
    let input = RetryDecision.Input(
      statusCode: row.status, error: error, retryAfter: row.retryAfter, method: row.method,
      receivedPartialBody: row.partial, isRetryEnabled: row.enabled, canRefreshAuthorization: row.canRefresh,
      streamHoldsBody: row.streamHoldsBody, retriesLeft: row.retriesLeft, hasRetryBlock: row.block,
      backoff: backoff, elapsed: row.elapsed, now: Self.now)
    #expect(RetryDecision.decide(input) == row.expected)
  }
}
