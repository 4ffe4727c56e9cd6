import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Set-Cookie lines as the engine delivers them (the URLSession engine joins repeated fields with
/// ", ", the libcurl engine builds its own response): public-suffix domains and a response with
/// thousands of cookies. Run once per engine (`SESSIONFETCHER_ENGINE=libcurl`).
@Suite("Cookies on the wire: public suffixes and many Set-Cookie lines")
struct CookieWireTests {
  /// The Set-Cookie lines of `/psl`: one per public suffix of the issue, an ordinary parent
  /// domain and a host-only cookie.
  static let suffixLines = [
    "s3up=1; Domain=amazonaws.com; Path=/", "s3=1; Domain=s3.amazonaws.com; Path=/",
    "shop=1; Domain=myshopify.com; Path=/", "duck=1; Domain=duckdns.org; Path=/",
    "es=1; Domain=com.es; Path=/", "k12=1; Domain=k12.ca.us; Path=/",
    "site=1; Domain=example.com; Path=/", "host=1; Path=/",
  ]

  @Test("public-suffix Domain attributes in a real response are rejected for the hosts they cover")
  func suffixDomainsFromARealResponse() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let lines = Self.suffixLines
    server.route("/psl") { _ in
      TestResponse(headers: lines.map { ("Set-Cookie", $0) }, body: Data("ok".utf8))
    }
    let fetcher = server.fetcher("/psl")
    let jar = SessionCookieStorage()
    fetcher.cookieStorage = jar
    #expect(await fetcher.fetchResult().error == nil)
    // From 127.0.0.1 every Domain cookie is refused; the host-only one is kept.
    #expect(jar.cookies.map(\.name) == ["host"])
    let response = try #require(fetcher.response as? HTTPURLResponse)

    // The same response as received, judged for the hosts the suffixes are about: cookies are
    // matched by the request's host, which a loopback server cannot be.
    let expectations: [(url: String, names: Set<String>)] = [
      ("https://b1.s3.amazonaws.com/", ["host"]),
      ("https://shop.myshopify.com/", ["host"]),
      ("https://me.duckdns.org/", ["host"]),
      ("https://www.example.com.es/", ["host"]),
      ("https://school.k12.ca.us/", ["host"]),
      ("https://www.example.com/", ["site", "host"]),
    ]
    for (url, names) in expectations {
      let hostJar = SessionCookieStorage()
      hostJar.handleResponse(response, for: cookieURL(url))
      #expect(Set(hostJar.cookies.map(\.name)) == names, "from \(url)")
      // Nothing set by b1's response reaches b2.
      if url == "https://b1.s3.amazonaws.com/" {
        #expect(hostJar.cookieHeaderValue(for: cookieURL("https://b2.s3.amazonaws.com/")) == nil)
        #expect(hostJar.cookieHeaderValue(for: cookieURL("https://b1.s3.amazonaws.com/x")) == "host=1")
      }
    }
    // A host that is itself a suffix keeps its host-only cookie and the Domain cookie naming it.
    let suffixJar = SessionCookieStorage()
    suffixJar.handleResponse(response, for: cookieURL("https://myshopify.com/"))
    #expect(Set(suffixJar.cookies.map(\.name)) == ["shop", "host"])
    #expect(suffixJar.cookies.allSatisfy { $0.isHostOnly && $0.domain == "myshopify.com" })
    #expect(suffixJar.cookieHeaderValue(for: cookieURL("https://a.myshopify.com/")) == nil)
  }

  /// Short distinct names ("0" … "ax4"): 14,000 lines of "Set-Cookie: ax4=1" stay under libcurl's
  /// 300 KB limit on response headers.
  static func manyCookieNames(_ count: Int) -> [String] {
    (0..<count).map { String($0, radix: 36) }
  }

  /// 3,000 lines on the URLSession engine: FoundationNetworking parses a response's header lines in
  /// quadratic time (each line copies the array of the lines before it), on the work queue every
  /// URLSession of the process shares. 14,000 lines held that queue for seconds, and with it every
  /// other test's URLSession fetch (requests with short timeouts timed out before they were sent).
  @Test(
    "14,000 Set-Cookie lines (3,000 on the URLSession engine) in one response all reach the jar",
    .timeLimit(.minutes(3)))
  func fourteenThousandCookiesInOneResponse() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let names = Self.manyCookieNames(FetcherEngine.default == .libcurl ? 14_000 : 3_000)
    server.route("/many") { _ in
      TestResponse(headers: names.map { ("Set-Cookie", "\($0)=1") }, body: Data("ok".utf8))
    }
    let jar = SessionCookieStorage()
    jar.maximumCookieCount = 20_000
    jar.maximumCookiesPerSite = 20_000
    let fetcher = server.fetcher("/many")
    fetcher.cookieStorage = jar
    // FoundationNetworking's own header parsing takes seconds for this many lines: a wide bound.
    #expect(await fetcher.fetchResult(timeout: 150).error == nil)
    let stored = jar.cookies
    #expect(stored.count == names.count)
    #expect(Set(stored.map(\.name)) == Set(names))
  }

  @Test(
    "past the per-site bound, one response keeps its last cookies", .timeLimit(.minutes(1)))
  func perSiteBoundWithinOneResponse() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let names = Self.manyCookieNames(500)
    server.route("/many") { _ in
      TestResponse(headers: names.map { ("Set-Cookie", "\($0)=1") }, body: Data("ok".utf8))
    }
    let jar = SessionCookieStorage()
    let fetcher = server.fetcher("/many")
    fetcher.cookieStorage = jar
    #expect(await fetcher.fetchResult().error == nil)
    #expect(Set(jar.cookies.map(\.name)) == Set(names.suffix(jar.maximumCookiesPerSite)))
  }
}
