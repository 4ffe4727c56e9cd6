import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

@Suite("Waiting for fetches", .ownThreads)
struct FetchWaitingTests {
  private func fetcher(_ server: TestServer, _ path: String) -> SessionFetcher {
    let fetcher = SessionFetcher.fetcher(url: server.url(path))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = DispatchQueue(label: "test.fetch-waiting")
    fetcher.cookieStorage = SessionCookieStorage()
    return fetcher
  }

  @Test func fetchResultGivesTheCompletion() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let result = await fetcher(server, "/bytes/1000").fetchResult()
    #expect(result.error == nil)
    #expect(result.data == TestServer.patternBytes(count: 1000))

    let missing = await fetcher(server, "/status/404").fetchResult()
    #expect(missing.fetcherError?.statusCode == 404)
  }

  @Test func fetchResultGivesUpAtItsBound() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let hanging = fetcher(server, "/hang")
    let result = await hanging.fetchResult(timeout: 0.3)
    #expect(result.error is FetchTimeout)
    #expect(result.data == nil)
    hanging.stopFetching()
  }

  @Test func eventuallyHoldsOrRunsOut() async {
    let recorder = Recorder<Int>()
    DispatchQueue.global().async { recorder.append(1) }
    #expect(await eventually { recorder.count == 1 })
    #expect(await eventually(timeout: 0.05) { recorder.count == 2 } == false)
  }

  @Test func recorderKeepsOrderAndAFirstValue() async {
    let recorder = Recorder<Int>()
    #expect(recorder.appendIfEmpty(7))
    #expect(!recorder.appendIfEmpty(8))
    recorder.append(9)
    #expect(recorder.values == [7, 9])
    let queue = DispatchQueue(label: "test.drain")
    queue.async { recorder.append(10) }
    await drain(queue)
    #expect(recorder.values == [7, 9, 10])
  }

  @Test func notificationRecorderSeesOnlyTheFetchersItWatches() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let first = fetcher(server, "/bytes/10")
    let second = fetcher(server, "/bytes/10")
    let other = fetcher(server, "/bytes/10")
    let recorder = NotificationRecorder([first])
    recorder.watch(second)
    _ = await first.fetchResult()
    _ = await second.fetchResult()
    _ = await other.fetchResult()
    #expect(await eventually { recorder.completionInvoked == 2 })
    #expect(recorder.started == 2 && recorder.stopped == 2)
    #expect(recorder.retryDelayStarted == 0)
    #expect(
      recorder.order(of: .sessionFetcherStarted) == [ObjectIdentifier(first), ObjectIdentifier(second)])
  }

  @Test func gateHoldsUntilOpenedOrItsBound() async {
    // The waiter records whether the gate had been opened when it passed: only after `open()`,
    // which comes once the waiter is at the gate.
    let gate = Gate()
    let ready = Recorder<Bool>()
    let opened = Recorder<Bool>()
    let passed = Recorder<Bool>()
    DispatchQueue.global().async {
      ready.append(true)
      gate.wait()
      passed.append(opened.count == 1)
    }
    #expect(await eventually { ready.count == 1 })
    opened.append(true)
    gate.open()
    #expect(await eventually { passed.count == 1 })
    #expect(passed.values == [true])

    let closed = Gate()
    let start = Date()
    closed.wait(timeout: 0.05)
    #expect(Date().timeIntervalSince(start) >= 0.04)
  }
}
