import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("Early retry on the scripted engine")
struct ScriptedEarlyRetryTests {
  /// A service that retries after 45 s, and one of its fetchers waiting out that delay after a 503.
  /// Longer than any stall of a loaded suite, and short enough to have ended before a sanitizer run
  /// exits (LeakSanitizer reports a delay still pending as a leak).
  struct WaitingFetch {
    let engine = ScriptedEngine()
    let service: FetcherService
    let fetcher: SessionFetcher
    let recorder: NotificationRecorder
    let results = Recorder<FetchResult>()

    init(earlyRetry: Bool) async {
      engine.respond(to: "/retry", with: .response(status: 503), .response(body: Data("retried".utf8)))
      engine.respond(to: "/ok", with: .response(body: Data("ok".utf8)))
      engine.respond(to: "/missing", with: .response(status: 404))
      service = ScriptedServiceTests.service(engine)
      service.isRetryEnabled = true
      service.minRetryInterval = 45
      service.maxRetryInterval = 600
      service.isEarlyRetryEnabled = earlyRetry
      fetcher = service.fetcher(url: engine.url("/retry"))
      recorder = NotificationRecorder([fetcher])
      let results = self.results
      fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
      #expect(await eventually { recorder.count(.sessionFetcherRetryDelayStarted) == 1 })
    }

    /// Fetches `url` on the same service and waits until whatever its end set off has run: the
    /// service hands an early retry to the retry queue before the completion is delivered, and the
    /// retry's RetryDelayStopped goes to the callback queue.
    func fetchBeside(_ url: URL) async -> FetchResult {
      let result = await service.fetcher(url: url).fetchResult()
      await drain(RetryDelay.queue)
      await drain(service.callbackQueue)
      await engine.drainEvents()
      return result
    }
  }

  /// A fetcher waiting out a 45 s retry delay retries at once when another fetch to its host
  /// succeeds.
  @Test func aSuccessOnTheHostEndsTheRetryDelay() async throws {
    let waiting = await WaitingFetch(earlyRetry: true)
    // Still in the running map: a retrying fetcher keeps its slot.
    #expect(waiting.service.runningFetchersByHost["scripted.test"] == [waiting.fetcher])

    #expect(await waiting.fetchBeside(waiting.engine.url("/ok")).error == nil)
    #expect(await eventually { waiting.results.count == 1 })
    #expect(waiting.results.values.first?.data == Data("retried".utf8))
    #expect(waiting.fetcher.retryCount == 1)
    #expect(waiting.engine.requests(matching: "/retry").count == 2)
    await drain(waiting.service.callbackQueue)
    #expect(waiting.recorder.count(.sessionFetcherRetryDelayStopped) == 1)
  }

  @Test func otherHostsAndFailuresDoNotEndTheDelay() async throws {
    let waiting = await WaitingFetch(earlyRetry: true)
    // Success on another host, and a failure on the same host.
    #expect(await waiting.fetchBeside(URL(string: "https://other.test/ok")!).error == nil)
    #expect(await waiting.fetchBeside(waiting.engine.url("/missing")).error != nil)
    #expect(waiting.results.count == 0)
    #expect(waiting.engine.requests(matching: "/retry").count == 1)
    #expect(waiting.recorder.count(.sessionFetcherRetryDelayStopped) == 0)
    waiting.fetcher.stopFetching()
  }

  @Test func offByDefault() async throws {
    #expect(!FetcherService().isEarlyRetryEnabled)
    let waiting = await WaitingFetch(earlyRetry: false)
    #expect(await waiting.fetchBeside(waiting.engine.url("/ok")).error == nil)
    #expect(waiting.engine.requests(matching: "/retry").count == 1)
    #expect(waiting.recorder.count(.sessionFetcherRetryDelayStopped) == 0)
    waiting.fetcher.stopFetching()
    #expect(waiting.service.numberOfFetchers == 0)
  }
}
