import Foundation
import Testing

@testable import SessionFetcher

@Suite("Set-Cookie parsing (RFC 6265 §5.2)")
struct SetCookieParserTests {
  static let pageURL = cookieURL("https://www.example.com/docs/page")
  static let now = CookieTestDates.june1st2021

  struct NameValueCase: Sendable, CustomTestStringConvertible {
    var header: String
    var name: String?  // nil: the header is ignored
    var value: String = ""
    var testDescription: String { header.debugDescription }
  }

  static let nameValueCases: [NameValueCase] = [
    NameValueCase(header: "a=b", name: "a", value: "b"),
    NameValueCase(header: "  a  =  b  ", name: "a", value: "b"),
    NameValueCase(header: "\ta=b\t; Path=/", name: "a", value: "b"),
    NameValueCase(header: "a=\"quoted value\"", name: "a", value: "\"quoted value\""),
    NameValueCase(header: "a=b=c", name: "a", value: "b=c"),
    NameValueCase(header: "a=", name: "a", value: ""),
    NameValueCase(header: "a=;", name: "a", value: ""),
    NameValueCase(header: "=b", name: "", value: "b"),  // RFC 6265bis: empty name allowed
    NameValueCase(header: "a=b\tc", name: "a", value: "b\tc"),  // HTAB is not a control here
    NameValueCase(header: "a=b; Foo=bar; Priority=High; Partitioned", name: "a", value: "b"),
    NameValueCase(header: "a=b;;;", name: "a", value: "b"),
    // Delimiters are bytes: a combining mark after ";" or " " does not hide them.
    NameValueCase(header: "a=b;\u{301}Secure", name: "a", value: "b"),
    NameValueCase(header: " \u{35A}x=1", name: "\u{35A}x", value: "1"),
    NameValueCase(header: "a=\u{301}=", name: "a", value: "\u{301}="),
    NameValueCase(header: "caf\u{E9}=cr\u{E8}me", name: "caf\u{E9}", value: "cr\u{E8}me"),
    NameValueCase(header: "=", name: nil),  // empty name and value
    NameValueCase(header: " = ; Path=/", name: nil),
    NameValueCase(header: "abc", name: nil),  // no "="
    NameValueCase(header: "abc; a=b", name: nil),  // "=" only in an attribute
    NameValueCase(header: "", name: nil),
    NameValueCase(header: "; a=b", name: nil),
    NameValueCase(header: "a=b\u{01}", name: nil),  // control characters
    NameValueCase(header: "a=b\r\nSet-Cookie: c=d", name: nil),
    NameValueCase(header: "a=b; Path=/\u{7F}", name: nil),
    NameValueCase(header: "a=b\u{0}", name: nil),
  ]

  @Test("name and value", arguments: nameValueCases)
  func nameAndValue(_ testCase: NameValueCase) {
    let cookie = SetCookieParser.parse(testCase.header, from: Self.pageURL, now: Self.now)
    if let name = testCase.name {
      #expect(cookie?.name == name)
      #expect(cookie?.value == testCase.value)
    } else {
      #expect(cookie == nil)
    }
  }

  @Test func defaultsWithoutAttributes() throws {
    let cookie = try #require(SetCookieParser.parse("a=b", from: Self.pageURL, now: Self.now))
    #expect(
      cookie
        == SessionCookie(
          name: "a", value: "b", domain: "www.example.com", path: "/docs", expiresDate: nil,
          isSecure: false, isHTTPOnly: false, isHostOnly: true, sameSite: nil, creationDate: Self.now))
  }

  @Test func attributeNamesAreCaseInsensitive() throws {
    let header = "a=b; SECURE; httponly; PATH=/x; DoMaIn=EXAMPLE.COM; max-AGE=60; SAMESITE=strict"
    let cookie = try #require(SetCookieParser.parse(header, from: Self.pageURL, now: Self.now))
    #expect(cookie.isSecure)
    #expect(cookie.isHTTPOnly)
    #expect(cookie.path == "/x")
    #expect(cookie.domain == "example.com")
    #expect(!cookie.isHostOnly)
    #expect(cookie.expiresDate == Self.now.addingTimeInterval(60))
    #expect(cookie.sameSite == "Strict")
  }

  @Test("name plus value may be 4096 bytes, no more", arguments: [4096, 4097])
  func sizeLimit(totalBytes: Int) {
    let name = String(repeating: "n", count: 96)
    let value = String(repeating: "v", count: totalBytes - 96)
    let cookie = SetCookieParser.parse("\(name)=\(value)", from: Self.pageURL, now: Self.now)
    #expect((cookie != nil) == (totalBytes <= 4096))
  }

  @Test func overlongAttributeValueIsIgnored() throws {
    let longPath = "/" + String(repeating: "p", count: 1100)
    let cookie = try #require(
      SetCookieParser.parse("a=b; Path=/short; Path=\(longPath)", from: Self.pageURL, now: Self.now))
    #expect(cookie.path == "/short")
  }

  static let sameSiteCases: [(String, String?)] = [
    ("a=b; SameSite=Lax", "Lax"), ("a=b; SameSite=lax", "Lax"), ("a=b; SameSite=STRICT", "Strict"),
    ("a=b; SameSite=None", "None"), ("a=b; SameSite=bogus", nil), ("a=b; SameSite", nil),
    ("a=b", nil),
  ]

  @Test("SameSite", arguments: sameSiteCases)
  func sameSite(header: String, expected: String?) throws {
    let cookie = try #require(SetCookieParser.parse(header, from: Self.pageURL, now: Self.now))
    #expect(cookie.sameSite == expected)
  }

  // MARK: Expiry

  static let june9 = CookieTestDates.june9th2021
  static let cap = now.addingTimeInterval(SetCookieParser.maximumLifetime)

  static let expiryCases: [(String, Date?)] = [
    ("a=b", nil),
    ("a=b; Max-Age=60", now.addingTimeInterval(60)),
    ("a=b; Max-Age=0", .distantPast),
    ("a=b; Max-Age=-5", .distantPast),
    ("a=b; Max-Age=-0", .distantPast),
    ("a=b; Max-Age=abc", nil),
    ("a=b; Max-Age=1.5", nil),
    ("a=b; Max-Age=+5", nil),
    ("a=b; Max-Age=", nil),
    ("a=b; Max-Age=-", nil),
    ("a=b; Max-Age=60s", nil),
    ("a=b; Max-Age= 60 ", now.addingTimeInterval(60)),  // attribute values are trimmed
    ("a=b; Max-Age=99999999999999999999999", cap),  // no overflow, capped at 400 days
    ("a=b; Expires=Wed, 09 Jun 2021 10:18:14 GMT", june9),
    ("a=b; expires=Wednesday, 09-Jun-21 10:18:14 GMT", june9),
    ("a=b; Expires=Wed Jun  9 10:18:14 2021", june9),
    ("a=b; Expires=Thu, 01 Jan 1970 00:00:00 GMT", Date(timeIntervalSince1970: 0)),  // expired
    ("a=b; Expires=Fri, 01 Jan 2100 00:00:00 GMT", cap),
    ("a=b; Expires=bogus", nil),
    ("a=b; Max-Age=60; Expires=Wed, 09 Jun 2021 10:18:14 GMT", now.addingTimeInterval(60)),
    ("a=b; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Max-Age=60", now.addingTimeInterval(60)),
    ("a=b; Max-Age=abc; Expires=Wed, 09 Jun 2021 10:18:14 GMT", june9),  // invalid Max-Age ignored
    ("a=b; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Expires=bogus", june9),  // invalid Expires ignored
    ("a=b; Max-Age=60; Max-Age=120", now.addingTimeInterval(120)),  // the last one wins
    ("a=b; Max-Age=0; Expires=Fri, 01 Jan 2100 00:00:00 GMT", .distantPast),
  ]

  @Test("Max-Age and Expires", arguments: expiryCases)
  func expiry(header: String, expected: Date?) throws {
    let cookie = try #require(SetCookieParser.parse(header, from: Self.pageURL, now: Self.now))
    #expect(cookie.expiresDate == expected)
  }

  // MARK: Path

  static let pathCases: [(url: String, header: String, path: String)] = [
    ("https://h.example/docs/page", "a=b", "/docs"),
    ("https://h.example/docs/", "a=b", "/docs"),
    ("https://h.example/docs", "a=b", "/"),
    ("https://h.example/", "a=b", "/"),
    ("https://h.example", "a=b", "/"),
    ("https://h.example/a/b/c?x=/y/z", "a=b", "/a/b"),
    ("https://h.example/a%20b/c", "a=b", "/a%20b"),
    ("https://h.example/docs/page", "a=b; Path=/other", "/other"),
    ("https://h.example/docs/page", "a=b; Path=/", "/"),
    ("https://h.example/docs/page", "a=b; Path=relative", "/docs"),
    ("https://h.example/docs/page", "a=b; Path=", "/docs"),
    ("https://h.example/docs/page", "a=b; Path", "/docs"),
    ("https://h.example/docs/page", "a=b; Path=/x; Path=/y", "/y"),
    ("https://h.example/docs/page", "a=b; Path=/x; Path=bad", "/docs"),  // the last one wins
  ]

  @Test("Path attribute and default path", arguments: pathCases)
  func path(url: String, header: String, path: String) throws {
    let cookie = try #require(SetCookieParser.parse(header, from: cookieURL(url), now: Self.now))
    #expect(cookie.path == path)
  }

  // MARK: Domain

  struct DomainCase: Sendable, CustomTestStringConvertible {
    var url: String
    var header: String
    var domain: String?  // nil: rejected
    var isHostOnly = true
    var testDescription: String { "\(header) from \(url)" }
  }

  static let domainCases: [DomainCase] = [
    DomainCase(url: "https://www.example.com/", header: "a=b", domain: "www.example.com"),
    DomainCase(url: "https://WWW.Example.COM/", header: "a=b", domain: "www.example.com"),
    DomainCase(
      url: "https://www.example.com/", header: "a=b; Domain=example.com", domain: "example.com",
      isHostOnly: false),
    DomainCase(
      url: "https://www.example.com/", header: "a=b; Domain=.example.com", domain: "example.com",
      isHostOnly: false),
    DomainCase(
      url: "https://www.example.com/", header: "a=b; Domain=WWW.Example.COM", domain: "www.example.com",
      isHostOnly: false),
    DomainCase(url: "https://www.example.com/", header: "a=b; Domain=", domain: "www.example.com"),
    DomainCase(url: "https://www.example.com/", header: "a=b; Domain=other.com", domain: nil),
    DomainCase(url: "https://www.example.com/", header: "a=b; Domain=ample.com", domain: nil),
    DomainCase(url: "https://www.example.com/", header: "a=b; Domain=sub.www.example.com", domain: nil),
    DomainCase(url: "https://www.example.com/", header: "a=b; Domain=com", domain: nil),
    DomainCase(url: "https://www.example.com/", header: "a=b; Domain=.com", domain: nil),
    DomainCase(url: "https://example.com/", header: "a=b; Domain=com", domain: nil),
    DomainCase(url: "https://www.example.co.uk/", header: "a=b; Domain=co.uk", domain: nil),
    DomainCase(
      url: "https://www.example.co.uk/", header: "a=b; Domain=example.co.uk", domain: "example.co.uk",
      isHostOnly: false),
    DomainCase(url: "https://shop.example.com.au/", header: "a=b; Domain=com.au", domain: nil),
    DomainCase(url: "https://someone.github.io/", header: "a=b; Domain=github.io", domain: nil),
    // A public suffix that is the host itself may set a host-only cookie.
    DomainCase(url: "https://co.uk/", header: "a=b; Domain=co.uk", domain: "co.uk"),
    DomainCase(url: "http://localhost:8080/", header: "a=b", domain: "localhost"),
    DomainCase(url: "http://localhost:8080/", header: "a=b; Domain=localhost", domain: "localhost"),
    DomainCase(url: "http://localhost:8080/", header: "a=b; Domain=.localhost", domain: "localhost"),
    DomainCase(url: "http://app.localhost/", header: "a=b; Domain=localhost", domain: nil),
    DomainCase(url: "http://127.0.0.1:8080/", header: "a=b", domain: "127.0.0.1"),
    DomainCase(url: "http://127.0.0.1:8080/", header: "a=b; Domain=127.0.0.1", domain: "127.0.0.1"),
    DomainCase(url: "http://127.0.0.1:8080/", header: "a=b; Domain=0.0.1", domain: nil),
    DomainCase(url: "http://127.0.0.1:8080/", header: "a=b; Domain=1", domain: nil),
    DomainCase(url: "http://192.168.1.10/", header: "a=b; Domain=168.1.10", domain: nil),
    DomainCase(url: "http://[::1]:8080/", header: "a=b", domain: "::1"),
    DomainCase(url: "http://[::1]:8080/", header: "a=b; Domain=[::1]", domain: "::1"),
    DomainCase(url: "http://[::1]:8080/", header: "a=b; Domain=::1", domain: "::1"),
    DomainCase(url: "http://[::1]:8080/", header: "a=b; Domain=1", domain: nil),
    DomainCase(url: "file:///tmp/x", header: "a=b", domain: nil),  // no host
  ]

  @Test("Domain attribute", arguments: domainCases)
  func domain(_ testCase: DomainCase) {
    let cookie = SetCookieParser.parse(testCase.header, from: cookieURL(testCase.url), now: Self.now)
    #expect(cookie?.domain == testCase.domain)
    if testCase.domain != nil {
      #expect(cookie?.isHostOnly == testCase.isHostOnly)
    }
  }

  // MARK: Secure and prefixes

  static let secureCases: [(url: String, header: String, accepted: Bool)] = [
    ("https://example.com/", "a=b; Secure", true),
    ("http://example.com/", "a=b; Secure", false),  // Secure only from https
    ("http://localhost/", "a=b; Secure", false),  // localhost is not a secure origin here
    ("http://example.com/", "a=b", true),
    ("https://example.com/", "__Secure-a=b; Secure", true),
    ("https://example.com/", "__Secure-a=b", false),
    ("https://example.com/", "__secure-a=b", false),
    ("https://example.com/docs/x", "__Host-a=b; Secure; Path=/", true),
    ("https://example.com/", "__Host-a=b; Secure", false),  // Path must be given as "/"
    ("https://example.com/", "__Host-a=b; Path=/", false),
    ("https://www.example.com/", "__Host-a=b; Secure; Path=/; Domain=example.com", false),
    ("https://example.com/", "__Hostile=b", true),
  ]

  @Test("Secure and cookie name prefixes", arguments: secureCases)
  func secure(url: String, header: String, accepted: Bool) {
    let cookie = SetCookieParser.parse(header, from: cookieURL(url), now: Self.now)
    #expect((cookie != nil) == accepted)
    if header.contains("Secure"), let cookie {
      #expect(cookie.isSecure)
    }
  }
}
