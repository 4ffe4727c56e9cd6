import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// `metricsCollectionBlock`: once per exchange, before the completion (the original's
/// testCollectingMetrics_* scenarios).
@Suite("metricsCollectionBlock")
struct MetricsCollectionTests {
  /// Runs `fetcher` and returns its events in order: `metrics` for each call, then `completion`.
  static func events(_ fetcher: SessionFetcher) async -> (
    events: [String], metrics: [TransferMetrics], error: (any Error)?
  ) {
    let events = Recorder<String>()
    let metrics = Recorder<TransferMetrics>()
    fetcher.metricsCollectionBlock = { record in
      metrics.append(record)
      events.append("metrics")
    }
    let result = await fetcher.fetchResult()
    events.append("completion")
    return (events.values, metrics.values, result.error)
  }

  @Test func oneCallForASuccessfulFetch() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let (events, metrics, error) = await Self.events(server.fetcher("/bytes/1000"))
    #expect(error == nil)
    #expect(events == ["metrics", "completion"])
    let record = try #require(metrics.first)
    #expect(record.total > 0)
    #expect(record.firstByte != nil)
    #expect(record.responseBytes >= 1000)
    if FetcherEngine.default == .libcurl {
      #expect(record.httpVersion == "HTTP/1.1")
      #expect(record.remotePort == Int(server.port))
    } else {
      // The fetcher measures what it can; the rest it cannot know.
      #expect(record.httpVersion == nil && record.nameLookup == nil && record.remoteAddress == nil)
      #expect(record.responseBytes == 1000)
    }
  }

  @Test func oneCallPerRedirectHop() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let (events, _, error) = await Self.events(server.fetcher("/redirect/2"))
    #expect(error == nil)
    #expect(events == ["metrics", "metrics", "metrics", "completion"])
  }

  @Test func oneCallPerChallengeAnswer() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/digest-auth/auth/user/pa55/SHA-256")
    fetcher.credential = URLCredential(user: "user", password: "pa55", persistence: .none)
    let (events, _, error) = await Self.events(fetcher)
    #expect(error == nil)
    #expect(events == ["metrics", "metrics", "completion"])
  }

  @Test func aBadStatusCodeIsMeasured() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let (events, metrics, error) = await Self.events(server.fetcher("/status/500"))
    #expect((error as? SessionFetcherError)?.statusCode == 500)
    #expect(events == ["metrics", "completion"])
    #expect(metrics.first?.firstByte != nil)
  }

  @Test func aRefusedConnectionIsMeasured() async throws {
    let port = try closedPort()
    let fetcher = SessionFetcher.fetcher(urlString: "http://127.0.0.1:\(port)/x")
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    let (events, metrics, error) = await Self.events(fetcher)
    #expect((error as? URLError)?.code == .cannotConnectToHost, "\(String(describing: error))")
    #expect(events == ["metrics", "completion"])
    #expect(metrics.first?.firstByte == nil)
  }

  @Test func eachAttemptIsMeasured() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/fail-first?n=1&key=metrics-\(UUID().uuidString)")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.05
    let (events, _, error) = await Self.events(fetcher)
    #expect(error == nil)
    #expect(events == ["metrics", "metrics", "completion"])
  }

  @Test func aTimedOutExchangeIsMeasured() async throws {
    let server = try TestServer()
    defer { server.stop() }
    var request = URLRequest(url: server.url("/hang"))
    request.timeoutInterval = 1
    let fetcher = SessionFetcher(request: request)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    let (events, _, error) = await Self.events(fetcher)
    #expect((error as? URLError)?.code == .timedOut)
    #expect(events == ["metrics", "completion"])
  }

  @Test func stubbedFetchesMakeNoExchange() async throws {
    let fetcher = SessionFetcher.fetcher(urlString: "https://example.invalid/x")
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.testBlock = { _, respond in respond(nil, Data("stub".utf8), nil) }
    let (events, _, _) = await Self.events(fetcher)
    #expect(events == ["completion"])
  }
}
