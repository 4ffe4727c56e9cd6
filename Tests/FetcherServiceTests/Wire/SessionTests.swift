import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

@Suite("Sessions", .ownThreads)
struct SessionTests {
  /// The original's testSessionReuse: one session for many fetchers, or one each.
  @Test func oneSharedSessionForManyFetchers() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let blockCalls = Recorder<Bool>()
    service.configurationBlock = { _ in blockCalls.append(true) }
    for index in 0..<4 {
      let result = await service.fetcher(url: server.url("/text?value=\(index)")).fetchResult()
      #expect(result.error == nil)
    }
    #expect(service.sharedSessionCreationCount == 1)
    #expect(blockCalls.count == 1)
    let session = try #require(service.currentSharedSession)
    #expect(!session.isInvalidated)
    // Sequential requests on one session reuse its kept-alive connection.
    #expect(Set(server.requests(path: "/text").map(\.connectionID)).count < 4)
  }

  @Test func aServiceThatIsGoneClosesItsSession() async throws {
    let server = try TestServer()
    defer { server.stop() }
    var service: FetcherService? = makeService()
    weak let weakService = service
    let result = await service?.fetcher(url: server.url("/text?value=x")).fetchResult()
    #expect(result?.error == nil)
    let session = try #require(service?.currentSharedSession)
    #expect(!session.isInvalidated)
    service = nil
    // The fetcher lets go of its service once its completion has been delivered.
    #expect(await eventually { weakService == nil })
    #expect(await eventually { session.isInvalidated })
  }

  @Test func aSessionPerFetcherWithoutReuse() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.reuseSession = false
    let blockCalls = Recorder<Bool>()
    service.configurationBlock = { _ in blockCalls.append(true) }
    for index in 0..<4 {
      let result = await service.fetcher(url: server.url("/text?value=\(index)")).fetchResult()
      #expect(result.error == nil)
    }
    #expect(service.sharedSessionCreationCount == 0)
    #expect(service.currentSharedSession == nil)
    #expect(blockCalls.count == 4)
    // Each session opens its own connection.
    #expect(Set(server.requests(path: "/text").map(\.connectionID)).count == 4)
  }

  @Test func configurationAppliesToTheSharedSession() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpAdditionalHeaders = ["X-From-Configuration": "yes"]
    service.configuration = configuration
    let fetcher = service.fetcher(url: server.url("/headers"))
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(server.requests(path: "/headers").first?.header("X-From-Configuration") == "yes")
  }

  @Test func resetSessionMakesANewSessionAndRetiresTheOld() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    #expect(await service.fetcher(url: server.url("/text?value=1")).fetchResult().error == nil)
    let first = try #require(service.currentSharedSession)
    service.resetSession()
    #expect(service.currentSharedSession == nil)
    #expect(first.isInvalidated)
    #expect(await service.fetcher(url: server.url("/text?value=2")).fetchResult().error == nil)
    let second = try #require(service.currentSharedSession)
    #expect(first !== second)
    #expect(service.sharedSessionCreationCount == 2)
  }

  /// A fetcher that took the session before a reset (here: waiting for a slot) finishes on it;
  /// the old session is invalidated only afterwards, never under a task being made.
  @Test func resetWhileFetchersStillUseTheSession() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let gate = Gate()
    server.meteredRoute("/slow", meter: ConcurrencyMeter(), gate: gate)
    let service = makeService(maxPerHost: 1)
    let results = Recorder<FetchResult>()
    for index in 0..<3 {
      service.fetcher(url: server.url("/slow?i=\(index)")).beginFetch { data, error in
        results.append(FetchResult(data: data, error: error))
      }
    }
    #expect(await eventually { service.numberOfDelayedFetchers == 2 })
    let old = try #require(service.currentSharedSession)
    service.resetSession()
    #expect(!old.isInvalidated)
    gate.open()
    #expect(await eventually(timeout: 60) { results.count == 3 })
    #expect(results.values.allSatisfy { $0.error == nil })
    #expect(await eventually { old.isInvalidated })
  }

  @Test func anUnusedSessionIsDroppedAfterTheTimeout() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let gate = Gate()
    server.meteredRoute("/slow", meter: ConcurrencyMeter(), gate: gate)
    let service = makeService()
    service.unusedSessionTimeout = 0.3
    let invalidations = Recorder<Bool>()
    let observer = NotificationCenter.default.addObserver(
      forName: .fetcherServiceSessionBecameInvalid, object: service, queue: nil
    ) { _ in invalidations.append(true) }
    defer { NotificationCenter.default.removeObserver(observer) }
    let results = Recorder<FetchResult>()
    service.fetcher(url: server.url("/slow?i=1")).beginFetch { data, error in
      results.append(FetchResult(data: data, error: error))
    }
    #expect(await eventually { server.requestCount(path: "/slow") == 1 })
    // In use: kept, however long it takes.
    let first = try #require(service.currentSharedSession)
    await pause(0.5)
    #expect(service.currentSharedSession === first)
    gate.open()
    #expect(await eventually { results.count == 1 })
    #expect(await eventually { service.currentSharedSession == nil })
    #expect(first.isInvalidated)
    #expect(await eventually { invalidations.count == 1 })
    #expect(await service.fetcher(url: server.url("/text?value=2")).fetchResult().error == nil)
    #expect(service.sharedSessionCreationCount == 2)
  }

  /// The service's default session keeps to the library's per-host limit (on Linux 4 for
  /// URLSession, where libcurl closes and reopens connections above it; 16 for the libcurl
  /// engine), however many fetchers the service runs.
  @Test func theDefaultSessionKeepsToTheLibrarysConnectionLimit() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService(maxPerHost: 20, connectionLimit: nil)
    let fetchers = (0..<20).map { service.fetcher(url: server.url("/delay/0.3?n=\($0)")) }
    let failures = await withTaskGroup(of: Bool.self) { group in
      for fetcher in fetchers { group.addTask { await fetcher.fetchResult().error != nil } }
      return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    #expect(failures == 0)
    #if canImport(FoundationNetworking)
      let limit = EngineSessionFactory.defaultConnectionsPerHost(service.engine)
      #expect(Set(server.requests.map(\.connectionID)).count <= limit)
    #endif
  }

  /// A streaming fetcher of the service runs on a session of its own, with the service's
  /// configuration: open streams leave the shared session's connections to short requests.
  @Test func streamsRunOnASessionOfTheirOwn() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService(connectionLimit: nil)
    service.configurationBlock = { $0.httpAdditionalHeaders = ["X-Service": "yes"] }
    let streamers = (0..<5).map { service.fetcher(url: server.url("/sse?events=1000&interval=200&n=\($0)")) }
    defer { for fetcher in streamers { fetcher.stopFetching() } }
    var streams: [FetcherStream] = []
    for fetcher in streamers {
      streams.append(try await fetcher.beginStreaming())
    }
    #expect(streams.allSatisfy { $0.httpResponse?.statusCode == 200 })
    #expect(server.requests(path: "/sse").allSatisfy { $0.header("X-Service") == "yes" })
    let result = await service.fetcher(url: server.url("/text?value=short")).fetchResult(timeout: 60)
    #expect(result.error == nil)
    #expect(result.data == Data("short".utf8))
    #expect(service.sharedSessionCreationCount == 1)
  }

  /// A stream's session of its own behaves as the shared session would: the resource timeout of
  /// the service's configuration (which only a fetcher's own configuration enforces) does not cut
  /// a stream that outlasts it.
  @Test func aStreamKeepsTheSharedSessionsTimeouts() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForResource = 1
    service.configuration = configuration
    var events: [ServerSentEvent] = []
    for try await event in service.fetcher(url: server.url("/sse?events=15&interval=100")).events() {
      events.append(event)
    }
    #expect(events.count == 15)
  }
}
