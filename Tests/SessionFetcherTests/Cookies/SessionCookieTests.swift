import Foundation
import Testing

@testable import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite("SessionCookie")
struct SessionCookieTests {
  @Test func initNormalizesDomain() {
    let dotted = SessionCookie(name: "a", value: "1", domain: ".Example.COM", isHostOnly: true)
    #expect(dotted.domain == "example.com")
    #expect(!dotted.isHostOnly)  // a leading dot means a domain cookie
    let plain = SessionCookie(name: "a", value: "1", domain: "Example.com", isHostOnly: true)
    #expect(plain.domain == "example.com")
    #expect(plain.isHostOnly)
    #expect(plain.path == "/")
    #expect(plain.isSessionCookie)
  }

  @Test func expiry() {
    let date = CookieTestDates.june1st2021
    let cookie = SessionCookie(name: "a", value: "1", domain: "example.com", expiresDate: date)
    #expect(!cookie.isSessionCookie)
    #expect(!cookie.isExpired(at: date.addingTimeInterval(-1)))
    #expect(cookie.isExpired(at: date))
    #expect(!SessionCookie(name: "a", value: "1", domain: "example.com").isExpired(at: .distantFuture))
  }

  @Test func matchesIgnoresExpiryButNotScheme() {
    let cookie = SessionCookie(
      name: "a", value: "1", domain: "example.com", path: "/docs", expiresDate: .distantPast,
      isSecure: true)
    #expect(cookie.matches(cookieURL("https://www.example.com/docs/x")))
    #expect(!cookie.matches(cookieURL("http://www.example.com/docs/x")))
    #expect(!cookie.matches(cookieURL("https://www.example.com/docsets")))
  }

  @Test func roundTripThroughHTTPCookie() throws {
    let expiry = Date(timeIntervalSince1970: 1_900_000_000)
    let original = SessionCookie(
      name: "id", value: "v\"1\"", domain: "example.com", path: "/api", expiresDate: expiry,
      isSecure: true, isHTTPOnly: true, isHostOnly: false)
    let httpCookie = try #require(original.httpCookie)
    #expect(httpCookie.name == "id")
    #expect(httpCookie.value == "v\"1\"")
    #expect(httpCookie.domain == ".example.com")
    #expect(httpCookie.path == "/api")
    #expect(httpCookie.isSecure)
    #expect(httpCookie.expiresDate == expiry)

    let back = try #require(SessionCookie(httpCookie))
    #expect(back.name == original.name)
    #expect(back.value == original.value)
    #expect(back.domain == "example.com")
    #expect(!back.isHostOnly)
    #expect(back.path == "/api")
    #expect(back.isSecure)
    #expect(back.expiresDate == expiry)
  }

  @Test func hostOnlyAndSessionCookieThroughHTTPCookie() throws {
    let original = SessionCookie(name: "s", value: "1", domain: "www.example.com", isHostOnly: true)
    let httpCookie = try #require(original.httpCookie)
    #expect(httpCookie.domain == "www.example.com")
    #expect(httpCookie.isSessionOnly)
    let back = try #require(SessionCookie(httpCookie))
    #expect(back.isHostOnly)
    #expect(back.expiresDate == nil)
  }

  @Test func fromFoundationParsedCookies() throws {
    let url = cookieURL("http://www.example.com/")
    let parsed = HTTPCookie.cookies(
      withResponseHeaderFields: ["Set-Cookie": "a=1; Domain=example.com; HttpOnly"], for: url)
    let cookie = try #require(parsed.first.flatMap(SessionCookie.init))
    #expect(cookie.domain == "example.com")
    #expect(!cookie.isHostOnly)
    #expect(cookie.isHTTPOnly)
  }
}
