import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A connection that stalls: only the fetcher's own timeout ends it (the scripted engine has no
/// timer), and it cancels the exchange.
@Suite("Timeouts (scripted)")
struct ScriptedTimeoutTests {
  static func fetcher(_ engine: ScriptedEngine, _ path: String, timeout: TimeInterval) -> SessionFetcher {
    let fetcher = engine.fetcher(path)
    var request = URLRequest(url: engine.url(path))
    request.timeoutInterval = timeout
    fetcher.request = request
    return fetcher
  }

  @Test(arguments: [
    ScriptedExchange.stall,
    ScriptedExchange([
      .head(status: 200, headers: ["Content-Length": "100"]), .body(Data("part".utf8)), .stall,
    ]),
  ])
  func aStalledConnectionTimesOut(_ stall: ScriptedExchange) async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/silent", with: stall)
    let fetcher = Self.fetcher(engine, "/silent", timeout: 0.5)
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .timedOut)
    #expect(result.urlError?.failingURL == engine.url("/silent"))
    let request = try #require(engine.requests.first)
    #expect(engine.requests.count == 1)
    #expect(await eventually { engine.requests.first?.wasCancelled == true })
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
    #expect(request.events.first?.kind == .resumed)
  }

  /// A stalled attempt that times out is retried when retries are on, and the retry's answer wins.
  @Test func aTimedOutAttemptIsRetried() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/slow", with: .stall, .response(body: Data("late".utf8)))
    let fetcher = Self.fetcher(engine, "/slow", timeout: 0.5)
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.data == Data("late".utf8))
    #expect(fetcher.retryCount == 1)
    #expect(engine.requests.first?.wasCancelled == true)
  }
}
