import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Several `Set-Cookie` lines of one response, as each engine hands them over. Which jar keeps and
/// sends what is tested on the scripted engine (`ScriptedCookieTests`).
@Suite("Cookie jars")
struct CookieTests {
  private func cookieHeader(_ fetcher: SessionFetcher) async throws -> String? {
    let result = await fetcher.fetchResult()
    let data = try #require(result.data)
    let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    return object?["cookie"] as? String
  }

  @Test func malformedSetCookieLinesAreIgnoredWithoutAffectingOthers() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let url = server.url("/set-cookie?c=good=1&c=%3Dnoname&c=;;;&c=bad;%20Domain=example.com&c=also=2")
    #expect(await service.fetcher(url: url).fetchResult().error == nil)
    let names = Set(service.cookieStorage.cookies.map(\.name))
    #expect(names.contains("good") && names.contains("also"))
    #expect(!names.contains("bad"))
    let header = try await cookieHeader(service.fetcher(url: server.url("/cookies")))
    #expect(header?.contains("good=1") == true && header?.contains("also=2") == true)
  }
}
