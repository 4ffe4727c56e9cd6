import FetcherService
import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

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

  /// A fetcher that ends while the wait waits for another leaves the service before its completion
  /// runs: the wait, which saw it, still waits for its completion.
  @Test func aFetcherThatLeftTheServiceIsWaitedForUntilItsCompletionRan() async throws {
    let engine = ScriptedEngine()
    let (first, second) = (ScriptedGate(), ScriptedGate())
    engine.respond(to: "/first", with: ScriptedExchange([.wait(first), .head(status: 200)]))
    engine.respond(to: "/second", with: ScriptedExchange([.wait(second), .head(status: 200)]))
    let service = ScriptedServiceTests.service(engine)
    // Begun first, so that the wait waits for it first.
    let waitedFirst = service.fetcher(url: engine.url("/first"))
    waitedFirst.callbackQueue = DispatchQueue(label: "test.wait-all.first")
    waitedFirst.beginFetch { _, _ in }
    // Its completion cannot run until the test lets its queue go.
    let blockedQueue = DispatchQueue(label: "test.wait-all.blocked")
    let release = DispatchSemaphore(value: 0)
    blockedQueue.async { release.wait() }
    let endsMeanwhile = service.fetcher(url: engine.url("/second"))
    endsMeanwhile.callbackQueue = blockedQueue
    let completed = Locked(false)
    endsMeanwhile.beginFetch { _, _ in completed.withLock { $0 = true } }
    #expect(await eventually { engine.requests.count == 2 })
    let waiting = Task { await offThePool { service.waitForCompletionOfAllFetchers(timeout: 2) } }
    // The wait has seen both and waits for the first.
    #expect(
      await eventually {
        waitedFirst.storage.withLock { $0.lifecycle.begunRun?.completionWaiters != nil }
      })
    second.open()
    #expect(await eventually { service.numberOfFetchers == 1 })
    first.open()
    // Both left the service; the second's completion has not run, so the wait times out.
    #expect(await waiting.value == false)
    #expect(await eventually { service.numberOfFetchers == 0 })
    #expect(!completed.current)
    release.signal()
    #expect(await eventually { completed.current })
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
    // A fetcher that left the service before the wait looked (its fetch ended as the gate opened)
    // is not one the wait saw: its completion may still be on its way.
    #expect(await eventually { completed.current })
  }

  @Test func aServiceWithNoFetchersReturnsAtOnce() {
    #expect(ScriptedServiceTests.service(ScriptedEngine()).waitForCompletionOfAllFetchers(timeout: 0))
  }
}
