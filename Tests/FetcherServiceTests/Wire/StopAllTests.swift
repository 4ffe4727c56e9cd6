import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("stopAllFetchers")
struct StopAllTests {
  /// The original's testStopAllFetchers{,WithCallbacks}: 2+2 running and 1+1 delayed.
  @Test(arguments: [false, true])
  func stopsRunningAndDelayedFetchers(withCallbacks: Bool) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService(maxPerHost: 2)
    service.stopFetchingTriggersCompletionHandler = withCallbacks
    var fetchers: [SessionFetcher] = []
    for index in 0..<6 {
      let path = "/hang?i=\(index)"
      let url = index % 2 == 0 ? server.url(path) : server.localhostURL(path)
      fetchers.append(service.fetcher(url: url))
    }
    let recorder = NotificationRecorder(fetchers)
    let results = Recorder<FetchResult>()
    for fetcher in fetchers {
      fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    }
    #expect(await eventually { server.requestCount(path: "/hang") == 4 })
    #expect(service.numberOfRunningFetchers == 4)
    #expect(service.numberOfDelayedFetchers == 2)
    #expect(service.delayedFetchersByHost.mapValues(\.count) == ["127.0.0.1": 1, "localhost": 1])

    service.stopAllFetchers()
    #expect(service.numberOfFetchers == 0)
    #expect(service.numberOfRunningFetchers == 0)
    #expect(service.numberOfDelayedFetchers == 0)
    #expect(service.runningFetchersByHost.isEmpty && service.delayedFetchersByHost.isEmpty)
    #expect(fetchers.allSatisfy { !$0.isFetching })

    // Nothing runs later: no completion without the flag, exactly one `.cancelled` each with it.
    await pause(0.3)
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
    #expect(server.requestCount(path: "/hang") == 4)

    // A fetcher begun afterwards runs normally.
    let after = service.fetcher(url: server.url("/text?value=after"))
    let result = await after.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == Data("after".utf8))
    #expect(service.numberOfFetchers == 0)
  }
}
