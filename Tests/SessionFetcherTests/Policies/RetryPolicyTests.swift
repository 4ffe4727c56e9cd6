import Foundation
import Testing

@testable import SessionFetcher

@Suite("Retry policy and backoff")
struct RetryPolicyTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var status: Int?
    var error: URLError.Code?
    var method: String
    var partial = false
    var retryable: Bool
    var testDescription: String {
      "\(method) status=\(status.map(String.init) ?? "-") error=\(error.map { "\($0.rawValue)" } ?? "-") → \(retryable)"
    }
  }

  static let cases: [Case] = [
    Case(status: 408, method: "GET", retryable: true),
    Case(status: 429, method: "GET", retryable: true),
    Case(status: 502, method: "GET", retryable: true),
    Case(status: 503, method: "GET", retryable: true),
    Case(status: 504, method: "GET", retryable: true),
    Case(status: 500, method: "GET", retryable: false),
    Case(status: 404, method: "GET", retryable: false),
    Case(status: 401, method: "GET", retryable: false),
    Case(status: 304, method: "GET", retryable: false),
    Case(status: 503, method: "PUT", retryable: true),
    Case(status: 502, method: "DELETE", retryable: true),
    // Non-idempotent: only failures that prove the request was not processed.
    Case(status: 408, method: "POST", retryable: true),
    Case(status: 429, method: "POST", retryable: true),
    Case(status: 503, method: "POST", retryable: true),
    Case(status: 502, method: "POST", retryable: false),
    Case(status: 504, method: "PATCH", retryable: false),
    Case(error: .cannotConnectToHost, method: "POST", retryable: true),
    Case(error: .timedOut, method: "POST", retryable: false),
    Case(error: .networkConnectionLost, method: "POST", retryable: false),
    Case(error: .timedOut, method: "GET", retryable: true),
    Case(error: .networkConnectionLost, method: "GET", retryable: true),
    Case(error: .cannotConnectToHost, method: "GET", retryable: true),
    // An answer that is not HTTP: another attempt would get it again. (FoundationNetworking's
    // -1011 for an empty reply reaches the fetcher as networkConnectionLost.)
    Case(error: .badServerResponse, method: "GET", retryable: false),
    // FoundationNetworking's -1 for a truncated body, when it did not come through an engine.

    Case(error: .unknown, method: "GET", partial: true, retryable: true),
    Case(error: .unknown, method: "GET", partial: false, retryable: false),
    Case(error: .cancelled, method: "GET", retryable: false),
    Case(error: .badURL, method: "GET", retryable: false),
  ]

  @Test(arguments: cases)
  func suggestion(_ c: Case) {
    let error: (any Error)? = c.error.map { URLError($0) }
    #expect(
      RetryPolicy.isRetryable(
        statusCode: c.status, error: error, method: c.method, receivedPartialBody: c.partial)
        == c.retryable)
  }

  @Test func transferClosedMessageIsTransient() {
    let error = URLError(
      .unknown, userInfo: [NSLocalizedDescriptionKey: "transfer closed with 99000 bytes remaining to read"])
    #expect(RetryPolicy.isRetryable(statusCode: nil, error: error, method: "GET"))
  }

  /// FoundationNetworking reports libcurl's connect and receive failures as `-1` with libcurl's
  /// text (seen in the network soak): a refused connection is retried for any method (the request
  /// was never sent), a reset one for idempotent methods only; other `-1` errors (TLS) are not.
  @Test(arguments: [
    ("Failed to connect to 127.0.0.1 port 42853 after 0 ms: Couldn't connect to server", "GET", true),
    ("Failed to connect to 127.0.0.1 port 42853 after 0 ms: Couldn't connect to server", "POST", true),
    ("Recv failure: Connection reset by peer", "GET", true),
    ("Send failure: Broken pipe", "PUT", true),
    ("Recv failure: Connection reset by peer", "POST", false),
    ("SSL certificate problem: self-signed certificate", "GET", false),
  ])
  func foundationNetworkingMinusOneMessages(message: String, method: String, retried: Bool) {
    let error = URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: message])
    #expect(RetryPolicy.isRetryable(statusCode: nil, error: error, method: method) == retried)
  }

  @Test func nonURLErrorsAreNotRetried() {
    #expect(!RetryPolicy.isRetryable(statusCode: nil, error: SessionFetcherError.cancelled, method: "GET"))
  }

  /// Runs the backoff as the fetcher does and returns the delays it waits.
  static func delays(min: TimeInterval, max: TimeInterval, factor: Double = 2) -> [TimeInterval] {
    var backoff = RetryBackoff(minInterval: min, maxInterval: max, factor: factor)
    var delays: [TimeInterval] = []
    var elapsed: TimeInterval = 0
    while backoff.allowsRetry(elapsedSinceFirstAttempt: elapsed, hasRetryAfter: false), delays.count < 100 {
      let delay = backoff.nextInterval
      delays.append(delay)
      backoff.recordRetry(after: delay)
      elapsed += delay
    }
    return delays
  }

  // The original's testRetryFetches sequences.
  @Test func backoffSequences() {
    #expect(Self.delays(min: 1, max: 5) == [1, 2, 4])
    #expect(Self.delays(min: 1, max: 10) == [1, 2, 4, 8])
    #expect(Self.delays(min: 0.1, max: 1) == [0.1, 0.2, 0.4, 0.8])
    #expect(Self.delays(min: 1, max: 60, factor: 3) == [1, 3, 9, 27])
    #expect(Self.delays(min: 5, max: 5) == [])
  }

  @Test func elapsedBeyondThreeTimesTheCapStopsRetrying() {
    let backoff = RetryBackoff(minInterval: 1, maxInterval: 10, factor: 2)
    #expect(backoff.allowsRetry(elapsedSinceFirstAttempt: 30, hasRetryAfter: false))
    #expect(!backoff.allowsRetry(elapsedSinceFirstAttempt: 30.5, hasRetryAfter: false))
    #expect(!backoff.allowsRetry(elapsedSinceFirstAttempt: 31, hasRetryAfter: true))
  }

  /// A server's `Retry-After` lengthens the backoff's delay, never shortens it.
  @Test(
    arguments: [
      (nil, 2.0, false), (0.0, 2.0, false), (1.5, 2.0, false), (2.0, 2.0, false), (2.5, 2.5, true),
      (30.0, 30.0, true),
    ] as [(Double?, Double, Bool)])
  func retryAfterNeverShortensTheBackoff(_ server: Double?, _ delay: Double, _ isServers: Bool) {
    var backoff = RetryBackoff(minInterval: 1, maxInterval: 60, factor: 2)
    backoff.recordRetry(after: 1)  // the next delay of its own is 2 s
    let next = backoff.delay(serverDelay: server)
    #expect(next.interval == delay)
    #expect(next.isServers == isServers)
  }

  @Test func retryAfterSkipsTheCapRule() {
    var backoff = RetryBackoff(minInterval: 4, maxInterval: 5, factor: 2)
    backoff.recordRetry(after: 4)
    #expect(!backoff.allowsRetry(elapsedSinceFirstAttempt: 4, hasRetryAfter: false))
    #expect(backoff.allowsRetry(elapsedSinceFirstAttempt: 4, hasRetryAfter: true))
  }

  @Test(
    arguments: [
      ("0", 0.0), ("2", 2.0), (" 120 ", 120.0), ("-1", nil), ("soon", nil), ("", nil),
    ] as [(String, Double?)])
  func retryAfterSeconds(_ value: String, _ expected: Double?) {
    #expect(RetryPolicy.retryAfterDelay(value) == expected)
  }

  @Test func retryAfterHTTPDates() throws {
    let now = try #require(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"))
    #expect(RetryPolicy.retryAfterDelay("Sun, 06 Nov 1994 08:49:47 GMT", now: now) == 10)
    #expect(RetryPolicy.retryAfterDelay("Sunday, 06-Nov-94 08:50:37 GMT", now: now) == 60)
    #expect(RetryPolicy.retryAfterDelay("Sun Nov  6 08:49:40 1994", now: now) == 3)
    // A date in the past means "now".
    #expect(RetryPolicy.retryAfterDelay("Sun, 06 Nov 1994 08:00:00 GMT", now: now) == 0)
    #expect(now == Date(timeIntervalSince1970: 784_111_777))
  }

  @Test(
    arguments: [
      (0.0, "Thu, 01 Jan 1970 00:00:00 GMT"),
      (784_111_777, "Sun, 06 Nov 1994 08:49:37 GMT"),
      (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
      (2_147_483_648, "Tue, 19 Jan 2038 03:14:08 GMT"),
      (-1, "Wed, 31 Dec 1969 23:59:59 GMT"),
      (4_102_444_800, "Fri, 01 Jan 2100 00:00:00 GMT"),
      (-11_644_473_600, "Mon, 01 Jan 1601 00:00:00 GMT"),
    ] as [(Double, String)])
  func httpDatesAcrossCenturies(_ seconds: Double, _ text: String) {
    #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: seconds))
  }

  @Test(
    arguments: [
      ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777.0),
      ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),
      ("Sun Nov  6 08:49:37 1994", 784_111_777),
      ("sun, 06 nov 1994 08:49:37 gmt", 784_111_777),
      ("Sun, 31 Feb 1994 08:49:37 GMT", nil),
      ("Sun, 06 Nov 1994 24:00:00 GMT", nil),
      ("Sun, 06 Nov 1994", nil),
      ("", nil),
      ("tomorrow", nil),
    ] as [(String, Double?)])
  func httpDateForms(_ text: String, _ seconds: Double?) {
    #expect(HTTPDate.parse(text) == seconds.map { Date(timeIntervalSince1970: $0) })
  }
}
