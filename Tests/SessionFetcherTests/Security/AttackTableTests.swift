import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Attack table, part 2: the insecure-scheme gate, cookie domains, Secure cookies, redirect loops
/// and absurdly large responses. Each row is a test against the in-process server.
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

  @Test("http to 127.0.0.1 without allowLocalhostRequest reaches no server")
  func localhostNeedsExplicitPermission() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = SessionFetcher.fetcher(url: server.url("/bytes/1"))
    fetcher.callbackQueue = makeCallbackQueue()
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .insecureRequest(server.url("/bytes/1")))
    #expect(server.requests.isEmpty)
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

  @Test("a Secure cookie is never sent over http, and http cannot set or shadow one")
  func secureCookiesStayOffHTTP() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let jar = SessionCookieStorage()
    jar.setCookie(SessionCookie(name: "secret", value: "s3cure", domain: "127.0.0.1", isSecure: true))
    jar.setCookie(SessionCookie(name: "plain", value: "p", domain: "127.0.0.1"))
    let echo = server.fetcher("/cookies")
    echo.cookieStorage = jar
    #expect(await echo.fetchResult().error == nil)
    let sent = try #require(server.requests.last?.header("Cookie"))
    #expect(sent == "plain=p")

    // An http response cannot set a Secure cookie, nor overwrite the Secure one with a plain one.
    let setter = server.fetcher("/set-cookie?c=sneaky%3D1%3B%20Secure&c=secret%3Doverwritten")
    setter.cookieStorage = jar
    #expect(await setter.fetchResult().error == nil)
    let names = Set(jar.cookies.map(\.name))
    #expect(!names.contains("sneaky"))
    #expect(jar.cookies.first { $0.name == "secret" }?.value == "s3cure")
  }

  // MARK: - Redirect loops

  @Test("a redirect loop on one path ends with httpTooManyRedirects after a bounded number of requests")
  func selfLoop() async throws {
    let server = try TestServer()
    defer { server.stop() }
    server.route("/loop") { _ in .redirect(to: "/loop") }
    let fetcher = server.fetcher("/loop")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .httpTooManyRedirects)
    #expect(server.requestCount(path: "/loop") == 21)
  }

  @Test("a redirect loop between two origins ends with an error too")
  func twoServerLoop() async throws {
    let first = try TestServer()
    defer { first.stop() }
    let second = try TestServer()
    defer { second.stop() }
    let toSecond = second.url("/b").absoluteString
    let toFirst = first.url("/a").absoluteString
    first.route("/a") { _ in .redirect(to: toSecond, status: 307) }
    second.route("/b") { _ in .redirect(to: toFirst, status: 308) }
    let fetcher = first.fetcher("/a")
    fetcher.bodyData = Data("loop body".utf8)
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .httpTooManyRedirects)
    #expect(first.requests.count + second.requests.count == 21)
  }

  // MARK: - Absurdly large responses

  @Test("a body announced past maximumResponseBodyLength fails at once, without retries")
  func announcedBodyTooLarge() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/bytes/50000000")  // 50 MB announced
    fetcher.maximumResponseBodyLength = 1_000_000
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let started = Date()
    let result = await fetcher.fetchResult(timeout: 120)
    #expect(result.fetcherError == .responseTooLarge(limit: 1_000_000))
    #expect(result.data == nil)
    #expect(fetcher.downloadedData == nil)
    #expect(fetcher.downloadedLength <= 1_000_000 + 1_048_576)
    #expect(fetcher.retryCount == 0)
    #expect(Date().timeIntervalSince(started) < 120)  // generous: sanitizer runs are slow
    #expect(server.requestCount(path: "/bytes/50000000") == 1)
  }

  @Test("a chunked body that grows past the limit is cut off mid-stream")
  func chunkedBodyTooLarge() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/chunked?chunks=500&size=100000")  // 50 MB, no Content-Length
    fetcher.maximumResponseBodyLength = 2_000_000
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .responseTooLarge(limit: 2_000_000))
    #expect(fetcher.downloadedData == nil)
    #expect(fetcher.timing.bytesReceived < 10_000_000)
  }

  @Test("an error body past the limit fails the same way; bodies within it are untouched")
  func limitAppliesToErrorBodiesAndAllowsSmallOnes() async throws {
    let server = try TestServer()
    defer { server.stop() }
    server.route("/big-error") { _ in TestResponse(status: 500, body: TestServer.patternBytes(count: 300_000))
    }
    let failing = server.fetcher("/big-error")
    failing.maximumResponseBodyLength = 100_000
    #expect(await failing.fetchResult().fetcherError == .responseTooLarge(limit: 100_000))

    let fits = server.fetcher("/bytes/100000")
    fits.maximumResponseBodyLength = 100_000
    let result = await fits.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == TestServer.patternBytes(count: 100_000))

    // A download to a file is not held in memory: the limit does not apply.
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let download = server.fetcher("/bytes/300000")
    download.maximumResponseBodyLength = 100_000
    download.destinationFileURL = folder.appendingPathComponent("big.bin")
    #expect(await download.fetchResult().error == nil)
  }

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
