import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What an event stream decides from each answer, on the scripted engine with a test clock: when it
/// reconnects and after how long, what it reports, which `Last-Event-ID` it sends, and when it ends.
@Suite("Event source reconnections (scripted)")
struct ScriptedEventSourceTests {
  static let eventStream = ["Content-Type": "text/event-stream; charset=utf-8"]

  /// A 200 event stream whose body is `text`, then `ending` (nil: it ends normally).
  static func stream(_ text: String, then ending: (any Error)? = nil) -> ScriptedExchange {
    ScriptedExchange(
      [.head(status: 200, headers: eventStream), .body(Data(text.utf8))] + (ending.map { [.fail($0)] } ?? []))
  }

  static let refused = ScriptedExchange.failure(URLError(.cannotConnectToHost))
  static let lost = URLError(.networkConnectionLost)
  static let noContent = ScriptedExchange.response(status: 204)

  /// An update as a row expects it: the cause of a reconnection by a short name (see ``name(of:)``).
  enum Seen: Equatable, CustomStringConvertible {
    case event(id: String?, data: String)
    case reconnect(after: TimeInterval, cause: String, attempt: Int)

    var description: String {
      switch self {
      case .event(let id, let data): return "event(\(id ?? "-"), \(data))"
      case .reconnect(let delay, let cause, let attempt): return "reconnect(\(delay), \(cause), #\(attempt))"
      }
    }
  }

  /// How the sequence ends.
  enum End: Equatable {
    /// With nil (a 204).
    case finished
    /// With ``EventSourceError/gaveUp(url:attempts:lastCause:)``, the last cause by its short name.
    case gaveUp(attempts: Int, lastCause: String)
    /// With the error of the short name.
    case error(String)
  }

  /// A short name for an error: `ended`, `lost`, `refused`, `status N`, `not an event stream`, ….
  static func name(of error: any Error) -> String {
    switch error {
    case EventSourceError.streamEnded: return "ended"
    case EventSourceError.notAnEventStream(_, let status, _): return "not an event stream \(status)"
    case let error as URLError where error.code == .networkConnectionLost: return "lost"
    case let error as URLError where error.code == .cannotConnectToHost: return "refused"
    case let error as SessionFetcherError where error.statusCode != nil:
      return "status \(error.statusCode ?? 0)"
    default: return String(describing: error)
    }
  }

  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    /// The answers to the stream's connections, in order (the last answers every later one).
    var answers: [ScriptedExchange]
    var lastEventID: String? = nil
    var maximumReconnections = 5
    var defaultRetryInterval: TimeInterval = 3
    var maximumRetryInterval: TimeInterval = 30
    var updates: [Seen]
    var end: End
    /// The `Last-Event-ID` of each request, in order (nil: none sent).
    var sentIDs: [String?]

    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "a dropped connection is resumed after the server's retry:, from the last event's ID",
      answers: [stream("retry: 250\n\nid: 7\ndata: a\n\nid: 8\ndata: b\n\n", then: lost), noContent],
      updates: [
        .event(id: "7", data: "a"), .event(id: "8", data: "b"),
        .reconnect(after: 0.25, cause: "lost", attempt: 1),
      ],
      end: .finished, sentIDs: [nil, "8"]),
    Row(
      name: "a server that is down: the default interval doubles up to the cap, then the stream gives up",
      answers: [refused],
      updates: [3, 6, 12, 24, 30].enumerated().map {
        .reconnect(after: TimeInterval($0.element), cause: "refused", attempt: $0.offset + 1)
      }, end: .gaveUp(attempts: 5, lastCause: "refused"), sentIDs: Array(repeating: nil, count: 6)),
    Row(
      name: "the server's retry: is the base of the doubling",
      answers: [stream("retry: 100\n\n"), .failure(lost)], maximumReconnections: 3,
      updates: [
        .reconnect(after: 0.1, cause: "ended", attempt: 1), .reconnect(after: 0.2, cause: "lost", attempt: 2),
        .reconnect(after: 0.4, cause: "lost", attempt: 3),
      ], end: .gaveUp(attempts: 3, lastCause: "lost"), sentIDs: [nil, nil, nil, nil]),
    Row(
      name: "a retry: above the cap is honoured as it is",
      answers: [stream("retry: 60000\n\n"), refused], maximumReconnections: 2, maximumRetryInterval: 30,
      updates: [
        .reconnect(after: 60, cause: "ended", attempt: 1),
        .reconnect(after: 60, cause: "refused", attempt: 2),
      ], end: .gaveUp(attempts: 2, lastCause: "refused"), sentIDs: [nil, nil, nil]),
    Row(
      name: "an event starts the count and the doubling again",
      answers: [refused, stream("id: 1\ndata: a\n\n"), refused, refused, noContent],
      updates: [
        .reconnect(after: 3, cause: "refused", attempt: 1), .event(id: "1", data: "a"),
        .reconnect(after: 3, cause: "ended", attempt: 1), .reconnect(after: 6, cause: "refused", attempt: 2),
        .reconnect(after: 12, cause: "refused", attempt: 3),
      ], end: .finished, sentIDs: [nil, nil, "1", "1", "1"]),
    // A server or a proxy that closes idle connections after keep-alive comments is not down.
    Row(
      name: "a connection that received only a comment starts the count again",
      answers: [refused, stream(": keep-alive\n\n"), refused, noContent],
      updates: [
        .reconnect(after: 3, cause: "refused", attempt: 1), .reconnect(after: 3, cause: "ended", attempt: 1),
        .reconnect(after: 6, cause: "refused", attempt: 2),
      ], end: .finished, sentIDs: [nil, nil, nil, nil]),
    Row(
      name: "a 503's Retry-After lengthens the delay",
      answers: [.response(status: 503, headers: ["Retry-After": "20"]), noContent],
      updates: [.reconnect(after: 20, cause: "status 503", attempt: 1)], end: .finished, sentIDs: [nil, nil]),
    Row(
      name: "a 502 reconnects after the backoff",
      answers: [.response(status: 502), .response(status: 502), noContent],
      updates: [
        .reconnect(after: 3, cause: "status 502", attempt: 1),
        .reconnect(after: 6, cause: "status 502", attempt: 2),
      ], end: .finished, sentIDs: [nil, nil, nil]),
    Row(
      name: "a 500 ends the stream without reconnecting", answers: [.response(status: 500), noContent],
      updates: [], end: .error("status 500"), sentIDs: [nil]),
    Row(
      name: "a 204 ends the stream without reconnecting", answers: [noContent, stream("data: a\n\n")],
      updates: [], end: .finished, sentIDs: [nil]),
    Row(
      name: "a 200 that is not text/event-stream ends the stream without reconnecting",
      answers: [.response(headers: ["Content-Type": "text/html"], body: Data("<html>".utf8)), noContent],
      updates: [], end: .error("not an event stream 200"), sentIDs: [nil]),
    Row(
      name: "a saved ID is sent on the first request and kept by events without an id:",
      answers: [stream("data: a\n\n"), noContent], lastEventID: "41",
      updates: [.event(id: "41", data: "a"), .reconnect(after: 3, cause: "ended", attempt: 1)],
      end: .finished,
      sentIDs: ["41", "41"]),
    Row(
      name: "an id: replaces the saved ID on the next connection",
      answers: [stream("id: 42\ndata: a\n\n", then: lost), noContent], lastEventID: "41",
      updates: [.event(id: "42", data: "a"), .reconnect(after: 3, cause: "lost", attempt: 1)], end: .finished,
      sentIDs: ["41", "42"]),
    Row(
      name: "no reconnections allowed: the first failure gives up", answers: [.failure(lost)],
      maximumReconnections: 0, updates: [], end: .gaveUp(attempts: 0, lastCause: "lost"), sentIDs: [nil]),
  ]

  /// A source of `/feed` on `engine`, waiting on `clock`, each connection's fetcher made by `make`.
  static func source(
    _ row: Row, engine: ScriptedEngine, clock: TestClock,
    make: (@Sendable (URLRequest) -> SessionFetcher)? = nil
  ) -> EventSource {
    SessionFetcher.eventSource(
      url: engine.url("/feed"), lastEventID: row.lastEventID, maximumReconnections: row.maximumReconnections,
      defaultRetryInterval: row.defaultRetryInterval, maximumRetryInterval: row.maximumRetryInterval
    ) { request in
      if let make { return make(request) }
      let fetcher = SessionFetcher(request: request)
      fetcher.callbackQueue = makeCallbackQueue()
      fetcher.run(on: engine)
      return fetcher
    }.run(on: clock)
  }

  /// The updates of `source` until it ends, and how it ended; each reconnection is checked to be
  /// reported before its wait.
  static func run(_ source: EventSource, clock: TestClock) async throws -> ([Seen], End) {
    try await bounded {
      var seen: [Seen] = []
      var reconnections = 0
      do {
        for try await update in source.updates {
          switch update {
          case .event(let event):
            seen.append(.event(id: event.id, data: event.data))
          case .reconnecting(let delay, let cause, let attempt):
            // Reported before the stream waits.
            #expect(clock.waits.count == reconnections)
            reconnections += 1
            seen.append(.reconnect(after: delay, cause: name(of: cause), attempt: attempt))
          }
        }
        return (seen, End.finished)
      } catch EventSourceError.gaveUp(let url, let attempts, let lastCause) {
        #expect(url == source.url)
        return (seen, End.gaveUp(attempts: attempts, lastCause: name(of: lastCause)))
      } catch {
        return (seen, End.error(name(of: error)))
      }
    }
  }

  @Test(arguments: rows)
  func theStreamDecidesFromEachAnswer(_ row: Row) async throws {
    let engine = ScriptedEngine()
    for answer in row.answers { engine.respond(to: "/feed", with: answer) }
    let clock = TestClock()
    let (seen, end) = try await Self.run(Self.source(row, engine: engine, clock: clock), clock: clock)
    #expect(seen == row.updates)
    #expect(end == row.end)
    #expect(engine.requests.map { $0.header("Last-Event-ID") } == row.sentIDs)
    #expect(engine.requests.allSatisfy { $0.header("Accept") == "text/event-stream" })
    // The stream waited exactly the delays it reported, on the clock.
    let delays = seen.compactMap { update -> TimeInterval? in
      if case .reconnect(let delay, _, _) = update { return delay }
      return nil
    }
    #expect(clock.waits == delays)
  }

  /// A service with retries on gives the stream its fetchers: each reconnection is still one
  /// request, and the stream's delays are the only ones.
  @Test func aServicesRetriesDoNotStackUnderTheStreamsReconnections() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/feed", with: .response(status: 503))
    let service = FetcherService()
    service.run(on: engine)
    service.isRetryEnabled = true
    service.minRetryInterval = 0.01
    service.callbackQueue = makeCallbackQueue()
    let retries = Recorder<TimeInterval>()
    let row = Row(name: "", answers: [], maximumReconnections: 3, updates: [], end: .finished, sentIDs: [])
    let clock = TestClock()
    let source = Self.source(row, engine: engine, clock: clock) { request in
      let fetcher = service.fetcher(request: request)
      fetcher.eventMonitors = [RetryWatch(retries)]
      return fetcher
    }
    let (seen, end) = try await Self.run(source, clock: clock)
    #expect(end == .gaveUp(attempts: 3, lastCause: "status 503"))
    #expect(seen.count == 3)
    #expect(clock.waits == [3, 6, 12])
    // One request per connection: the first and three reconnections.
    #expect(engine.requests.count == 4)
    #expect(retries.values.isEmpty)
  }

  /// The give-up error names the URL, the attempts and the last cause.
  @Test func theGiveUpErrorSaysWhatHappened() {
    let url = URL(string: "https://feeds.example/live?x=1")!
    let error = EventSourceError.gaveUp(url: url, attempts: 5, lastCause: URLError(.cannotConnectToHost))
    let text = error.description
    #expect(text.contains("https://feeds.example/live?x=1"))
    #expect(text.contains("5 reconnection attempts"))
    #expect(
      text.hasSuffix(
        "the last one failed with: URLError -1004 (\(URLError(.cannotConnectToHost).localizedDescription))"))
    let ended = EventSourceError.gaveUp(
      url: url, attempts: 2, lastCause: EventSourceError.streamEnded(url: url))
    #expect(ended.description.hasSuffix("the server ended the event stream https://feeds.example/live?x=1"))
    #expect(error.url == url)
  }

  /// A saved ID that a header cannot carry fails before any request.
  @Test(arguments: ["a\r\nX-Injected: 1", "a\nb", "a\0b"])
  func aSavedIDWithALineBreakFailsBeforeAnyRequest(_ id: String) async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/feed", with: Self.noContent)
    let clock = TestClock()
    let row = Row(name: "", answers: [], lastEventID: id, updates: [], end: .finished, sentIDs: [])
    let (seen, end) = try await Self.run(Self.source(row, engine: engine, clock: clock), clock: clock)
    #expect(seen.isEmpty)
    guard case .error(let text) = end else {
      Issue.record("ended with \(end)")
      return
    }
    #expect(text.contains("line break"))
    #expect(engine.requests.isEmpty)
  }

  /// Cancelling the consuming task during a wait ends the sequence with `.cancelled`.
  @Test func cancellingDuringAWaitEndsTheStream() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/feed", with: Self.refused)
    // Real time: the wait is long, and only the cancellation ends it.
    let source = SessionFetcher.eventSource(url: engine.url("/feed"), defaultRetryInterval: 3600) { request in
      let fetcher = SessionFetcher(request: request)
      fetcher.callbackQueue = makeCallbackQueue()
      fetcher.run(on: engine)
      return fetcher
    }
    let reported = Recorder<Int>()
    let task = Task { () -> (any Error)? in
      do {
        for try await update in source.updates {
          if case .reconnecting(_, _, let attempt) = update { reported.append(attempt) }
        }
      } catch {
        return error
      }
      return nil
    }
    #expect(await eventually { reported.count == 1 })
    task.cancel()
    let error = try await bounded { await task.value }
    #expect(error as? SessionFetcherError == .cancelled)
    #expect(engine.requests.count == 1)
  }
}

/// The reconnection policy as a value: its delays and decisions, without any stream.
@Suite("Event source reconnection policy")
struct EventSourceReconnectionTests {
  struct DelayRow: Sendable, CustomTestStringConvertible {
    var base: TimeInterval
    var cap: TimeInterval
    var attempt: Int
    var delay: TimeInterval
    var testDescription: String { "base \(base), cap \(cap), attempt \(attempt) → \(delay)" }
  }

  @Test(arguments: [
    DelayRow(base: 3, cap: 30, attempt: 1, delay: 3),
    DelayRow(base: 3, cap: 30, attempt: 2, delay: 6),
    DelayRow(base: 3, cap: 30, attempt: 4, delay: 24),
    DelayRow(base: 3, cap: 30, attempt: 5, delay: 30),
    DelayRow(base: 3, cap: 30, attempt: 1_000_000, delay: 30),
    DelayRow(base: 0.25, cap: 30, attempt: 3, delay: 1),
    DelayRow(base: 60, cap: 30, attempt: 1, delay: 60),
    DelayRow(base: 60, cap: 30, attempt: 9, delay: 60),
    DelayRow(base: 0, cap: 30, attempt: 7, delay: 0),
    DelayRow(base: 3, cap: 0, attempt: 2, delay: 3),
  ])
  func theDelayDoublesUpToTheCap(_ row: DelayRow) {
    #expect(EventSourceReconnection.delay(base: row.base, cap: row.cap, attempt: row.attempt) == row.delay)
  }

  @Test func aRetryOfManyDigitsWaitsWithoutOverflow() {
    var policy = EventSourceReconnection(defaultInterval: 3, maximumInterval: 30, maximumReconnections: 5)
    policy.serverAsked(retryMilliseconds: Int.max)
    guard case .reconnect(let delay, 1) = policy.connectionEnded(with: URLError(.networkConnectionLost))
    else {
      Issue.record("did not reconnect")
      return
    }
    #expect(delay > 1e15)
    #expect(EventSourceReconnection.nanoseconds(delay) == 9_000_000_000_000_000_000)
    #expect(EventSourceReconnection.nanoseconds(.nan) == 0)
    #expect(EventSourceReconnection.nanoseconds(-1) == 0)
    #expect(EventSourceReconnection.nanoseconds(0.25) == 250_000_000)
  }

  @Test(arguments: [
    (URLError(.cancelled) as any Error, false), (URLError(.serverCertificateUntrusted), false),
    (URLError(.timedOut), true), (URLError(.cannotFindHost), true),
    (SessionFetcherError.status(code: 404, data: nil), false),
    (SessionFetcherError.status(code: 429, data: nil), true),
    (SessionFetcherError.responseTooLarge(limit: 1), false), (SessionFetcherError.cancelled, false),
    (SessionFetcherError.insecureRequest(URL(string: "http://a.example")!), false),
    (CancellationError(), false),
  ])
  func whichEndingsAreWorthAnotherConnection(_ error: any Error, _ reconnects: Bool) {
    #expect(EventSourceReconnection.isReconnectable(error) == reconnects)
  }
}
