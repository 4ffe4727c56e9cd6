import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Client-visible HTTP behaviours that a peer client's published tests (AsyncHTTPClient's, and
/// curl's HTTP cases where they add one) check, as one table run on the process's engine (the
/// URLSession engine, or libcurl with `SESSIONFETCHER_ENGINE=libcurl`) against the in-process
/// `TestServer`: each row names the request, the route that answers it, what the caller sees and
/// what reached the server. Expectations follow RFC 9110/9112 and the peers; where the library
/// differs on purpose, README's "Differs by design" names the row.
///
/// A path may name `{origin}` (this server), `{host}` (its `host:port`), `{other}` and
/// `{otherHost}` (a second server, another origin) and `{closed}` (a port nothing listens on).
/// The request checks read the last request that reached the server the fetch ended on.
@Suite("Conformance", .serialized)
struct ConformanceTests {
  /// How the fetch ends.
  enum Outcome: Sendable {
    /// No error, with the row's `status`.
    case success
    /// `SessionFetcherError.status` with this final status (the library's design for ≥ 300).
    case status(Int)
    /// A `URLError`, with this code when given.
    case transport(URLError.Code?)
    /// Refused at begin with `SessionFetcherError.invalidConfiguration`, nothing sent.
    case refused
    /// A `SessionFetcherError` other than a status.
    case fetcherError
    /// `SessionFetcherError.responseTooLarge`.
    case responseTooLarge
  }

  /// What the caller receives as data.
  enum Received: Sendable {
    /// The server's pattern of this many bytes.
    case pattern(Int)
    case count(Int)
    /// The body sent.
    case echo
    case text(String)
    case contains(String)
  }

  /// What the last request reaching the server carried.
  enum Sent: Sendable {
    case method(String)
    /// The header's value, or nil when it must be absent.
    case header(String, String?)
    case headerPresent(String)
    /// The header's values, split at commas, are these.
    case headerValues(String, [String])
    /// The header's value holds this text.
    case headerContains(String, String)
    case target(String)
    case query(String, String)
    case bodyLength(Int)
    case chunked(Bool)
    /// How many requests reached the first server in all.
    case requestCount(Int)
  }

  /// How the body is handed to the fetcher.
  enum BodySource: Sendable {
    case data
    /// A stream provider without a length: sent chunked.
    case streamOfUnknownLength
    /// A stream provider with `bodyLength` set.
    case streamOfKnownLength
  }

  /// One behaviour: the request, the route that answers it and the expected outcome.
  struct Row: Sendable, CustomStringConvertible {
    var name: String
    var method = "GET"
    var path: String
    var body: Data?
    var bodySource = BodySource.data
    /// Added in order with `addValue`, so a repeated name is sent with both values.
    var headers: [(String, String)] = []
    var timeout: TimeInterval?
    var resourceTimeout: TimeInterval?
    var bodyLimit: Int64?
    /// `user:password` for `fetcher.credential`.
    var credential: String?
    var outcome = Outcome.success
    /// The final status of a successful fetch.
    var status = 200
    var received: Received?
    var sent: [Sent] = []

    var description: String { name }
  }

  static let payload = TestServer.patternBytes(count: 4096)
  static let largePayload = TestServer.patternBytes(count: 8_000_000)
  static let kibibyte = String(repeating: "0", count: 1024)

  static let redirectRows: [Row] = [
    Row(name: "301 on GET is followed", path: "/redirect?to=/bytes/7&status=301", received: .pattern(7)),
    Row(name: "302 on GET is followed", path: "/redirect?to=/bytes/7&status=302", received: .pattern(7)),
    Row(name: "303 on GET is followed", path: "/redirect?to=/bytes/7&status=303", received: .pattern(7)),
    Row(name: "307 on GET is followed", path: "/redirect?to=/bytes/7&status=307", received: .pattern(7)),
    Row(name: "308 on GET is followed", path: "/redirect?to=/bytes/7&status=308", received: .pattern(7)),
    Row(name: "relative Location chain of three hops", path: "/redirect/3", sent: [.method("GET")]),
    Row(
      name: "absolute Location chain of three hops", path: "/redirect/3?absolute=1", sent: [.method("GET")]),
    Row(
      name: "307 on POST keeps method and body", method: "POST", path: "/redirect?to=/echo&status=307",
      body: payload, received: .echo, sent: [.method("POST"), .bodyLength(4096)]),
    Row(
      name: "308 on POST keeps method and body", method: "POST", path: "/redirect?to=/echo&status=308",
      body: payload, received: .echo, sent: [.method("POST"), .bodyLength(4096)]),
    Row(
      name: "307 on PUT keeps method and body", method: "PUT", path: "/redirect?to=/echo&status=307",
      body: payload, received: .echo, sent: [.method("PUT"), .bodyLength(4096)]),
    Row(
      name: "301 on POST becomes a GET without body", method: "POST", path: "/redirect?to=/echo&status=301",
      body: payload, received: .count(0), sent: [.method("GET"), .bodyLength(0)]),
    Row(
      name: "302 on POST becomes a GET without body", method: "POST", path: "/redirect?to=/echo&status=302",
      body: payload, received: .count(0), sent: [.method("GET"), .bodyLength(0)]),
    Row(
      name: "303 on POST becomes a GET without body or its content headers", method: "POST",
      path: "/redirect?to=/echo&status=303", body: payload, headers: [("Content-Type", "text/plain")],
      received: .count(0),
      sent: [.method("GET"), .bodyLength(0), .header("Content-Type", nil), .header("Content-Length", nil)]),
    Row(
      name: "303 on PUT becomes a GET", method: "PUT", path: "/redirect?to=/echo&status=303", body: payload,
      received: .count(0), sent: [.method("GET"), .bodyLength(0)]),
    Row(
      name: "303 on HEAD stays HEAD", method: "HEAD", path: "/redirect?to=/bytes/5&status=303",
      received: .count(0), sent: [.method("HEAD")]),
    Row(
      name: "301 on PUT keeps method and body", method: "PUT", path: "/redirect?to=/echo&status=301",
      body: payload, received: .echo, sent: [.method("PUT"), .bodyLength(4096)]),
    Row(name: "20 redirects are followed", path: "/redirect/20", received: .text("redirect done")),
    Row(
      name: "a 21st redirect exceeds the limit", path: "/redirect/21",
      outcome: .transport(.httpTooManyRedirects)),
    Row(
      name: "a redirect loop ends in an error", path: "/loop", outcome: .transport(.httpTooManyRedirects),
      sent: [.requestCount(21)]),
    Row(
      name: "Location with a query", path: "/redirect?to=%2Fheaders%3Fa%3D1%26b%3Dtwo",
      sent: [.target("/headers?a=1&b=two")]),
    Row(
      name: "Location with a fragment: followed, the fragment never sent",
      path: "/redirect?to=%2Fbytes%2F5%23part",
      received: .pattern(5), sent: [.target("/bytes/5")]),
    Row(
      name: "relative Location without a leading slash", path: "/redirect?to=bytes%2F6",
      received: .pattern(6),
      sent: [.target("/bytes/6")]),
    Row(
      name: "relative Location with dot segments", path: "/redirect?to=.%2Fx%2F..%2Fbytes%2F6",
      received: .pattern(6), sent: [.target("/bytes/6")]),
    Row(
      name: "absolute Location", path: "/redirect?to={origin}/bytes/5", received: .pattern(5),
      sent: [.target("/bytes/5")]),
    Row(
      name: "scheme-relative Location", path: "/redirect?to=//{host}/bytes/5", received: .pattern(5),
      sent: [.target("/bytes/5")]),
    Row(
      name: "300 with a Location is the final answer", path: "/redirect?to=/bytes/5&status=300",
      outcome: .status(300), received: .text("redirecting"), sent: [.requestCount(1)]),
    Row(
      name: "302 without a Location is the final answer", path: "/status/302", outcome: .status(302),
      sent: [.requestCount(1)]),
    Row(
      name: "a redirect to another origin drops Authorization", path: "/redirect?to={other}/headers",
      headers: [("Authorization", "Bearer secret")], sent: [.header("Authorization", nil)]),
    Row(
      name: "a redirect on the same origin keeps Authorization", path: "/redirect?to=/headers",
      headers: [("Authorization", "Bearer secret")], sent: [.header("Authorization", "Bearer secret")]),
    Row(
      name: "a redirect to another origin drops the caller's Cookie", path: "/redirect?to={other}/headers",
      headers: [("Cookie", "session=secret")], sent: [.header("Cookie", nil)]),
    Row(
      name: "a redirect to another origin sends that origin's Host", path: "/redirect?to={other}/headers",
      sent: [.header("Host", "{otherHost}")]),
    Row(
      name: "a cookie set by a redirect goes with the next hop",
      path: "/set-cookie?c=a%3D1&redirect=%2Fcookies",
      received: .text(#"{"cookie":"a=1"}"#), sent: [.header("Cookie", "a=1")]),
    Row(
      name: "307 to another origin keeps method and body", method: "POST",
      path: "/redirect?to={other}/echo&status=307", body: payload, received: .echo,
      sent: [.method("POST"), .bodyLength(4096)]),
    Row(
      name: "a redirect to an answer that never comes fails", path: "/redirect?to=/empty",
      outcome: .transport(nil)),
    Row(
      name: "Location with a raw space is sent encoded", path: "/redirect?to=%2Ftext%3Fvalue%3Da%20b",
      received: .text("a b"), sent: [.target("/text?value=a%20b")]),
    Row(
      name: "every cookie of one answer goes with the next hop",
      path: "/set-cookie?c=a%3D1&c=b%3D2&redirect=%2Fcookies",
      sent: [.headerContains("Cookie", "a=1"), .headerContains("Cookie", "b=2")]),
    Row(
      name: "a cookie for another path is not sent",
      path: "/set-cookie?c=a%3D1%3B%20Path%3D%2Fother&redirect=%2Fcookies", sent: [.header("Cookie", nil)]),
    Row(
      name: "an expired cookie is not sent", path: "/set-cookie?c=a%3D1%3B%20Max-Age%3D0&redirect=%2Fcookies",
      sent: [.header("Cookie", nil)]),
    Row(
      name: "a redirect to a scheme other than http(s) is refused",
      path: "/redirect?to=ftp%3A%2F%2F{host}%2Fx",
      outcome: .fetcherError, sent: [.requestCount(1)]),
  ]

  static let framingRows: [Row] = [
    Row(name: "Content-Length body", path: "/bytes/1000", received: .pattern(1000)),
    Row(name: "empty Content-Length body", path: "/bytes/0", received: .count(0)),
    Row(name: "large body", path: "/bytes/2000000", received: .pattern(2_000_000)),
    Row(name: "HEAD with Content-Length has no body", method: "HEAD", path: "/bytes/10", received: .count(0)),
    Row(name: "chunked body", path: "/chunked?chunks=4&size=1024", received: .pattern(4096)),
    Row(name: "chunked body of one-byte chunks", path: "/chunked?chunks=64&size=1", received: .pattern(64)),
    Row(name: "chunked body with no chunks", path: "/chunked?chunks=0", received: .count(0)),
    Row(
      name: "large chunked body", path: "/bytes/300000?chunked=1&chunkSize=7000", received: .pattern(300_000)),
    Row(
      name: "a body cut short of its Content-Length is an error", path: "/truncate?length=1000&send=500",
      outcome: .transport(nil)),
    Row(
      name: "a connection reset mid-body is an error", path: "/reset?length=1000&send=500",
      outcome: .transport(nil)),
    Row(name: "a connection closed without an answer is an error", path: "/empty", outcome: .transport(nil)),
    Row(name: "an answer that is not HTTP is an error", path: "/garbage", outcome: .transport(nil)),
  ]

  static let requestBodyRows: [Row] = [
    Row(
      name: "POST body is sent", method: "POST", path: "/echo", body: payload, received: .echo,
      sent: [.header("Content-Length", "4096"), .chunked(false)]),
    Row(name: "PUT body is sent", method: "PUT", path: "/echo", body: payload, received: .echo),
    Row(name: "PATCH body is sent", method: "PATCH", path: "/echo", body: payload, received: .echo),
    Row(
      name: "DELETE body is sent", method: "DELETE", path: "/echo", body: payload, received: .echo,
      sent: [.method("DELETE")]),
    Row(
      name: "DELETE without body sends no body", method: "DELETE", path: "/echo", received: .count(0),
      sent: [.method("DELETE"), .bodyLength(0), .header("Transfer-Encoding", nil)]),
    Row(
      name: "POST without body says Content-Length: 0", method: "POST", path: "/echo",
      sent: [.header("Content-Length", "0"), .header("Transfer-Encoding", nil)]),
    Row(
      name: "PUT without body says Content-Length: 0", method: "PUT", path: "/echo",
      sent: [.header("Content-Length", "0"), .header("Transfer-Encoding", nil)]),
    Row(
      name: "GET without body sends no framing headers", path: "/echo",
      sent: [.header("Content-Length", nil), .header("Transfer-Encoding", nil)]),
    Row(
      name: "POST of empty data says Content-Length: 0", method: "POST", path: "/echo", body: Data(),
      sent: [.header("Content-Length", "0"), .bodyLength(0)]),
    Row(
      name: "a streamed body of unknown length is sent chunked", method: "POST", path: "/echo", body: payload,
      bodySource: .streamOfUnknownLength, received: .echo,
      sent: [.chunked(true), .header("Content-Length", nil)]),
    Row(
      name: "a streamed body is sent chunked even with its bodyLength", method: "POST", path: "/echo",
      body: payload, bodySource: .streamOfKnownLength, received: .echo,
      sent: [.chunked(true), .header("Content-Length", nil)]),
    Row(
      name: "a large body is sent whole", method: "POST", path: "/echo", body: largePayload, received: .echo,
      sent: [.bodyLength(8_000_000)]),
    Row(
      name: "a caller's Content-Length that disagrees with the body is replaced", method: "POST",
      path: "/echo",
      body: payload, headers: [("Content-Length", "10")], received: .echo,
      sent: [.header("Content-Length", "4096")]),
    Row(
      name: "Expect: 100-continue upload is answered and sent", method: "POST", path: "/echo", body: payload,
      headers: [("Expect", "100-continue")], received: .echo),
    Row(
      name: "GET with a body is sent as POST", path: "/echo", body: payload, received: .echo,
      sent: [.method("POST")]),
  ]

  static let headerRows: [Row] = [
    Row(name: "Host names the server and its port", path: "/headers", sent: [.header("Host", "{host}")]),
    Row(name: "a User-Agent is sent", path: "/headers", sent: [.headerPresent("User-Agent")]),
    Row(
      name: "a custom header is sent as given", path: "/headers", headers: [("X-Custom", "value-1")],
      sent: [.header("X-Custom", "value-1")]),
    Row(
      name: "a header added twice is sent with both values", path: "/headers",
      headers: [("X-Twice", "one"), ("X-Twice", "two")], sent: [.headerValues("X-Twice", ["one", "two"])]),
    Row(
      name: "inner spaces of a header value are kept", path: "/headers", headers: [("X-Spaces", "a  b   c")],
      sent: [.header("X-Spaces", "a  b   c")]),
    Row(
      name: "a non-ASCII header value is sent as UTF-8", path: "/headers", headers: [("X-Name", "café")],
      sent: [.header("X-Name", "café")]),
    Row(
      name: "a header value with CR LF is refused", path: "/headers",
      headers: [("X-Evil", "a\r\nX-Injected: 1")], outcome: .refused),
    Row(
      name: "a header name with a space is refused", path: "/headers", headers: [("X Evil", "1")],
      outcome: .refused),
    Row(name: "a method that is not a token is refused", method: "GE T", path: "/headers", outcome: .refused),
    Row(
      name: "40 KiB of header fields are sent", path: "/headers",
      headers: (0..<40).map { ("X-Large-\($0)", kibibyte) }, sent: [.header("X-Large-39", kibibyte)]),
    Row(
      name: "Accept-Encoding offers gzip", path: "/headers",
      sent: [.headerValues("Accept-Encoding", ["gzip"])]),
    Row(
      name: "a caller's Transfer-Encoding: identity on a GET is harmless", path: "/headers",
      headers: [("Transfer-Encoding", "identity")], sent: [.header("Transfer-Encoding", nil), .bodyLength(0)]),
  ]

  static let targetRows: [Row] = [
    Row(
      name: "a space in the query is percent-encoded", path: "/headers?q=a b",
      sent: [.query("q", "a b"), .target("/headers?q=a%20b")]),
    Row(
      name: "a percent-encoded path is sent as written", path: "/bytes/%31%30", received: .pattern(10),
      sent: [.target("/bytes/%31%30")]),
    Row(
      name: "an encoded slash stays encoded", path: "/text%2Fx", outcome: .status(404),
      sent: [.target("/text%2Fx")]),
    Row(
      name: "an encoded backslash stays encoded", path: "/a%5Cb", outcome: .status(404),
      sent: [.target("/a%5Cb")]),
    Row(
      name: "a non-ASCII query is sent as percent-encoded UTF-8", path: "/headers?q=caf%C3%A9",
      sent: [.query("q", "café"), .target("/headers?q=caf%C3%A9")]),
    Row(
      name: "a non-ASCII path is sent as percent-encoded UTF-8", path: "/caf\u{e9}", outcome: .status(404),
      sent: [.target("/caf%C3%A9")]),
    Row(name: "a plus in the query stays a plus", path: "/headers?q=a+b", sent: [.query("q", "a+b")]),
    Row(
      name: "query items without values are sent as written", path: "/headers?flag&x=",
      sent: [.target("/headers?flag&x=")]),
    Row(
      name: "dot segments are removed", path: "/x/../bytes/3", received: .pattern(3),
      sent: [.target("/bytes/3")]),
    Row(
      name: "a fragment is never sent", path: "/bytes/4#frag", received: .pattern(4),
      sent: [.target("/bytes/4")]),
    Row(name: "an empty path is sent as /", path: "{origin}", outcome: .status(404), sent: [.target("/")]),
    Row(name: "a trailing slash is kept", path: "/headers/", sent: [.target("/headers/")]),
  ]

  static let timeoutRows: [Row] = [
    Row(
      name: "a connection to a closed port fails with cannotConnectToHost", path: "{closed}/bytes/1",
      outcome: .transport(.cannotConnectToHost)),
    Row(
      name: "a server that never answers times out", path: "/hang", timeout: 1, outcome: .transport(.timedOut)
    ),
    Row(
      name: "a body that stops arriving times out", path: "/stall?length=100&send=10", timeout: 1,
      outcome: .transport(.timedOut)),
    Row(
      name: "a slow body within the timeout arrives", path: "/drip?bytes=20&chunks=5&interval=100",
      timeout: 60,
      received: .pattern(20)),
    Row(
      name: "a late answer within the timeout arrives", path: "/delay/0.5", timeout: 60,
      received: .text("delayed")),
  ]

  static let limitRows: [Row] = [
    Row(
      name: "a Content-Length over the body limit fails", path: "/bytes/100000", bodyLimit: 1000,
      outcome: .responseTooLarge),
    Row(
      name: "a chunked body growing past the limit fails", path: "/chunked?chunks=100&size=1000",
      bodyLimit: 1000,
      outcome: .responseTooLarge),
    Row(
      name: "a body of exactly the limit arrives", path: "/bytes/1000", bodyLimit: 1000,
      received: .pattern(1000)),
    Row(
      name: "an answer to HEAD announcing more than the limit succeeds", method: "HEAD",
      path: "/bytes/100000",
      bodyLimit: 1000, received: .count(0)),
    Row(
      name: "a decoded body past the limit fails (a gzip bomb)", path: "/bomb?decoded=100000000&coding=gzip",
      bodyLimit: 1_000_000, outcome: .responseTooLarge),
    Row(
      name: "the deadline for the whole fetch ends a slow body",
      path: "/drip?bytes=100&chunks=100&interval=600",
      resourceTimeout: 1, outcome: .transport(.timedOut)),
  ]

  static let decodingRows: [Row] = [
    Row(name: "gzip body arrives decoded", path: "/encoded?bytes=5000&coding=gzip", received: .pattern(5000)),
    Row(
      name: "deflate body arrives decoded", path: "/encoded?bytes=5000&coding=deflate",
      received: .pattern(5000)),
    Row(
      name: "chunked gzip body arrives decoded", path: "/encoded?bytes=50000&coding=gzip&chunked=1",
      received: .pattern(50000)),
    Row(
      name: "a corrupt gzip body fails to decode", path: "/corrupt-encoding?coding=gzip",
      outcome: .transport(.cannotDecodeContentData)),
    Row(
      name: "a corrupt deflate body fails to decode", path: "/corrupt-encoding?coding=deflate",
      outcome: .transport(.cannotDecodeContentData)),
  ]

  static let authRows: [Row] = [
    Row(name: "401 without credentials is the final answer", path: "/basic-auth/u/p", outcome: .status(401)),
    Row(
      name: "a credential answers a Basic challenge", path: "/basic-auth/u/p", credential: "u:p",
      received: .contains(#""authenticated":true"#)),
    Row(
      name: "a wrong credential ends as 401", path: "/basic-auth/u/p", credential: "u:wrong",
      outcome: .status(401)),
    Row(
      name: "credentials in the URL answer Basic", path: "http://u:p@{host}/basic-auth/u/p",
      received: .contains(#""authenticated":true"#)),
    Row(
      name: "a credential answers a Digest challenge", path: "/digest-auth/auth/u/p", credential: "u:p",
      received: .contains(#""authenticated":true"#)),
    Row(
      name: "a Bearer token is sent as given", path: "/bearer/t0k",
      headers: [("Authorization", "Bearer t0k")],
      received: .contains(#""authenticated":true"#)),
  ]

  static let statusRows: [Row] =
    [200, 201, 202, 203, 299].map { code in
      Row(name: "\(code) is a success", path: "/status/\(code)", status: code, received: .contains("\(code)"))
    } + [
      Row(name: "204 is a success without body", path: "/status/204", status: 204, received: .count(0))
    ]
    + [400, 403, 404, 418, 429, 502, 503, 599].map { code in
      Row(name: "\(code) is an error with its status", path: "/status/\(code)", outcome: .status(code))
    } + [
      Row(
        name: "an error status carries its body", path: "/status/500", outcome: .status(500),
        received: .contains("Server Status 500"))
    ]

  static let rows =
    redirectRows + framingRows + requestBodyRows + headerRows + targetRows + timeoutRows + limitRows
    + decodingRows + authRows + statusRows

  @Test func theTableHasAtLeastEightyRows() {
    #expect(
      Self.rows.count + ConformanceWireTests.rows.count + ConformanceScenarioTests.Scenario.allCases.count
        >= 80)
  }

  @Test(arguments: rows)
  func behaviour(_ row: Row) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let other = try TestServer()
    defer { other.stop() }
    for target in [server, other] {
      target.route("/loop") { _ in .redirect(to: "/loop") }
    }
    var places = [
      "{origin}": server.baseURL.absoluteString, "{host}": "127.0.0.1:\(server.port)",
      "{other}": other.baseURL.absoluteString, "{otherHost}": "127.0.0.1:\(other.port)",
    ]
    // Only when asked: each closed port stays reserved for the life of the process.
    if row.path.contains("{closed}") { places["{closed}"] = "http://127.0.0.1:\(try closedPort())" }
    func expand(_ text: String) -> String {
      places.reduce(text) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
    }
    let path = expand(row.path)
    let url = path.hasPrefix("http") ? try #require(URL(string: path)) : server.url(path)
    let fetcher = Self.fetcher(url, for: row)
    let result = await fetcher.fetchResult(timeout: 60)

    Self.check(result, of: fetcher, against: row)
    let finalServer = row.path.contains("{other}") ? other : server
    let last = finalServer.requests.last
    // An absent header is checked on a request that arrived, not on none.
    if !row.sent.isEmpty { #expect(last != nil, "no request reached the server") }
    for check in row.sent {
      switch check {
      case .method(let method): #expect(last?.method == method)
      case .header(let name, let value): #expect(last?.header(name) == value.map(expand))
      case .headerPresent(let name): #expect(last?.header(name)?.isEmpty == false)
      case .headerContains(let name, let text): #expect(last?.header(name)?.contains(text) == true)
      case .headerValues(let name, let values):
        let sent = (last?.headerValues(name) ?? []).flatMap { $0.split(separator: ",") }.map {
          $0.trimmingCharacters(in: .whitespaces)
        }
        #expect(values.allSatisfy(sent.contains), "\(name): \(sent)")
      case .target(let target): #expect(last?.target == target)
      case .query(let name, let value): #expect(last?.query[name] == value)
      case .bodyLength(let length): #expect(last?.bodyLength == length)
      case .chunked(let chunked): #expect(last?.wasChunked == chunked)
      case .requestCount(let count): #expect(server.requests.count == count)
      }
    }
    if case .refused = row.outcome { #expect(server.requests.isEmpty) }
  }

  static func fetcher(_ url: URL, for row: Row) -> SessionFetcher {
    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.cookieStorage = SessionCookieStorage()
    fetcher.request?.httpMethod = row.method
    for (index, (name, value)) in row.headers.enumerated() {
      if row.headers[..<index].contains(where: { $0.0 == name }) {
        fetcher.request?.addValue(value, forHTTPHeaderField: name)
      } else {
        fetcher.setRequestValue(value, forHTTPHeaderField: name)
      }
    }
    if let timeout = row.timeout { fetcher.request?.timeoutInterval = timeout }
    fetcher.resourceTimeoutInterval = row.resourceTimeout
    fetcher.maximumResponseBodyLength = row.bodyLimit
    if let credential = row.credential?.split(separator: ":").map(String.init), credential.count == 2 {
      fetcher.credential = URLCredential(user: credential[0], password: credential[1], persistence: .none)
    }
    if let body = row.body {
      switch row.bodySource {
      case .data:
        fetcher.bodyData = body
      case .streamOfUnknownLength:
        fetcher.bodyStreamProvider = { InputStream(data: body) }
      case .streamOfKnownLength:
        fetcher.bodyStreamProvider = { InputStream(data: body) }
        fetcher.bodyLength = Int64(body.count)
      }
    }
    return fetcher
  }

  static func check(_ result: FetchResult, of fetcher: SessionFetcher, against row: Row) {
    let error = String(describing: result.error)
    switch row.outcome {
    case .success:
      #expect(result.error == nil, "\(error)")
      #expect(fetcher.statusCode == row.status)
    case .status(let code):
      #expect(result.fetcherError?.statusCode == code, "\(error)")
      #expect(fetcher.statusCode == code)
    case .transport(let code?):
      #expect(result.urlError?.code == code, "\(error)")
    case .transport(nil):
      #expect(result.urlError != nil, "\(error)")
    case .refused:
      guard case .invalidConfiguration? = result.fetcherError else {
        Issue.record("not refused: \(error)")
        return
      }
    case .fetcherError:
      #expect(result.fetcherError != nil && result.fetcherError?.statusCode == nil, "\(error)")
    case .responseTooLarge:
      guard case .responseTooLarge? = result.fetcherError else {
        Issue.record("not refused as too large: \(error)")
        return
      }
    }
    let data = result.data ?? Data()
    switch row.received {
    case nil: break
    case .pattern(let count): #expect(data == TestServer.patternBytes(count: count), "\(data.count) bytes")
    case .count(let count): #expect(data.count == count)
    case .echo: #expect(data == row.body)
    case .text(let text): #expect(String(decoding: data, as: UTF8.self) == text)
    case .contains(let text): #expect(String(decoding: data, as: UTF8.self).contains(text))
    }
  }
}
