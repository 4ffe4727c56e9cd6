import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

@Suite("Stopping", .ownThreads)
struct StopTests {
  @Test func stopWithCallbackCompletesOnceAsCancelled() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/hang")
    fetcher.stopFetchingTriggersCompletionHandler = true
    let errors = Recorder<SessionFetcherError?>()
    fetcher.beginFetch { _, error in errors.append(error as? SessionFetcherError) }
    #expect(await eventually { server.requestCount(path: "/hang") == 1 })
    fetcher.stopFetching()
    fetcher.stopFetching()
    #expect(await eventually { errors.count == 1 })
    try await Task.sleep(nanoseconds: 100_000_000)
    #expect(errors.values == [.cancelled])
  }

  @Test func stopBeforeBeginPreventsTheFetch() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let silent = server.fetcher("/bytes/1")
    let counter = NotificationRecorder([silent])
    silent.stopFetching()
    silent.beginFetch { _, _ in Issue.record("no completion without the flag") }
    let notified = server.fetcher("/bytes/1")
    notified.stopFetchingTriggersCompletionHandler = true
    notified.stopFetching()
    let result = await notified.fetchResult()
    #expect(result.fetcherError == .cancelled)
    await drain(silent.callbackQueue)
    #expect(server.requests.isEmpty)
    #expect(counter.started == 0)
  }

  @Test func quickBeginStopPairsStayBalanced() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let queue = makeCallbackQueue()
    let counter = NotificationRecorder()
    let completions = Recorder<Int>()
    // As with main-queue callbacks in the original test, nothing queued may run between a begin
    // and its stop; a fetch that completes on the wire in that window must still not call back.
    queue.suspend()
    // On a thread of its own: on the URLSession engine each begin and stop waits for
    // FoundationNetworking's work queue, which would hold a thread of the cooperative pool.
    let fetchers = await offThePool {
      (0..<1000).map { _ in
        let fetcher = server.fetcher("/bytes/10", queue: queue)
        counter.watch(fetcher)
        fetcher.beginFetch { _, _ in completions.append(1) }
        fetcher.stopFetching()
        return fetcher
      }
    }
    #expect(fetchers.allSatisfy { !$0.isFetching })
    queue.resume()
    await drain(queue)
    try await Task.sleep(nanoseconds: 200_000_000)
    await drain(queue)
    #expect(completions.count == 0)
    #expect(counter.started == counter.stopped)
    #expect(counter.completionInvoked == 0)
  }

  @Test func beginAndStopRaceFromManyThreads() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let queue = makeCallbackQueue()
    let counter = NotificationRecorder()
    let completions = Recorder<SessionFetcherError?>()
    let fetchers = (0..<200).map { _ in server.fetcher("/delay/0.01", queue: queue) }
    for fetcher in fetchers {
      counter.watch(fetcher)
      fetcher.stopFetchingTriggersCompletionHandler = true
    }
    await offThePool {
      DispatchQueue.concurrentPerform(iterations: fetchers.count * 2) { index in
        let fetcher = fetchers[index / 2]
        if index % 2 == 0 {
          fetcher.beginFetch { _, error in completions.append(error as? SessionFetcherError) }
        } else {
          fetcher.stopFetching()
        }
      }
    }
    // Every fetcher completes exactly once: fetched, or cancelled (whichever came first).
    #expect(await eventually(timeout: 60) { completions.count == fetchers.count })
    try await Task.sleep(nanoseconds: 200_000_000)
    await drain(queue)
    #expect(completions.count == fetchers.count)
    #expect(counter.started == counter.stopped)
  }

  @Test func stopDuringAuthorizationSendsNothing() async throws {
    struct SlowAuthorizer: FetcherAuthorizer {
      func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
        try await Task.sleep(nanoseconds: 200_000_000)
        return request
      }
    }
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/bytes/1")
    fetcher.authorizer = SlowAuthorizer()
    fetcher.stopFetchingTriggersCompletionHandler = true
    let counter = NotificationRecorder([fetcher])
    let errors = Recorder<SessionFetcherError?>()
    fetcher.beginFetch { _, error in errors.append(error as? SessionFetcherError) }
    fetcher.stopFetching()
    #expect(await eventually { errors.count == 1 })
    try await Task.sleep(nanoseconds: 400_000_000)
    #expect(errors.values == [.cancelled])
    #expect(server.requests.isEmpty)
    #expect(counter.started == 0 && counter.stopped == 0)
  }
}
