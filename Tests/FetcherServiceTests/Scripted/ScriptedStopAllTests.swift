import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("stopAllFetchers on the scripted engine")
struct ScriptedStopAllTests {
  /// The original's testStopAllFetchers{,WithCallbacks}: 2+2 running and 1+1 delayed over two
  /// hosts. Every running exchange is cancelled; what follows the cancellations has run once the
  /// engine's events and the callback queue are drained.
  @Test(arguments: [false, true])
  func stopsRunningAndDelayedFetchers(withCallbacks: Bool) async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/hang", with: .stall)
    engine.respond(to: "/after", with: .response(body: Data("after".utf8)))
    let service = ScriptedServiceTests.service(engine, maxPerHost: 2)
    service.stopFetchingTriggersCompletionHandler = withCallbacks
    let fetchers = (0..<6).map { index in
      let origin = index % 2 == 0 ? ScriptedEngine.origin : "https://other.test"
      return service.fetcher(url: URL(string: "\(origin)/hang?i=\(index)")!)
    }
    let recorder = NotificationRecorder(fetchers)
    let results = Recorder<FetchResult>()
    for fetcher in fetchers {
      fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    }
    #expect(await eventually { engine.requests.count == 4 })
    #expect(service.numberOfRunningFetchers == 4)
    #expect(service.numberOfDelayedFetchers == 2)
    #expect(service.delayedFetchersByHost.mapValues(\.count) == ["scripted.test": 1, "other.test": 1])

    service.stopAllFetchers()
    #expect(service.numberOfFetchers == 0)
    #expect(service.numberOfRunningFetchers == 0)
    #expect(service.numberOfDelayedFetchers == 0)
    #expect(service.runningFetchersByHost.isEmpty && service.delayedFetchersByHost.isEmpty)
    #expect(fetchers.allSatisfy { !$0.isFetching })

    // Nothing runs later: no completion without the flag, exactly one `.cancelled` each with it.
    #expect(await eventually { engine.requests.allSatisfy { $0.wasCancelled && $0.hasCompleted } })
    await engine.drainEvents()
    await drain(service.callbackQueue)
    if withCallbacks {
      #expect(results.count == 6)
      #expect(results.values.allSatisfy { $0.fetcherError == .cancelled && $0.data == nil })
    } else {
      #expect(results.count == 0)
    }
    // Started/Stopped pair up for the 4 that ran; the delayed ones posted nothing.
    #expect(recorder.started == 4)
    #expect(recorder.stopped == 4)
    #expect(engine.requests.count == 4)

    // A fetcher begun afterwards runs normally.
    let after = service.fetcher(url: engine.url("/after"))
    let result = await after.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == Data("after".utf8))
    #expect(service.numberOfFetchers == 0)
  }
}
