import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// A real 304 through each engine is answered from the service's cache. What the service sends and
/// keeps is tested on the scripted engine (`ScriptedETagTests`, `ScriptedETagRulesTests`).
@Suite("ETags")
struct ETagTests {
  @Test func a304IsAnsweredFromTheCache() async throws {
    let (path, etag) = ("/etag/plain", "\"plain\"")
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
}
