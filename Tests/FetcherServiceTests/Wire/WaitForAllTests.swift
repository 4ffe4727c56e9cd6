import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// The original's `waitForCompletionOfAllFetchersWithTimeout:`: running and held-back fetchers are
/// waited for, and a fetch that does not end makes the wait time out.
@Suite("Waiting for all of a service's fetchers")
struct WaitForAllTests {
  @Test func waitsForRunningAndDelayedFetchers() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let meter = ConcurrencyMeter()
    server.meteredRoute("/slow", meter: meter, delay: 0.2)
    let service = makeService(maxPerHost: 1)
    let completions = Recorder<Int>()
    for index in 0..<3 {
      let fetcher = service.fetcher(url: server.url("/slow?i=\(index)"))
      fetcher.callbackQueue = DispatchQueue(label: "test.wait-all.\(index)")
      fetcher.beginFetch { _, _ in completions.append(index) }
    }
    #expect(service.numberOfDelayedFetchers == 2)
    let finished = await offThePool { service.waitForCompletionOfAllFetchers(timeout: 60) }
    #expect(finished)
    #expect(completions.count == 3)
    #expect(service.numberOfFetchers == 0)
  }

  @Test func aFetchThatDoesNotEndMakesTheWaitTimeOut() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let meter = ConcurrencyMeter()
    let gate = Gate()
    server.meteredRoute("/held", meter: meter, gate: gate)
    let service = makeService()
    let fetcher = service.fetcher(url: server.url("/held"))
    fetcher.callbackQueue = DispatchQueue(label: "test.wait-all.held")
    let completed = Locked(false)
    fetcher.beginFetch { _, _ in completed.withLock { $0 = true } }
    #expect(await eventually { server.requestCount(path: "/held") == 1 })
    let finished = await offThePool { service.waitForCompletionOfAllFetchers(timeout: 0.3) }
    #expect(!finished)
    #expect(!completed.current)
    gate.open()
    #expect(await offThePool { service.waitForCompletionOfAllFetchers(timeout: 60) })
    #expect(completed.current)
  }

  @Test func aServiceWithNoFetchersReturnsAtOnce() {
    #expect(makeService().waitForCompletionOfAllFetchers(timeout: 0))
  }
}
