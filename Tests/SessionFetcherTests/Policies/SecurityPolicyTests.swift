import Foundation
import Testing

@testable import SessionFetcher

@Suite("Insecure-scheme gate")
struct SecurityPolicyTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var url: String
    var schemes: [String]
    var localhost: Bool
    var allowed: Bool
    var testDescription: String { "\(url) schemes=\(schemes) localhost=\(localhost) → \(allowed)" }
  }

  // The original's testInsecureRequests table, plus IPv6 and case variations.
  static let cases: [Case] = [
    Case(url: "http://example.com", schemes: [], localhost: false, allowed: false),
    Case(url: "http://example.com", schemes: ["http"], localhost: false, allowed: true),
    Case(url: "https://example.com", schemes: [], localhost: false, allowed: true),
    Case(url: "HTTPS://example.com", schemes: [], localhost: false, allowed: true),
    Case(url: "http://localhost", schemes: [], localhost: false, allowed: false),
    Case(url: "http://localhost:8080/x", schemes: [], localhost: true, allowed: true),
    Case(url: "http://127.0.0.1:9/x", schemes: [], localhost: true, allowed: true),
    Case(url: "http://[::1]:9/x", schemes: [], localhost: true, allowed: true),
    Case(url: "http://127.0.0.2/x", schemes: [], localhost: true, allowed: false),
    Case(url: "http://example.com", schemes: [], localhost: true, allowed: false),
    Case(url: "file:///tmp", schemes: [], localhost: false, allowed: false),
    Case(url: "file:///tmp", schemes: ["http"], localhost: false, allowed: false),
    Case(url: "file:///tmp", schemes: ["file"], localhost: false, allowed: true),
    // allowLocalhostRequest admits plain http only: another scheme must be listed.
    Case(url: "file:///tmp", schemes: [], localhost: true, allowed: false),
    Case(url: "ftp://127.0.0.1/f", schemes: [], localhost: true, allowed: false),
    Case(url: "ftp://localhost/f", schemes: [], localhost: true, allowed: false),
    Case(url: "ftp://127.0.0.1/f", schemes: ["ftp"], localhost: false, allowed: true),
    Case(url: "gopher://[::1]/", schemes: [], localhost: true, allowed: false),
    Case(url: "HTTP://LOCALHOST/x", schemes: [], localhost: true, allowed: true),
    Case(url: "ftp://example.com/f", schemes: ["FTP"], localhost: false, allowed: true),
    Case(url: "DATA:text/plain,hi", schemes: [], localhost: false, allowed: true),
  ]

  @Test(arguments: cases)
  func gate(_ c: Case) throws {
    let url = try #require(URL(string: c.url))
    #expect(
      SecurityPolicy.allows(url, allowedInsecureSchemes: c.schemes, allowLocalhostRequest: c.localhost)
        == c.allowed)
  }

  /// A redirect leads to http or https only, and only where a fetch could begin.
  @Test(
    arguments: [
      ("http://127.0.0.1/x", [], true, true), ("https://example.com/", [], false, true),
      ("http://example.com/", [], true, false), ("http://example.com/", ["http"], false, true),
      ("ftp://127.0.0.1/f", [], true, false), ("ftp://127.0.0.1/f", ["ftp"], true, false),
      ("data:text/plain,hi", [], true, false), ("data:text/plain,hi", ["data"], true, false),
      ("file:///etc/passwd", [], true, false), ("file:///etc/passwd", ["file"], true, false),
      ("HTTPS://example.com/", [], false, true),
    ] as [(String, [String], Bool, Bool)])
  func redirectGate(url: String, schemes: [String], localhost: Bool, allowed: Bool) throws {
    let target = try #require(URL(string: url))
    #expect(
      SecurityPolicy.allowsRedirect(
        to: target, allowedInsecureSchemes: schemes, allowLocalhostRequest: localhost)
        == allowed)
  }

  /// Which URLs a fetch can begin with: http and https need a host, whatever the scheme's case.
  @Test(arguments: [
    ("http://example.com/x", true), ("HTTP://example.com", true), ("HtTpS://example.com", true),
    ("http:///path", false), ("https:///", false), ("http://%65xample.com/", true),
    ("file:///tmp/x", true), ("data:,hello", true), ("ftp://example.com/f", true),
  ])
  func fetchable(url: String, expected: Bool) throws {
    #expect(SessionFetcher.isFetchable(try #require(URL(string: url))) == expected)
  }
}
