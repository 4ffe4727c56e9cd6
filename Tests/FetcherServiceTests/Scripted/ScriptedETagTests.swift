import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// What the service does with ETags on the scripted engine: which tag it sends back, what it makes
/// of a 304, and what the data cache keeps. The rules of storage and reuse are in
/// `ScriptedETagRulesTests`.
@Suite("ETags on the scripted engine")
struct ScriptedETagTests {
  static func service(_ engine: ScriptedEngine, cachesData: Bool = true) -> FetcherService {
    let service = ScriptedServiceTests.service(engine)
    service.shouldCacheETaggedData = cachesData
    return service
  }

  static func fetch(_ service: FetcherService, _ engine: ScriptedEngine, _ path: String) async -> FetchResult
  {
    await service.fetcher(url: engine.url(path)).fetchResult()
  }

  /// The tags sent on each request of `path`, in order.
  static func sentTags(_ engine: ScriptedEngine, _ path: String) -> [String?] {
    engine.requests(matching: path).map { $0.header("If-None-Match") }
  }

  @Test(arguments: ["\"plain\"", "W/\"weak\"", "v1"])
  func a304IsAnsweredFromTheCacheWhateverTheTagsForm(etag: String) async throws {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/items", with: .response(headers: ["ETag": etag], body: Data("the body".utf8)),
      .response(status: 304, headers: ["ETag": etag]))
    let service = Self.service(engine)
    #expect(service.shouldRememberETags)
    #expect(await Self.fetch(service, engine, "/items").data == Data("the body".utf8))
    let second = service.fetcher(url: engine.url("/items"))
    let result = await second.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == Data("the body".utf8))
    #expect(second.statusCode == 200)
    #expect(second.downloadedData == Data("the body".utf8))
    #expect(Self.sentTags(engine, "/items") == [nil, etag])
  }

  @Test func withoutTheDataCacheA304IsAStatusError() async throws {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/t", with: .response(headers: ["ETag": "\"t\""], body: Data("t".utf8)),
      .response(status: 304, headers: ["ETag": "\"t\""]))
    let service = Self.service(engine, cachesData: false)
    service.shouldRememberETags = true
    #expect(await Self.fetch(service, engine, "/t").error == nil)
    let second = service.fetcher(url: engine.url("/t"))
    #expect(await second.fetchResult().fetcherError?.statusCode == 304)
    #expect(second.statusCode == 304)
    #expect(Self.sentTags(engine, "/t") == [nil, "\"t\""])
  }

  @Test func withoutRememberingNoIfNoneMatchIsSent() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/t", with: .response(headers: ["ETag": "\"t\""], body: Data("t".utf8)))
    // Off by default.
    let service = Self.service(engine, cachesData: false)
    #expect(!service.shouldRememberETags)
    for _ in 0..<2 { #expect(await Self.fetch(service, engine, "/t").error == nil) }
    #expect(Self.sentTags(engine, "/t") == [nil, nil])
  }

  @Test func aUserSetIfNoneMatchWins() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/t", with: .response(headers: ["ETag": "\"t\""], body: Data("t".utf8)))
    let service = Self.service(engine)
    #expect(await Self.fetch(service, engine, "/t").error == nil)
    let fetcher = service.fetcher(url: engine.url("/t"))
    fetcher.setRequestValue("\"other\"", forHTTPHeaderField: "If-None-Match")
    #expect(await fetcher.fetchResult().data == Data("t".utf8))
    #expect(Self.sentTags(engine, "/t") == [nil, "\"other\""])
  }

  @Test func onlyGETUsesETags() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/t", with: .response(headers: ["ETag": "\"t\""], body: Data("t".utf8)))
    let service = Self.service(engine)
    #expect(await Self.fetch(service, engine, "/t").error == nil)
    var request = URLRequest(url: engine.url("/t"))
    request.httpMethod = "DELETE"
    _ = await service.fetcher(request: request).fetchResult()
    #expect(engine.requests.map(\.method) == ["GET", "DELETE"])
    #expect(Self.sentTags(engine, "/t") == [nil, nil])
  }

  @Test func anErrorResponseDropsTheEntry() async throws {
    let engine = ScriptedEngine()
    let tagged = ScriptedExchange.response(headers: ["ETag": "\"f\""], body: Data("flaky".utf8))
    engine.respond(to: "/flaky", with: tagged, .response(status: 500, body: Data("down".utf8)), tagged)
    let service = Self.service(engine)
    #expect(await Self.fetch(service, engine, "/flaky").error == nil)
    #expect(await Self.fetch(service, engine, "/flaky").fetcherError?.statusCode == 500)
    #expect(await Self.fetch(service, engine, "/flaky").error == nil)
    #expect(Self.sentTags(engine, "/flaky") == [nil, "\"f\"", nil])
  }

  @Test func capacityEvictsTheLeastRecentlyUsed() async throws {
    let engine = ScriptedEngine()
    for name in ["a", "b", "c"] {
      engine.respond(
        to: "/big?n=\(name)", with: .response(headers: ["ETag": "\"\(name)\""], body: Data(count: 1000)))
    }
    let service = Self.service(engine)
    // Room for one 1000-byte body with its URL and tag, not two.
    service.etagCacheCapacity = 1500
    #expect(await Self.fetch(service, engine, "/big?n=a").error == nil)
    #expect(service.etagCacheSize > 1000)
    #expect(await Self.fetch(service, engine, "/big?n=b").error == nil)
    #expect(await Self.fetch(service, engine, "/big?n=a").error == nil)
    #expect(service.etagCacheSize <= 1500)
    // `a` was evicted by `b`, so its second fetch carried no tag.
    #expect(Self.sentTags(engine, "/big") == [nil, nil, nil])

    // A body larger than the capacity is not kept at all.
    service.etagCacheCapacity = 500
    #expect(service.etagCacheSize == 0)
    #expect(await Self.fetch(service, engine, "/big?n=c").error == nil)
    #expect(await Self.fetch(service, engine, "/big?n=c").error == nil)
    #expect(Self.sentTags(engine, "/big?n=c") == [nil, nil])
    #expect(service.etagCacheSize == 0)
  }
}
