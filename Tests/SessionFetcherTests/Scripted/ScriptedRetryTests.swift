import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Retries and their delays, on the scripted engine: what the fetcher decides from each answer.
@Suite("Retries (scripted)")
struct ScriptedRetryTests {
  static let body = Data("the body".utf8)

  @Test func retriesRecoverFromServerErrorsWithBalancedNotifications() async {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/flaky", with: .response(status: 503), .response(status: 503), .response(body: Self.body))
    let fetcher = engine.fetcher("/flaky")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.02
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == Self.body)
    #expect(fetcher.retryCount == 2)
    #expect(fetcher.timing.retryCount == 2)
    #expect(engine.requests.count == 3)
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 3 && counter.stopped == 3)
    #expect(counter.retryDelayStarted == 2 && counter.retryDelayStopped == 2)
  }

  @Test func retryIntervalsDoubleUpToTheCap() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/busy", with: .response(status: 503))
    let fetcher = engine.fetcher("/busy")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    fetcher.retryFactor = 10
    fetcher.maxRetryInterval = 5
    let seen = Recorder<(Int, TimeInterval)>()
    fetcher.retryBlock = { [fetcher] suggested, _, response in
      seen.append((fetcher.retryCount, fetcher.nextRetryInterval))
      response(suggested)
    }
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError?.statusCode == 503)
    // 0.01, 0.1, 1; the next (10) reaches the cap of 5: three retries.
    #expect(fetcher.retryCount == 3)
    #expect(seen.values.map(\.0) == [0, 1, 2])
    let intervals = seen.values.map(\.1)
    #expect(intervals.count == 3)
    #expect(zip(intervals, [0.01, 0.1, 1]).allSatisfy { abs($0 - $1) < 1e-9 })
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

  @Test func noRetryWhenDisabled() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/busy", with: .response(status: 503), .response(body: Self.body))
    let fetcher = engine.fetcher("/busy")
    let counter = NotificationRecorder([fetcher])
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 503)
    #expect(engine.requests.count == 1)
    #expect(counter.retryDelayStarted == 0)
  }

  @Test func postIsNotRetriedAfterA502ButIsAfterA503() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/502", with: .response(status: 502), .response(body: Self.body))
    engine.respond(to: "/503", with: .response(status: 503), .response(body: Self.body))
    let post502 = engine.fetcher("/502")
    post502.bodyData = Data("x".utf8)
    post502.isRetryEnabled = true
    post502.minRetryInterval = 0.01
    #expect(await post502.fetchResult().fetcherError?.statusCode == 502)
    #expect(engine.requests(matching: "/502").count == 1)
    let post503 = engine.fetcher("/503")
    post503.bodyData = Data("x".utf8)
    post503.isRetryEnabled = true
    post503.minRetryInterval = 0.01
    #expect(await post503.fetchResult().data == Self.body)
    #expect(post503.retryCount == 1)
    // The retry sends the body again.
    #expect(engine.requests(matching: "/503").map(\.body) == [Data("x".utf8), Data("x".utf8)])
    #expect(engine.requests(matching: "/503").map(\.method) == ["POST", "POST"])
  }

  @Test func retryAfterReplacesTheComputedDelay() async {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/limited", with: .response(status: 429, headers: ["Retry-After": "0"]), .response(body: Self.body))
    let fetcher = engine.fetcher("/limited")
    fetcher.isRetryEnabled = true
    // Without Retry-After the first delay would be 30 s; the server's 0 wins.
    fetcher.minRetryInterval = 30
    let delays = Recorder<TimeInterval>()
    fetcher.eventMonitors = [RetryWatch(delays)]
    let result = await fetcher.fetchResult(timeout: 15)
    #expect(result.data == Self.body)
    #expect(fetcher.retryCount == 1)
    #expect(delays.values == [0])
  }

  @Test func retryAfterLongerThanTheCapEndsRetrying() async {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/limited", with: .response(status: 503, headers: ["Retry-After": "3600"]),
      .response(body: Self.body))
    let fetcher = engine.fetcher("/limited")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    fetcher.maxRetryInterval = 10
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError?.statusCode == 503)
    #expect(fetcher.retryCount == 0)
    #expect(engine.requests.count == 1)
  }

  /// A connection lost before the head, and one lost after part of the body, are retried; the
  /// retry's body is the whole body, not the lost attempt's bytes and then the next.
  @Test(arguments: [
    ScriptedExchange.failure(URLError(.networkConnectionLost)),
    ScriptedExchange([
      .head(status: 200, headers: ["Content-Length": "8"]), .body(Data("the ".utf8)),
      .fail(URLError(.networkConnectionLost)),
    ]),
  ])
  func transientTransportFailuresAreRetried(_ failure: ScriptedExchange) async {
    let engine = ScriptedEngine()
    engine.respond(to: "/lossy", with: failure, .response(body: Self.body))
    let fetcher = engine.fetcher("/lossy")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data == Self.body)
    #expect(fetcher.retryCount == 1)
    #expect(engine.requests.count == 2)
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
