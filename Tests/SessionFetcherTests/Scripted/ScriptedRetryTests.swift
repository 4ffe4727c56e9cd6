import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Retries and their delays, on the scripted engine: what the fetcher decides from each answer.
/// How each real engine reports a lost or refused connection is in `RetryTests`.
@Suite("Retries (scripted)")
struct ScriptedRetryTests {
  static let body = Data("the body".utf8)

  /// How a fetch ends.
  enum Outcome: Sendable, Equatable {
    /// With ``ScriptedRetryTests/body``.
    case body
    /// With a status error.
    case status(Int)
    /// With a transport error.
    case transport(URLError.Code)
  }

  /// One row of the retry table: the answers in order, how the fetcher is set up, and what it
  /// decides.
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    /// The answers to the fetcher's attempts, in order (the last answers every later attempt).
    var answers: [ScriptedExchange]
    /// A POST of this body, else a GET.
    var post: Data? = nil
    var isRetryEnabled = true
    var minRetryInterval: TimeInterval = 0.01
    /// The fetcher's `maxRetryInterval`, when not its default.
    var maxRetryInterval: TimeInterval? = nil
    /// How the fetch ends.
    var outcome = Outcome.body
    /// How many retries the fetcher makes.
    var retries: Int
    /// The delays the fetcher announces before its retries, when the row checks them.
    var delays: [TimeInterval]? = nil

    var testDescription: String { name }
  }

  static let lostBeforeHead = ScriptedExchange.failure(URLError(.networkConnectionLost))
  static let lostMidBody = ScriptedExchange([
    .head(status: 200, headers: ["Content-Length": "8"]), .body(Data("the ".utf8)),
    .fail(URLError(.networkConnectionLost)),
  ])
  static let ok = ScriptedExchange.response(body: body)

  static let rows: [Row] = [
    Row(
      name: "503, 503, then 200: two retries", answers: [.response(status: 503), .response(status: 503), ok],
      retries: 2),
    Row(
      name: "retries off: the 503 is the answer", answers: [.response(status: 503), ok],
      isRetryEnabled: false, outcome: .status(503), retries: 0),
    Row(
      name: "a 500 is not retried by default", answers: [.response(status: 500), ok], outcome: .status(500),
      retries: 0),
    Row(
      name: "a POST is not retried after a 502", answers: [.response(status: 502), ok], post: Data("x".utf8),
      outcome: .status(502), retries: 0),
    Row(
      name: "a POST is retried after a 503, its body sent again", answers: [.response(status: 503), ok],
      post: Data("x".utf8), retries: 1),
    Row(
      name: "a POST is not retried after a lost connection", answers: [lostBeforeHead, ok],
      post: Data("x".utf8), outcome: .transport(.networkConnectionLost), retries: 0),
    Row(
      name: "Retry-After: 0 never shortens the backoff's delays",
      answers: [
        .response(status: 429, headers: ["Retry-After": "0"]),
        .response(status: 429, headers: ["Retry-After": "0"]),
        ok,
      ], minRetryInterval: 0.05, retries: 2, delays: [0.05, 0.1]),
    Row(
      name: "a Retry-After date in the past is the backoff's delay",
      answers: [.response(status: 503, headers: ["Retry-After": "Thu, 01 Jan 1970 00:00:00 GMT"]), ok],
      minRetryInterval: 0.05, retries: 1, delays: [0.05]),
    Row(
      name: "a Retry-After longer than the backoff's delay is the delay",
      answers: [.response(status: 503, headers: ["Retry-After": "1"]), ok], retries: 1, delays: [1]),
    // Before, each Retry-After: 0 retried at once and skipped the cap: thousands of requests
    // until three times the cap had passed.
    Row(
      name: "Retry-After: 0 on every answer retries as the backoff does, then ends",
      answers: [.response(status: 503, headers: ["Retry-After": "0"])], maxRetryInterval: 0.1,
      outcome: .status(503), retries: 4, delays: [0.01, 0.02, 0.04, 0.08]),
    Row(
      name: "Retry-After past the cap ends retrying",
      answers: [.response(status: 503, headers: ["Retry-After": "3600"]), ok], maxRetryInterval: 10,
      outcome: .status(503), retries: 0),
    Row(
      name: "Retry-After of a 502 is not the delay",
      answers: [.response(status: 502, headers: ["Retry-After": "3600"]), ok], retries: 1, delays: [0.01]),
    Row(name: "a connection lost before the head is retried", answers: [lostBeforeHead, ok], retries: 1),
    Row(
      name: "a connection lost mid-body is retried; the body is the retry's whole body",
      answers: [lostMidBody, ok], retries: 1),
  ]

  @Test(arguments: rows)
  func theFetcherDecidesFromEachAnswer(_ row: Row) async {
    let engine = ScriptedEngine()
    for answer in row.answers { engine.respond(to: "/resource", with: answer) }
    let fetcher = engine.fetcher("/resource")
    if let post = row.post { fetcher.bodyData = post }
    fetcher.isRetryEnabled = row.isRetryEnabled
    fetcher.minRetryInterval = row.minRetryInterval
    if let cap = row.maxRetryInterval { fetcher.maxRetryInterval = cap }
    let delays = Recorder<TimeInterval>()
    fetcher.eventMonitors = [RetryWatch(delays)]
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult(timeout: 60)
    switch row.outcome {
    case .body:
      #expect(result.error == nil, "\(String(describing: result.error))")
      #expect(result.data == Self.body)
    case .status(let status):
      #expect(result.fetcherError?.statusCode == status)
    case .transport(let code):
      #expect(result.urlError?.code == code)
    }
    #expect(fetcher.retryCount == row.retries)
    #expect(fetcher.timing.retryCount == row.retries)
    #expect(engine.requests.count == row.retries + 1)
    #expect(engine.requests.allSatisfy { $0.method == (row.post == nil ? "GET" : "POST") })
    if let post = row.post {
      // Every attempt sends the whole body again.
      #expect(engine.requests.map(\.body) == Array(repeating: post, count: row.retries + 1))
    }
    if let expected = row.delays {
      #expect(delays.values.count == expected.count)
      #expect(zip(delays.values, expected).allSatisfy { abs($0 - $1) < 1e-9 }, "\(delays.values)")
    }
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == row.retries + 1 && counter.stopped == row.retries + 1)
    #expect(counter.retryDelayStarted == row.retries && counter.retryDelayStopped == row.retries)
  }

  @Test func retryIntervalsDoubleUpToTheCap() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/busy", with: .response(status: 503))
    let fetcher = engine.fetcher("/busy")
    fetcher.isRetryEnabled = true
    // A large factor reaches the cap in three steps, while 3 × the cap leaves ample time.
    fetcher.minRetryInterval = 0.001
    fetcher.retryFactor = 20
    fetcher.maxRetryInterval = 2
    let seen = Recorder<(Int, TimeInterval)>()
    fetcher.retryBlock = { [fetcher] suggested, _, response in
      seen.append((fetcher.retryCount, fetcher.nextRetryInterval))
      response(suggested)
    }
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError?.statusCode == 503)
    // 0.001, 0.02, 0.4; the next (8) reaches the cap of 2: three retries.
    #expect(fetcher.retryCount == 3)
    #expect(seen.values.map(\.0) == [0, 1, 2])
    let intervals = seen.values.map(\.1)
    #expect(intervals.count == 3)
    #expect(zip(intervals, [0.001, 0.02, 0.4]).allSatisfy { abs($0 - $1) < 1e-9 })
    #expect(engine.requests.count == 4)
  }

  @Test func retryBlockCanRefuseAndOverride() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/refused", with: .response(status: 503))
    engine.respond(to: "/forced", with: .response(status: 500), .response(body: Self.body))
    let refused = engine.fetcher("/refused")
    refused.isRetryEnabled = true
    refused.minRetryInterval = 0.01
    refused.retryBlock = { _, _, response in response(false) }
    #expect(await refused.fetchResult().fetcherError?.statusCode == 503)
    #expect(engine.requests(matching: "/refused").count == 1)

    let forced = engine.fetcher("/forced")
    forced.isRetryEnabled = true
    forced.minRetryInterval = 0.01
    let suggestions = Recorder<Bool>()
    forced.retryBlock = { suggested, _, response in
      suggestions.append(suggested)
      response(true)
    }
    #expect(await forced.fetchResult().data == Self.body)
    #expect(suggestions.values == [false])
    #expect(engine.requests(matching: "/forced").count == 2)
  }

  /// With `postsNotifications` off, a fetch with retries posts nothing; its completion still runs.
  /// Turning it back on after the fetch began changes nothing for that fetch.
  @Test func aFetchWithNotificationsOffPostsNone() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/flaky", with: .response(status: 503), .response(body: Self.body))
    engine.respond(to: "/plain", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/flaky")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    fetcher.postsNotifications = false
    let counter = NotificationRecorder([fetcher])
    let began = Recorder<Bool>()
    fetcher.eventMonitors = [DidBeginMonitor { began.append(true) }]
    let result = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in result.append(FetchResult(data: data, error: error)) }
    #expect(await eventually { began.count == 1 })
    fetcher.postsNotifications = true
    #expect(await eventually { result.count == 1 })
    #expect(result.values.first?.data == Self.body)
    #expect(fetcher.retryCount == 1)
    #expect(engine.requests.count == 2)
    await drain(fetcher.callbackQueue)
    #expect(counter.started == 0 && counter.stopped == 0)
    #expect(counter.retryDelayStarted == 0 && counter.retryDelayStopped == 0)
    #expect(counter.completionInvoked == 0)

    // The default posts them.
    let posting = engine.fetcher("/plain")
    let postingCounter = NotificationRecorder([posting])
    #expect(posting.postsNotifications)
    #expect(await posting.fetchResult().data == Self.body)
    #expect(await eventually { postingCounter.completionInvoked == 1 })
    #expect(postingCounter.started == 1 && postingCounter.stopped == 1)
  }

  @Test func stopCancelsAPendingRetryDelay() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/busy", with: .response(status: 503))
    let fetcher = engine.fetcher("/busy")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 30
    let counter = NotificationRecorder([fetcher])
    fetcher.beginFetch { _, _ in Issue.record("a stopped fetch runs no completion") }
    #expect(await eventually { counter.retryDelayStarted == 1 })
    fetcher.stopFetching()
    #expect(await eventually { counter.retryDelayStopped == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
    #expect(!fetcher.isFetching)
    #expect(engine.requests.count == 1)
  }
}

/// Records the delay of every retry the fetcher announces.
final class RetryWatch: FetcherEventMonitor, Sendable {
  let delays: Recorder<TimeInterval>
  init(_ delays: Recorder<TimeInterval>) { self.delays = delays }
  func fetcher(_ fetcher: SessionFetcher, willRetryAfter delay: TimeInterval, error: any Error) {
    delays.append(delay)
  }
}

/// Calls `onBegin` when a fetch begins.
private final class DidBeginMonitor: FetcherEventMonitor, Sendable {
  let onBegin: @Sendable () -> Void
  init(_ onBegin: @escaping @Sendable () -> Void) { self.onBegin = onBegin }
  func fetcherDidBegin(_ fetcher: SessionFetcher) { onBegin() }
}
