import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The line and event limits of a stream on the scripted engine: where a line or an event becomes
/// too long, that the fetcher then cancels the exchange, that an event source does not reconnect,
/// and which limits fail at begin. That a real server stops sending once the fetcher gives up is in
/// `StreamBoundsTests`.
@Suite("Stream bounds (scripted)")
struct ScriptedStreamBoundsTests {
  static let limit = 64 * 1024

  /// `body` in pieces of 16 KiB (libcurl's write size), each a step, after a head of `contentType`.
  static func exchange(_ contentType: String, _ body: Data, then last: ScriptedExchange.Step? = nil)
    -> ScriptedExchange
  {
    let pieces = stride(from: 0, to: body.count, by: 16_384).map {
      ScriptedExchange.Step.body(body[$0..<min($0 + 16_384, body.count)])
    }
    return ScriptedExchange(
      [.head(status: 200, headers: ["Content-Type": contentType])] + pieces + (last.map { [$0] } ?? []))
  }

  static func fetcher(on engine: ScriptedEngine) -> SessionFetcher {
    let fetcher = engine.fetcher("/stream")
    fetcher.maximumLineLength = limit
    fetcher.maximumEventLength = limit
    // Not charged for streamed bytes: the stream would otherwise fail at 1 MiB.
    fetcher.maximumResponseBodyLength = 1024 * 1024
    return fetcher
  }

  /// A line of exactly the limit passes; one byte more does not.
  @Test(arguments: [0, 1])
  func aLineAtTheLimitPasses(extra: Int) async throws {
    let engine = ScriptedEngine()
    let body = Data(repeating: 0x62, count: Self.limit + extra) + Data("\nend\n".utf8)
    engine.respond(to: "/stream", with: Self.exchange("text/plain", body))
    let fetcher = Self.fetcher(on: engine)
    var lengths: [Int] = []
    var failure: (any Error)?
    do {
      for try await line in try await fetcher.beginStreaming().lines { lengths.append(line.utf8.count) }
    } catch {
      failure = error
    }
    if extra == 0 {
      #expect(lengths == [Self.limit, 3])
      #expect(failure == nil)
    } else {
      #expect(lengths.isEmpty)
      #expect(failure as? SessionFetcherError == .responseTooLarge(limit: Int64(Self.limit)))
    }
  }

  /// An event whose data is exactly the limit passes, although its one line is longer than
  /// `maximumLineLength` (which does not apply to events); one byte more does not.
  @Test(arguments: [0, 1])
  func anEventAtTheLimitPasses(extra: Int) async throws {
    let engine = ScriptedEngine()
    var body = Data("data: ".utf8) + Data(repeating: 0x63, count: Self.limit / 2) + Data("\n".utf8)
    body += Data("data: ".utf8) + Data(repeating: 0x63, count: Self.limit / 2 - 1 + extra) + Data("\n\n".utf8)
    body += Data("data: last\n\n".utf8)
    engine.respond(to: "/stream", with: Self.exchange("text/event-stream", body))
    let fetcher = Self.fetcher(on: engine)
    fetcher.maximumLineLength = 16
    var lengths: [Int] = []
    var failure: (any Error)?
    do {
      for try await event in fetcher.events() { lengths.append(event.data.utf8.count) }
    } catch {
      failure = error
    }
    if extra == 0 {
      #expect(lengths == [Self.limit, 4])
      #expect(failure == nil)
    } else {
      #expect(lengths.isEmpty)
      #expect(failure as? SessionFetcherError == .responseTooLarge(limit: Int64(Self.limit)))
    }
  }

  /// What overflows the limit, and how the stream is read.
  enum Endless: String, CaseIterable, Sendable {
    case lineOfLines, dataLinesOfEvents, lineOfEvents
  }

  /// An endless line or event ends the stream with `responseTooLarge`, and the fetcher cancels the
  /// exchange (which would otherwise never end) instead of reading on.
  @Test(arguments: Endless.allCases)
  func anEndlessLineOrEventCancelsTheExchange(_ kind: Endless) async throws {
    let engine = ScriptedEngine()
    let exchange: ScriptedExchange
    switch kind {
    case .lineOfLines:
      exchange = Self.exchange("text/plain", Data(repeating: 0x61, count: 2 * Self.limit), then: .stall)
    case .dataLinesOfEvents:
      exchange = Self.exchange(
        "text/event-stream", Data(String(repeating: "data: x\n", count: Self.limit).utf8), then: .stall)
    case .lineOfEvents:
      exchange = Self.exchange(
        "text/event-stream", Data("data: ".utf8) + Data(repeating: 0x78, count: 2 * Self.limit), then: .stall)
    }
    engine.respond(to: "/stream", with: exchange)
    let fetcher = Self.fetcher(on: engine)
    let recorder = NotificationRecorder([fetcher])
    var count = 0
    var failure: (any Error)?
    do {
      switch kind {
      case .lineOfLines: for try await _ in try await fetcher.beginStreaming().lines { count += 1 }
      case .dataLinesOfEvents: for try await _ in fetcher.events() { count += 1 }
      case .lineOfEvents: for try await _ in try await fetcher.beginStreaming().events { count += 1 }
      }
    } catch {
      failure = error
    }
    #expect(count == 0)
    #expect(failure as? SessionFetcherError == .responseTooLarge(limit: Int64(Self.limit)))
    #expect(await eventually { engine.requests.first?.wasCancelled == true })
    #expect(await eventually { recorder.count(.sessionFetcherStopped) == 1 })
    #expect(engine.requests.count == 1)
  }

  /// An event past the limit ends an event source: reconnecting would bring it again.
  @Test func anEventSourceDoesNotReconnectAfterAnEventPastTheLimit() async throws {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/events",
      with: Self.exchange("text/event-stream", Data(String(repeating: "data: x\n", count: Self.limit).utf8)))
    let clock = TestClock()
    let source = SessionFetcher.eventSource(
      url: engine.url("/events"), maximumReconnections: 3, defaultRetryInterval: 0.01
    ) { request in
      let fetcher = SessionFetcher(request: request)
      fetcher.callbackQueue = DispatchQueue(label: "test.scripted.events")
      fetcher.maximumEventLength = Self.limit
      fetcher.run(on: engine)
      return fetcher
    }.run(on: clock)
    var failure: (any Error)?
    do {
      for try await _ in source {}
    } catch {
      failure = error
    }
    #expect(failure as? SessionFetcherError == .responseTooLarge(limit: Int64(Self.limit)))
    #expect(engine.requests.count == 1)
    #expect(clock.waits.isEmpty)
  }

  @Test(arguments: [(0, 1), (1, 0), (-5, 10)])
  func limitsBelowOneFailAtBegin(line: Int, event: Int) async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/stream", with: Self.exchange("text/plain", Data("a\n".utf8)))
    let fetcher = Self.fetcher(on: engine)
    fetcher.maximumLineLength = line
    fetcher.maximumEventLength = event
    var failure: (any Error)?
    do {
      _ = try await fetcher.beginStreaming()
    } catch {
      failure = error
    }
    guard case .invalidConfiguration(let text)? = failure as? SessionFetcherError else {
      Issue.record("expected invalidConfiguration, got \(String(describing: failure))")
      return
    }
    #expect(text.contains("maximumLineLength"))
    await engine.drainEvents()
    #expect(engine.requests.isEmpty)
  }

  /// `maximumResponseBodyLength` does not count what the consumer of a stream has taken: 1 MiB of
  /// lines passes a 64 KiB limit.
  @Test func aStreamIsNotChargedAgainstTheBodyLimit() async throws {
    let engine = ScriptedEngine()
    let line = Data(repeating: 0x64, count: 1023) + Data("\n".utf8)
    let body = (0..<1024).reduce(into: Data()) { body, _ in body += line }
    engine.respond(to: "/stream", with: Self.exchange("text/plain", body))
    let fetcher = Self.fetcher(on: engine)
    fetcher.maximumResponseBodyLength = 64 * 1024
    var count = 0
    for try await _ in try await fetcher.beginStreaming().lines { count += 1 }
    #expect(count == 1024)
  }
}
