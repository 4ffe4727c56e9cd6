import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("Cookie jars")
struct CookieTests {
  private func cookieHeader(_ fetcher: SessionFetcher) async throws -> String? {
    let result = await fetcher.fetchResult()
    let data = try #require(result.data)
    let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    return object?["cookie"] as? String
  }

  @Test func jarsAreIsolatedBetweenServicesAndFromStandaloneFetchers() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let name = "svc\(UUID().uuidString.prefix(8))"
    let first = makeService()
    let second = makeService()
    #expect(first.cookieStorage !== second.cookieStorage)

    let set = first.fetcher(url: server.url("/set-cookie?c=\(name)=one;%20Path=/"))
    #expect(await set.fetchResult().error == nil)
    #expect(first.cookieStorage.cookies.contains { $0.name == name })

    // The same service sends it back.
    let again = try await cookieHeader(first.fetcher(url: server.url("/cookies")))
    #expect(again?.contains("\(name)=one") == true)
    // Another service and a standalone fetcher do not.
    let other = try await cookieHeader(second.fetcher(url: server.url("/cookies")))
    #expect(other?.contains(name) != true)
    #expect(!second.cookieStorage.cookies.contains { $0.name == name })
    let standalone = SessionFetcher.fetcher(url: server.url("/cookies"))
    standalone.allowLocalhostRequest = true
    standalone.callbackQueue = DispatchQueue(label: "test.standalone")
    let shared = try await cookieHeader(standalone)
    #expect(shared?.contains(name) != true)
    #expect(!SessionCookieStorage.shared.cookies.contains { $0.name == name })
  }

  @Test func cookiesSetDuringARedirectAreKept() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let target = server.url("/cookies").absoluteString
    let fetcher = service.fetcher(url: server.url("/set-cookie?c=hop=1&redirect=\(target)"))
    let header = try await cookieHeader(fetcher)
    #expect(header?.contains("hop=1") == true)
    #expect(service.cookieStorage.cookies.contains { $0.name == "hop" })
  }

  @Test func aSharedJarCanBeGivenToAService() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let jar = SessionCookieStorage()
    let first = makeService()
    let second = makeService()
    first.cookieStorage = jar
    second.cookieStorage = jar
    #expect(await first.fetcher(url: server.url("/set-cookie?c=both=yes")).fetchResult().error == nil)
    let header = try await cookieHeader(second.fetcher(url: server.url("/cookies")))
    #expect(header?.contains("both=yes") == true)
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
