import Foundation
import Testing

@testable import SessionFetcher

/// How the URLSession engine spells a URL with an IPv6-literal host for FoundationNetworking, and
/// how it reads it back.
@Suite("IPv6 literal spelling", .enabled(if: IPv6LiteralHost.isNeeded, "only FoundationNetworking needs it"))
struct IPv6LiteralHostTests {
  @Test(
    arguments: [
      ("http://[::1]:8080/a?b=1#f", "http://%5B%3A%3A1%5D:8080/a?b=1#f"),
      ("HTTP://[::1]/", "http://%5B%3A%3A1%5D/"),
      ("https://user:pw@[2001:DB8::1]:443/p%20q", "https://user:pw@%5B2001%3ADB8%3A%3A1%5D:443/p%20q"),
      ("http://[fe80::1%25eth0]:80/", "http://%5Bfe80%3A%3A1%25eth0%5D:80/"),
      ("http://[::ffff:127.0.0.1]/", "http://%5B%3A%3Affff%3A127.0.0.1%5D/"),
    ])
  func respelledAndReadBack(_ written: String, _ spelled: String) throws {
    let url = try #require(URL(string: written))
    let encoded = try #require(IPv6LiteralHost.encoded(url))
    #expect(encoded.absoluteString == spelled)
    #expect(encoded.host == URLComponents(url: url, resolvingAgainstBaseURL: false)?.host)
    // Read back: the same URL, scheme aside (the engine sends it in lower case).
    let decoded = try #require(IPv6LiteralHost.decoded(encoded))
    #expect(decoded.absoluteString.lowercased() == written.lowercased())
    // Spelled once only.
    #expect(IPv6LiteralHost.encoded(encoded) == nil)
  }

  @Test(
    arguments: [
      "http://127.0.0.1:8080/", "http://example.com/", "http://localhost/x",
      // A `%5B` or `{` outside the host is no spelling of a literal.
      "http://example.com/%5B%3A%3A1%5D", "http://example.com/?q=%5b", "http://example.com/%7B",
    ])
  func otherHostsAreLeftAlone(_ written: String) throws {
    let url = try #require(URL(string: written))
    #expect(IPv6LiteralHost.encoded(url) == nil)
    #expect(IPv6LiteralHost.decoded(url) == nil)
  }

  /// A host spelled in lower-case escapes is read back as well.
  @Test func aLowerCaseSpellingIsReadBack() throws {
    let spelled = try #require(URL(string: "http://%5b%3a%3a1%5d:8080/x"))
    #expect(IPv6LiteralHost.decoded(spelled)?.absoluteString == "http://[::1]:8080/x")
  }

  @Test func aResponseAndAnErrorNameTheURLAsWritten() throws {
    let written = try #require(URL(string: "http://[::1]:8080/x"))
    let spelled = try #require(IPv6LiteralHost.encoded(written))
    let response = try #require(
      HTTPURLResponse(url: spelled, statusCode: 201, httpVersion: "HTTP/1.1", headerFields: ["ETag": "\"1\""])
    )
    let decoded = try #require(IPv6LiteralHost.decoded(response) as? HTTPURLResponse)
    #expect(decoded.url == written)
    #expect(decoded.statusCode == 201)
    #expect(decoded.value(forHTTPHeaderField: "ETag") == "\"1\"")
    let error = URLError(.timedOut, userInfo: [NSURLErrorFailingURLErrorKey: spelled])
    let named = try #require(IPv6LiteralHost.decoded(error) as? URLError)
    #expect(named.code == .timedOut)
    #expect(named.userInfo[NSURLErrorFailingURLErrorKey] as? URL == written)
  }
}

/// Lower-casing a URL's scheme and host for FoundationNetworking (see `URLSessionEngineSession`).
@Suite("Scheme and host case")
struct SchemeAndHostCaseTests {
  @Test(
    arguments: [
      ("HTTP://Example.COM:8080/P?Q", "http://example.com:8080/P?Q"),
      ("http://example.com/", nil), ("http://Example.com/", "http://example.com/"),
      ("Http://example.com/", "http://example.com/"), ("http://example.com/Path", nil),
      // An IP literal keeps its case (setting it without brackets used to end the process).
      ("HTTP://[2001:DB8::1]:8080/a", "http://[2001:DB8::1]:8080/a"),
      ("http://[2001:DB8::1]/", nil),
      ("HTTP://[fe80::1%25ETH0]/", "http://[fe80::1%25ETH0]/"),
    ] as [(String, String?)])
  func lowercasing(_ written: String, _ expected: String?) throws {
    let url = try #require(URL(string: written))
    #expect(URLSessionEngineSession.lowercasingSchemeAndHost(url)?.absoluteString == expected)
  }
}
