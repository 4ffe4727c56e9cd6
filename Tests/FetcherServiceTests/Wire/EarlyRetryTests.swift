import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("Early retry")
struct EarlyRetryTests {
  private func waitingFetcher(_ service: FetcherService, _ server: TestServer, key: String) -> SessionFetcher
  {
    let fetcher = service.fetcher(url: server.url("/fail-first?n=1&key=\(key)&status=503"))
    return fetcher
  }

  /// A fetcher waiting out a 30 s retry delay retries at once when another fetch to its host
  /// succeeds.
  @Test func aSuccessOnTheHostEndsTheRetryDelay() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.isRetryEnabled = true
    service.minRetryInterval = 30
    service.maxRetryInterval = 600
    service.isEarlyRetryEnabled = true
    let waiting = waitingFetcher(service, server, key: "early")
    let recorder = NotificationRecorder([waiting])
    let results = Recorder<FetchResult>()
    waiting.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    #expect(await eventually { recorder.count(.sessionFetcherRetryDelayStarted) == 1 })
    // Still in the running map: a retrying fetcher keeps its slot.
    #expect(service.runningFetchersByHost["127.0.0.1"] == [waiting])

    #expect(await service.fetcher(url: server.url("/text?value=ok")).fetchResult().error == nil)
    #expect(await eventually(timeout: 8) { results.count == 1 })
    #expect(results.values.first?.error == nil)
    #expect(waiting.retryCount == 1)
    #expect(server.requestCount(path: "/fail-first") == 2)
    await drain(service.callbackQueue)
    #expect(recorder.count(.sessionFetcherRetryDelayStopped) == 1)
  }

  @Test func otherHostsAndFailuresDoNotEndTheDelay() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.isRetryEnabled = true
    service.minRetryInterval = 30
    service.maxRetryInterval = 600
    service.isEarlyRetryEnabled = true
    let waiting = waitingFetcher(service, server, key: "other")
    let recorder = NotificationRecorder([waiting])
    let results = Recorder<FetchResult>()
    waiting.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    #expect(await eventually { recorder.count(.sessionFetcherRetryDelayStarted) == 1 })
    // Success on another host, and a failure on the same host.
    #expect(await service.fetcher(url: server.localhostURL("/text?value=ok")).fetchResult().error == nil)
    #expect(await service.fetcher(url: server.url("/status/404")).fetchResult().error != nil)
    await pause(0.5)
    #expect(results.count == 0)
    #expect(server.requestCount(path: "/fail-first") == 1)
    waiting.stopFetching()
  }

  @Test func offByDefault() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.isRetryEnabled = true
    service.minRetryInterval = 30
    service.maxRetryInterval = 600
    let waiting = waitingFetcher(service, server, key: "off")
    let recorder = NotificationRecorder([waiting])
    waiting.beginFetch { _, _ in }
    #expect(await eventually { recorder.count(.sessionFetcherRetryDelayStarted) == 1 })
    #expect(await service.fetcher(url: server.url("/text?value=ok")).fetchResult().error == nil)
    await pause(0.5)
    #expect(server.requestCount(path: "/fail-first") == 1)
    waiting.stopFetching()
    #expect(service.numberOfFetchers == 0)
  }
}
