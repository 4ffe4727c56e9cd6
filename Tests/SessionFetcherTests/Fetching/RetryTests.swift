import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("Retries")
struct RetryTests {
  static func key() -> String { UUID().uuidString }

  @Test func retriesRecoverFromServerErrorsWithBalancedNotifications() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/fail-first?n=2&key=\(Self.key())&status=503&bytes=100")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.02
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == TestServer.patternBytes(count: 100))
    #expect(fetcher.retryCount == 2)
    #expect(fetcher.timing.retryCount == 2)
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 3)
    #expect(counter.stopped == 3)
    #expect(counter.retryDelayStarted == 2)
    #expect(counter.retryDelayStopped == 2)
  }

  /// With `postsNotifications` off, a fetch with retries posts nothing; its completion still runs.
  /// Turning it back on after the fetch began changes nothing for that fetch.
  @Test func aFetchWithNotificationsOffPostsNone() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/fail-first?n=1&key=\(Self.key())&status=503&bytes=100")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.02
    fetcher.postsNotifications = false
    let counter = NotificationRecorder([fetcher])
    let began = Recorder<Bool>()
    fetcher.eventMonitors = [DidBeginMonitor { began.append(true) }]
    let result = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in result.append(FetchResult(data: data, error: error)) }
    #expect(await eventually { began.count == 1 })
    fetcher.postsNotifications = true
    #expect(await eventually { result.count == 1 })
    #expect(result.values.first?.data == TestServer.patternBytes(count: 100))
    #expect(fetcher.retryCount == 1)
    try await Task.sleep(nanoseconds: 100_000_000)
    #expect(counter.started == 0 && counter.stopped == 0)
    #expect(counter.retryDelayStarted == 0 && counter.retryDelayStopped == 0)
    #expect(counter.completionInvoked == 0)

    // The default posts them.
    let posting = server.fetcher("/bytes/10")
    let postingCounter = NotificationRecorder([posting])
    #expect(posting.postsNotifications)
    #expect(await posting.fetchResult().error == nil)
    #expect(await eventually { postingCounter.completionInvoked == 1 })
    #expect(postingCounter.started == 1 && postingCounter.stopped == 1)
  }

  /// The default first delay is random between 1 and 2 s, drawn once per fetcher: every read, and
  /// a reset to the default, give the same value.
  @Test func theDefaultFirstDelayIsRandomAndStable() {
    let fetcher = SessionFetcher.fetcher(urlString: "https://example.invalid/")
    let first = fetcher.minRetryInterval
    #expect((1...2).contains(first))
    #expect(fetcher.minRetryInterval == first)
    fetcher.minRetryInterval = 5
    #expect(fetcher.minRetryInterval == 5)
    fetcher.minRetryInterval = 0
    #expect(fetcher.minRetryInterval == first)
  }

  @Test func retryIntervalsDoubleUpToTheCap() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/status/503")
    fetcher.isRetryEnabled = true
    // A large factor reaches the cap in three steps while 3 × the cap leaves ample time.
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
    #expect(server.requestCount(path: "/status/503") == 4)
  }

  @Test func retryBlockCanRefuseAndOverride() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // Refuse a suggested retry.
    let refused = server.fetcher("/status/503")
    refused.isRetryEnabled = true
    refused.minRetryInterval = 0.01
    refused.retryBlock = { _, _, response in response(false) }
    #expect(await refused.fetchResult().fetcherError?.statusCode == 503)
    #expect(server.requestCount(path: "/status/503") == 1)
    // Force a retry of a status not retried by default.
    let key = Self.key()
    let forced = server.fetcher("/fail-first?n=1&key=\(key)&status=500")
    forced.isRetryEnabled = true
    forced.minRetryInterval = 0.01
    let suggestions = Recorder<Bool>()
    forced.retryBlock = { suggested, _, response in
      suggestions.append(suggested)
      response(true)
    }
    #expect(await forced.fetchResult().error == nil)
    #expect(suggestions.values == [false])
  }

  @Test func noRetryWhenDisabled() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/status/503")
    let counter = NotificationRecorder([fetcher])
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 503)
    #expect(server.requestCount(path: "/status/503") == 1)
    #expect(counter.retryDelayStarted == 0)
  }

  @Test func postIsNotRetriedAfterA502ButIsAfterA503() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let post502 = server.fetcher("/fail-first?n=1&key=\(Self.key())&status=502")
    post502.bodyData = Data("x".utf8)
    post502.isRetryEnabled = true
    post502.minRetryInterval = 0.01
    #expect(await post502.fetchResult().fetcherError?.statusCode == 502)
    let post503 = server.fetcher("/fail-first?n=1&key=\(Self.key())&status=503")
    post503.bodyData = Data("x".utf8)
    post503.isRetryEnabled = true
    post503.minRetryInterval = 0.01
    #expect(await post503.fetchResult().error == nil)
    #expect(post503.retryCount == 1)
  }

  @Test func retryAfterReplacesTheComputedDelay() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/fail-first?n=1&key=\(Self.key())&status=429&retryAfter=0")
    fetcher.isRetryEnabled = true
    // Without Retry-After the first delay would be 30 s; the server's 0 wins.
    fetcher.minRetryInterval = 30
    let result = await fetcher.fetchResult(timeout: 15)
    #expect(result.error == nil)
    #expect(fetcher.retryCount == 1)
  }

  @Test func retryAfterLongerThanTheCapEndsRetrying() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/retry-after?status=503&after=3600")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    fetcher.maxRetryInterval = 10
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError?.statusCode == 503)
    #expect(fetcher.retryCount == 0)
  }

  @Test(arguments: ["reset", "truncate", "empty"])
  func transientTransportFailuresAreRetried(_ fault: String) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/fail-first?n=1&key=\(Self.key())&fault=\(fault)&bytes=5000")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data == TestServer.patternBytes(count: 5000))
    #expect(fetcher.retryCount == 1)
  }

  @Test func connectionRefusedIsRetried() async throws {
    let port = try closedPort()
    let fetcher = SessionFetcher.fetcher(urlString: "http://127.0.0.1:\(port)/")
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    // A count, not the elapsed-time rule (3 × maxRetryInterval), ends the retries: on a loaded
    // machine the refused attempts can take seconds to report.
    fetcher.maxRetryInterval = 600
    fetcher.maxRetryCount = 2
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .cannotConnectToHost)
    #expect(fetcher.retryCount == 2)
  }

  @Test func stopCancelsAPendingRetryDelay() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/status/503")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 30
    let counter = NotificationRecorder([fetcher])
    fetcher.beginFetch { _, _ in Issue.record("a stopped fetch runs no completion") }
    #expect(await eventually { counter.retryDelayStarted == 1 })
    fetcher.stopFetching()
    #expect(await eventually { counter.retryDelayStopped == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
    #expect(!fetcher.isFetching)
    #expect(server.requestCount(path: "/status/503") == 1)
  }
}

/// Calls `onBegin` when a fetch begins.
private final class DidBeginMonitor: FetcherEventMonitor, Sendable {
  let onBegin: @Sendable () -> Void
  init(_ onBegin: @escaping @Sendable () -> Void) { self.onBegin = onBegin }
  func fetcherDidBegin(_ fetcher: SessionFetcher) { onBegin() }
}
