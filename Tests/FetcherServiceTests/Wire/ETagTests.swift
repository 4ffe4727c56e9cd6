import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("ETags")
struct ETagTests {
  @Test(arguments: [("/etag/plain", "\"plain\""), ("/etag/weak?weak=1", "W/\"weak\"")])
  func a304IsAnsweredFromTheCache(path: String, etag: String) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.shouldCacheETaggedData = true
    #expect(service.shouldRememberETags)
    let first = service.fetcher(url: server.url(path))
    let firstResult = await first.fetchResult()
    #expect(firstResult.error == nil)
    let body = try #require(firstResult.data)

    let second = service.fetcher(url: server.url(path))
    let secondResult = await second.fetchResult()
    #expect(secondResult.error == nil)
    #expect(secondResult.data == body)
    #expect(second.statusCode == 200)
    #expect(second.downloadedData == body)
    // The server saw the remembered tag and answered 304 (its route's rule).
    let records = server.requests(path: URL(string: "http://h\(path)")!.path)
    #expect(records.count == 2)
    #expect(records.first?.header("If-None-Match") == nil)
    #expect(records.last?.header("If-None-Match") == etag)
  }

  @Test func unquotedETagsWork() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let counter = Recorder<Int>()
    server.route("/unquoted") { request in
      if request.header("If-None-Match") == "v1" {
        counter.append(304)
        return TestResponse(status: 304, headers: [("ETag", "v1")])
      }
      counter.append(200)
      return TestResponse(status: 200, headers: [("ETag", "v1")], body: Data("unquoted body".utf8))
    }
    let service = makeService()
    service.shouldCacheETaggedData = true
    #expect(
      await service.fetcher(url: server.url("/unquoted")).fetchResult().data == Data("unquoted body".utf8))
    let second = service.fetcher(url: server.url("/unquoted"))
    let result = await second.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == Data("unquoted body".utf8))
    #expect(counter.values == [200, 304])
  }

  @Test func withoutTheDataCacheA304IsAStatusError() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.shouldRememberETags = true
    #expect(await service.fetcher(url: server.url("/etag/t")).fetchResult().error == nil)
    let second = service.fetcher(url: server.url("/etag/t"))
    let result = await second.fetchResult()
    #expect(result.fetcherError?.statusCode == 304)
    #expect(second.statusCode == 304)
    #expect(server.requests(path: "/etag/t").last?.header("If-None-Match") == "\"t\"")
  }

  @Test func withoutRememberingNoIfNoneMatchIsSent() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    for _ in 0..<2 {
      #expect(await service.fetcher(url: server.url("/etag/t")).fetchResult().error == nil)
    }
    #expect(server.requests(path: "/etag/t").allSatisfy { $0.header("If-None-Match") == nil })
  }

  @Test func aUserSetIfNoneMatchWins() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.shouldCacheETaggedData = true
    #expect(await service.fetcher(url: server.url("/etag/t")).fetchResult().error == nil)
    let fetcher = service.fetcher(url: server.url("/etag/t"))
    fetcher.setRequestValue("\"other\"", forHTTPHeaderField: "If-None-Match")
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(server.requests(path: "/etag/t").last?.header("If-None-Match") == "\"other\"")
  }

  @Test func onlyGETUsesETags() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.shouldCacheETaggedData = true
    #expect(await service.fetcher(url: server.url("/etag/t")).fetchResult().error == nil)
    var request = URLRequest(url: server.url("/etag/t"))
    request.httpMethod = "DELETE"
    _ = await service.fetcher(request: request).fetchResult()
    #expect(server.requests(path: "/etag/t").last?.header("If-None-Match") == nil)
  }

  @Test func anErrorResponseDropsTheEntry() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let attempts = Recorder<String?>()
    server.route("/flaky") { request in
      attempts.append(request.header("If-None-Match"))
      switch attempts.count {
      case 2: return TestResponse(status: 500, body: Data("down".utf8))
      default: return TestResponse(status: 200, headers: [("ETag", "\"f\"")], body: Data("flaky".utf8))
      }
    }
    let service = makeService()
    service.shouldCacheETaggedData = true
    #expect(await service.fetcher(url: server.url("/flaky")).fetchResult().error == nil)
    #expect(await service.fetcher(url: server.url("/flaky")).fetchResult().fetcherError?.statusCode == 500)
    #expect(await service.fetcher(url: server.url("/flaky")).fetchResult().error == nil)
    #expect(attempts.values == [nil, "\"f\"", nil])
  }

  @Test func capacityEvictsTheLeastRecentlyUsed() async throws {
    let server = try TestServer()
    defer { server.stop() }
    server.route("/big") { request in
      let name = request.query["n"] ?? ""
      return TestResponse(status: 200, headers: [("ETag", "\"\(name)\"")], body: Data(count: 1000))
    }
    let service = makeService()
    service.shouldCacheETaggedData = true
    // Room for one 1000-byte body with its URL and tag, not two.
    service.etagCacheCapacity = 1500
    #expect(await service.fetcher(url: server.url("/big?n=a")).fetchResult().error == nil)
    #expect(service.etagCacheSize > 1000)
    #expect(await service.fetcher(url: server.url("/big?n=b")).fetchResult().error == nil)
    #expect(await service.fetcher(url: server.url("/big?n=a")).fetchResult().error == nil)
    #expect(service.etagCacheSize <= 1500)
    // `a` was evicted by `b`, so its second fetch carried no tag.
    #expect(server.requests(path: "/big").map { $0.header("If-None-Match") } == [nil, nil, nil])

    // A body larger than the capacity is not kept at all.
    service.etagCacheCapacity = 500
    #expect(service.etagCacheSize == 0)
    #expect(await service.fetcher(url: server.url("/big?n=c")).fetchResult().error == nil)
    #expect(await service.fetcher(url: server.url("/big?n=c")).fetchResult().error == nil)
    #expect(server.requests(path: "/big").last?.header("If-None-Match") == nil)
    #expect(service.etagCacheSize == 0)
  }
}
