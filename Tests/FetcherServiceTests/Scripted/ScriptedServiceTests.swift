import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A service on the scripted engine: its fetchers, on its shared session or on a configuration of
/// their own, run on the engine, with the service's defaults.
@Suite("FetcherService on the scripted engine")
struct ScriptedServiceTests {
  static func service(_ engine: ScriptedEngine, maxPerHost: Int = 10) -> FetcherService {
    let service = FetcherService()
    service.callbackQueue = DispatchQueue(label: "test.scripted.service")
    service.maxRunningFetchersPerHost = maxPerHost
    service.run(on: engine)
    return service
  }

  @Test func fetchersTakeTheServiceRetryLimitWhenMade() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/busy", with: .response(status: 503))
    let service = Self.service(engine)
    #expect(service.maxRetryCount == nil)
    service.isRetryEnabled = true
    service.minRetryInterval = 0.01
    service.maxRetryCount = 1
    let fetcher = service.fetcher(url: engine.url("/busy"))
    service.maxRetryCount = 5  // Fetchers already made keep their copy.
    #expect(fetcher.maxRetryCount == 1)
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 503)
    #expect(engine.requests.count == 2)
    #expect(engine.sessionCount == 1)
    #expect(service.fetcher(urlString: "https://example.com/").maxRetryCount == 5)
  }

  @Test func aNegativeServiceRetryLimitFailsItsFetchersAtBegin() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/one", with: .response(body: Data("1".utf8)))
    let service = Self.service(engine)
    service.maxRetryCount = -2
    let result = await service.fetcher(url: engine.url("/one")).fetchResult()
    guard case .invalidConfiguration? = result.fetcherError else {
      Issue.record("expected invalidConfiguration, got \(String(describing: result.error))")
      return
    }
    #expect(engine.requests.isEmpty)
  }

  /// A service that makes no shared session (a configuration per fetcher) still runs on the engine,
  /// with the configuration's additional headers on each request.
  @Test func fetchersWithAConfigurationOfTheirOwnRunOnTheEngine() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/one", with: .response(body: Data("1".utf8)))
    let service = Self.service(engine)
    service.reuseSession = false
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpAdditionalHeaders = ["X-Session": "own"]
    service.configuration = configuration
    #expect(await service.fetcher(url: engine.url("/one")).fetchResult().data == Data("1".utf8))
    #expect(await service.fetcher(url: engine.url("/one")).fetchResult().data == Data("1".utf8))
    #expect(engine.requests.map { $0.header("X-Session") } == ["own", "own"])
    #expect(engine.sessionCount == 2)
  }

  /// The original's testStopAllFetchers: 2 running (stalled) and 1 delayed by the host limit; all
  /// stop, each exchange is cancelled, and a fetcher begun afterwards runs.
  @Test func stopAllFetchersStopsRunningAndDelayedOnes() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/hang", with: .stall)
    engine.respond(to: "/after", with: .response(body: Data("after".utf8)))
    let service = Self.service(engine, maxPerHost: 2)
    service.stopFetchingTriggersCompletionHandler = true
    let fetchers = (0..<3).map { service.fetcher(url: engine.url("/hang?i=\($0)")) }
    let results = Recorder<FetchResult>()
    for fetcher in fetchers {
      fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    }
    #expect(await eventually { engine.requests.count == 2 })
    #expect(service.numberOfRunningFetchers == 2)
    #expect(service.numberOfDelayedFetchers == 1)
    service.stopAllFetchers()
    #expect(service.numberOfFetchers == 0)
    #expect(await eventually { results.count == 3 })
    #expect(results.values.allSatisfy { $0.fetcherError == .cancelled && $0.data == nil })
    #expect(await eventually { engine.requests.allSatisfy(\.wasCancelled) })
    #expect(engine.requests.count == 2)
    let result = await service.fetcher(url: engine.url("/after")).fetchResult()
    #expect(result.data == Data("after".utf8))
  }
}
