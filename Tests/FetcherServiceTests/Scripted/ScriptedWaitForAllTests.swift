import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// The original's `waitForCompletionOfAllFetchersWithTimeout:` on the scripted engine: running and
/// held-back fetchers are waited for, and a fetch that does not end makes the wait time out.
@Suite("Waiting for all of a service's fetchers, on the scripted engine")
struct ScriptedWaitForAllTests {
  /// One running fetcher and two held back by the limit of one per host, each answering once the
  /// test opens its gate: the wait returns only after the last one completed.
  @Test func waitsForRunningAndDelayedFetchers() async throws {
    let engine = ScriptedEngine()
    let gates = (0..<3).map { _ in ScriptedGate() }
    for (index, gate) in gates.enumerated() {
      engine.respond(to: "/slow?i=\(index)", with: ScriptedExchange([.wait(gate), .head(status: 200)]))
    }
    let service = ScriptedServiceTests.service(engine, maxPerHost: 1)
    let completions = Recorder<Int>()
    for index in 0..<3 {
      let fetcher = service.fetcher(url: engine.url("/slow?i=\(index)"))
      fetcher.callbackQueue = DispatchQueue(label: "test.wait-all.\(index)")
      fetcher.beginFetch { _, _ in completions.append(index) }
    }
    #expect(service.numberOfDelayedFetchers == 2)
    let returned = Locked(false)
    let waiting = Task {
      await offThePool {
        let finished = service.waitForCompletionOfAllFetchers(timeout: 60)
        returned.withLock { $0 = true }
        return (finished, completions.count)
      }
    }
    for (index, gate) in gates.enumerated() {
      #expect(await eventually { engine.requests.count == index + 1 })
      // Whatever ended so far, a fetcher is still running or held back.
      #expect(!returned.current)
      gate.open()
    }
    let (finished, completedWhenReturned) = await waiting.value
    #expect(finished)
    #expect(completedWhenReturned == 3)
    #expect(service.numberOfFetchers == 0)
  }

  @Test func aFetchThatDoesNotEndMakesTheWaitTimeOut() async throws {
    let engine = ScriptedEngine()
    let gate = ScriptedGate()
    engine.respond(to: "/held", with: ScriptedExchange([.wait(gate), .head(status: 200)]))
    let service = ScriptedServiceTests.service(engine)
    let fetcher = service.fetcher(url: engine.url("/held"))
    fetcher.callbackQueue = DispatchQueue(label: "test.wait-all.held")
    let completed = Locked(false)
    fetcher.beginFetch { _, _ in completed.withLock { $0 = true } }
    #expect(await eventually { engine.requests.count == 1 })
    #expect(await offThePool { !service.waitForCompletionOfAllFetchers(timeout: 0.1) })
    #expect(!completed.current)
    gate.open()
    #expect(await offThePool { service.waitForCompletionOfAllFetchers(timeout: 60) })
    // The completion runs on its callback queue, which the wait does not wait for (as in the
    // original, whose fetchers leave the service as their callbacks are dispatched).
    #expect(await eventually { completed.current })
  }

  @Test func aServiceWithNoFetchersReturnsAtOnce() {
    #expect(ScriptedServiceTests.service(ScriptedEngine()).waitForCompletionOfAllFetchers(timeout: 0))
  }
}
