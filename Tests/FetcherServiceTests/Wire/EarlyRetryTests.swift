import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("Early retry")
struct EarlyRetryTests {
  /// A service that retries after 45 s, and one of its fetchers waiting out that delay after a 503.
  /// Longer than any stall of a loaded suite, and short enough to have ended before a sanitizer run
  /// exits (LeakSanitizer reports a delay still pending as a leak).
  struct WaitingFetch {
    let service: FetcherService
    let fetcher: SessionFetcher
    let recorder: NotificationRecorder
    let results = Recorder<FetchResult>()

    init(_ server: TestServer, key: String, earlyRetry: Bool) async {
      service = makeService()
      service.isRetryEnabled = true
      service.minRetryInterval = 45
      service.maxRetryInterval = 600
      service.isEarlyRetryEnabled = earlyRetry
      fetcher = service.fetcher(url: server.url("/fail-first?n=1&key=\(key)&status=503"))
      recorder = NotificationRecorder([fetcher])
      let results = self.results
      fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
      #expect(await eventually { recorder.count(.sessionFetcherRetryDelayStarted) == 1 })
    }
  }

  /// A fetcher waiting out a 45 s retry delay retries at once when another fetch to its host
  /// succeeds.
  @Test func aSuccessOnTheHostEndsTheRetryDelay() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let waiting = await WaitingFetch(server, key: "early", earlyRetry: true)
    // Still in the running map: a retrying fetcher keeps its slot.
    #expect(waiting.service.runningFetchersByHost["127.0.0.1"] == [waiting.fetcher])

    #expect(await waiting.service.fetcher(url: server.url("/text?value=ok")).fetchResult().error == nil)
    #expect(await eventually(timeout: 30) { waiting.results.count == 1 })
    #expect(waiting.results.values.first?.error == nil)
    #expect(waiting.fetcher.retryCount == 1)
    #expect(server.requestCount(path: "/fail-first") == 2)
    await drain(waiting.service.callbackQueue)
    #expect(waiting.recorder.count(.sessionFetcherRetryDelayStopped) == 1)
  }

  @Test func otherHostsAndFailuresDoNotEndTheDelay() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let waiting = await WaitingFetch(server, key: "other", earlyRetry: true)
    let service = waiting.service
    // Success on another host, and a failure on the same host.
    #expect(await service.fetcher(url: server.localhostURL("/text?value=ok")).fetchResult().error == nil)
    #expect(await service.fetcher(url: server.url("/status/404")).fetchResult().error != nil)
    await pause(0.5)
    #expect(waiting.results.count == 0)
    #expect(server.requestCount(path: "/fail-first") == 1)
    waiting.fetcher.stopFetching()
  }

  @Test func offByDefault() async throws {
    let server = try TestServer()
    defer { server.stop() }
    #expect(!FetcherService().isEarlyRetryEnabled)
    let waiting = await WaitingFetch(server, key: "off", earlyRetry: false)
    #expect(await waiting.service.fetcher(url: server.url("/text?value=ok")).fetchResult().error == nil)
    await pause(0.5)
    #expect(server.requestCount(path: "/fail-first") == 1)
    waiting.fetcher.stopFetching()
    #expect(waiting.service.numberOfFetchers == 0)
  }
}
