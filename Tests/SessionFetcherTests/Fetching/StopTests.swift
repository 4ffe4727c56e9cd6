import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// Stopping on each engine's wire. What a stop decides (one completion, none without the flag,
/// balanced notifications, nothing sent when stopped while authorizing) is checked without sockets
/// in ScriptedStopTests and ScriptedAuthorizerTests.
@Suite("Stopping", .ownThreads)
struct StopTests {
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

  @Test func beginAndStopRaceFromManyThreads() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let queue = makeCallbackQueue()
    let counter = NotificationRecorder()
    let completions = Recorder<SessionFetcherError?>()
    let count = 200
    let references: [WeakReference<SessionFetcher>]
    do {
      let fetchers = (0..<count).map { _ in server.fetcher("/delay/0.01", queue: queue) }
      references = fetchers.map { WeakReference($0) }
      for fetcher in fetchers {
        counter.watch(fetcher)
        fetcher.stopFetchingTriggersCompletionHandler = true
      }
      await offThePool { raceBeginAgainstStop(fetchers, completions: completions) }
    }
    // Every fetcher completes exactly once: fetched, or cancelled (whichever came first).
    #expect(await eventually(timeout: 60) { completions.count == count })
    // A completion is delivered by a block on the callback queue that holds its fetcher: once every
    // fetcher is freed and the queue drained, no second one can come.
    #expect(await eventually(timeout: 60) { references.allSatisfy { $0.object == nil } })
    await drain(queue)
    #expect(completions.count == count)
    #expect(counter.started == counter.stopped)
  }
}
