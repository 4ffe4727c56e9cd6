import Foundation
import Testing

@testable import SessionFetcher

@Suite("Cookie domain and path rules (RFC 6265 §5.1)")
struct CookieRulesTests {
  static let pathCases: [(cookiePath: String, requestPath: String, matches: Bool)] = [
    ("/docs", "/docs", true),
    ("/docs", "/docs/", true),
    ("/docs", "/docs/web", true),
    ("/docs", "/docsets", false),
    ("/docs", "/doc", false),
    ("/docs", "/", false),
    ("/docs", "/Docs", false),  // paths are case-sensitive
    ("/docs/", "/docs/", true),
    ("/docs/", "/docs/web", true),
    ("/docs/", "/docs", false),
    ("/", "/", true),
    ("/", "/anything/at/all", true),
  ]

  @Test("path-match", arguments: pathCases)
  func pathMatch(cookiePath: String, requestPath: String, matches: Bool) {
    #expect(CookieRules.pathMatches(requestPath: requestPath, cookiePath: cookiePath) == matches)
  }

  static let domainCases: [(host: String, domain: String, matches: Bool)] = [
    ("example.com", "example.com", true),
    ("www.example.com", "example.com", true),
    ("a.b.example.com", "example.com", true),
    ("myexample.com", "example.com", false),
    ("example.com", "www.example.com", false),
    ("example.com.evil.org", "example.com", false),
    ("127.0.0.1", "127.0.0.1", true),
    ("127.0.0.1", "0.0.1", false),  // no suffix matching on IP addresses
    ("::1", "::1", true),
    ("example.com", "", false),
  ]

  @Test("domain-match", arguments: domainCases)
  func domainMatch(host: String, domain: String, matches: Bool) {
    #expect(CookieRules.domainMatches(host: host, domain: domain) == matches)
  }

  static let hostCases: [(String, String)] = [
    ("http://EXAMPLE.com/", "example.com"),
    ("http://[::1]:8080/", "::1"),
    ("http://[2001:DB8::1]/", "2001:db8::1"),
    ("http://127.0.0.1:9/", "127.0.0.1"),
  ]

  @Test("canonical host", arguments: hostCases)
  func canonicalHost(url: String, host: String) {
    #expect(CookieRules.canonicalHost(of: cookieURL(url)) == host)
  }

  @Test func bracketedAndBareIPv6AreTheSameHost() {
    #expect(CookieRules.canonicalHost("[::1]") == CookieRules.canonicalHost("::1"))
    #expect(CookieRules.canonicalDomain(".[::1]") == "::1")
  }

  static let siteCases: [(String, String)] = [
    ("example.com", "example.com"), ("a.b.example.com", "example.com"),
    ("www.example.co.uk", "example.co.uk"), ("x.someone.github.io", "someone.github.io"),
    ("localhost", "localhost"), ("127.0.0.1", "127.0.0.1"), ("::1", "::1"),
  ]

  @Test("registrable domain", arguments: siteCases)
  func registrableDomain(host: String, site: String) {
    #expect(CookieRules.registrableDomain(of: host) == site)
  }
}
