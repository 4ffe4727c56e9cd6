import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Attack table, part 2: the insecure-scheme gate, cookie domains, and absurdly large responses:
/// cookie lines and huge headers as each engine reads them from the in-process server, and the
/// tables that need no server. The localhost gate, Secure cookies over http, redirect loops and
/// bodies past the limit are in `ScriptedAttackTableTests`.
@Suite("Security: attack table")
struct AttackTableTests {
  // MARK: - Insecure-scheme gate

  @Test(
    "plain http to a remote or disguised host is refused before any traffic, even with localhost allowed",
    arguments: [
      "http://example.invalid/", "http://localhost.example.invalid/", "http://127.0.0.1.example.invalid/",
      "http://127.0.0.1@example.invalid/", "http://user:pw@example.invalid/#@127.0.0.1",
      "ftp://example.invalid/file",
    ])
  func insecureSchemeGate(_ urlString: String) async throws {
    let fetcher = SessionFetcher.fetcher(urlString: urlString)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    guard case .insecureRequest? = result.fetcherError else {
      Issue.record("\(urlString) was not refused: \(String(describing: result.error))")
      return
    }
    await drain(fetcher.callbackQueue)
    #expect(counter.started == 0 && counter.stopped == 0)
  }

  // MARK: - Cookies

  @Test("cookies for evil or unrelated domains set by a loopback response are rejected")
  func evilCookieDomainsOnTheWire() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let jar = SessionCookieStorage()
    let lines = [
      "evil=1; Domain=evil.example", "parent=1; Domain=example.com", "suffix=1; Domain=0.0.1",
      "ip=1; Domain=.0.0.1", "other=1; Domain=localhost", "good=1",
    ]
    let query = lines.map { "c=" + $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
    let fetcher = server.fetcher("/set-cookie?" + query.joined(separator: "&"))
    fetcher.cookieStorage = jar
    #expect(await fetcher.fetchResult().error == nil)
    #expect(jar.cookies.map(\.name) == ["good"])
    // And the next request carries only the legitimate one.
    let echo = server.fetcher("/cookies")
    echo.cookieStorage = jar
    #expect(await echo.fetchResult().error == nil)
    #expect(server.requests.last?.header("Cookie") == "good=1")
  }

  @Test(
    "public-suffix and single-label Domain attributes are rejected (stubbed https origin)",
    arguments: [
      ("https://www.example.co.uk/", "Domain=co.uk", false),
      ("https://www.example.co.uk/", "Domain=uk", false),
      ("https://a.b.github.io/", "Domain=github.io", false),
      ("https://shop.example.com.au/", "Domain=com.au", false),
      ("https://www.example.com/", "Domain=com", false),
      ("https://www.example.com/", "Domain=evil.com", false),
      // Public Suffix List entries (private ones included) and a name above a listed suffix.
      ("https://b1.s3.amazonaws.com/", "Domain=amazonaws.com", false),
      ("https://b1.s3.amazonaws.com/", "Domain=s3.amazonaws.com", false),
      ("https://shop.myshopify.com/", "Domain=myshopify.com", false),
      ("https://me.duckdns.org/", "Domain=duckdns.org", false),
      ("https://www.example.com.es/", "Domain=com.es", false),
      ("https://school.k12.ca.us/", "Domain=k12.ca.us", false),
      ("https://myshopify.com/", "Domain=myshopify.com", true),
      ("https://www.example.co.uk/", "Domain=example.co.uk", true),
      ("https://www.example.com/", "Domain=.example.com", true),
    ])
  func publicSuffixDomains(_ url: String, _ attribute: String, _ accepted: Bool) async throws {
    let jar = SessionCookieStorage()
    let fetcher = SessionFetcher.fetcher(urlString: url)
    fetcher.cookieStorage = jar
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.testBlock = { fetcher, respond in
      let response = HTTPURLResponse(
        url: fetcher.request!.url!, statusCode: 200, httpVersion: "HTTP/1.1",
        headerFields: ["Set-Cookie": "probe=1; \(attribute); Path=/"])
      respond(response, Data("ok".utf8), nil)
    }
    #expect(await fetcher.fetchResult().error == nil)
    #expect(jar.cookies.count == (accepted ? 1 : 0), "\(attribute) from \(url)")
  }

  // MARK: - Absurdly large responses

  @Test("a stubbed body past the limit fails too")
  func stubbedBodyTooLarge() async throws {
    let fetcher = SessionFetcher.fetcher(urlString: "https://example.invalid/big")
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.maximumResponseBodyLength = 10
    fetcher.testBlock = { fetcher, respond in
      let response = HTTPURLResponse(
        url: fetcher.request!.url!, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil)
      respond(response, Data(count: 11), nil)
    }
    #expect(await fetcher.fetchResult().fetcherError == .responseTooLarge(limit: 10))
  }

  @Test("absurdly large response headers fail the fetch cleanly instead of hanging or crashing")
  func hugeHeaders() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let huge = String(repeating: "h", count: 2_000_000)
    server.route("/huge-header") { _ in TestResponse.text("small").adding(header: "X-Huge", huge) }
    let many = (0..<5_000).map { ("X-Many-\($0)", String(repeating: "m", count: 40)) }
    server.route("/many-headers") { _ in TestResponse(status: 200, headers: many, body: Data("small".utf8)) }
    for path in ["/huge-header", "/many-headers"] {
      let fetcher = server.fetcher(path)
      fetcher.maximumResponseBodyLength = 1_000
      let started = Date()
      let result = await fetcher.fetchResult(timeout: 120)  // generous: sanitizer runs are slow
      #expect(!(result.error is FetchTimeout), "\(path) hung")
      // libcurl refuses header blocks past its own limit; whatever it accepts stays bounded.
      if result.error == nil {
        #expect(result.data == Data("small".utf8))
      }
      #expect(Date().timeIntervalSince(started) < 120)
    }
  }
}
