import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite("Curl engine: error mapping, heads, options")
struct CurlPureLogicTests {
  static let mapping: [(code: Int32, message: String, isFile: Bool, expected: URLError.Code)] = [
    (1, "Protocol \"ftp\" not supported", false, .unsupportedURL),
    (1, "Received HTTP/0.9 when not allowed", false, .badServerResponse),
    (3, "URL using bad/illegal format", false, .badURL),
    (5, "Could not resolve proxy: p", false, .cannotFindHost),
    (6, "Could not resolve host: h", false, .cannotFindHost),
    (7, "Failed to connect", false, .cannotConnectToHost),
    (8, "Weird server reply", false, .badServerResponse),
    (16, "HTTP/2 error", false, .networkConnectionLost),
    (18, "transfer closed with 10 bytes remaining", false, .networkConnectionLost),
    (26, "read callback failed", false, .requestBodyStreamExhausted),
    (26, "read callback failed", true, .cannotOpenFile),
    (27, "Out of memory", false, .cannotParseResponse),
    (28, "Operation timed out", false, .timedOut),
    (35, "SSL connect error", false, .secureConnectionFailed),
    (42, "Callback aborted", false, .cancelled),
    (47, "Too many redirects", false, .httpTooManyRedirects),
    (52, "Empty reply from server", false, .networkConnectionLost),
    (55, "Send failure", false, .networkConnectionLost),
    (56, "Recv failure: Connection reset by peer", false, .networkConnectionLost),
    (65, "seek callback returned error 2", false, .networkConnectionLost),
    (56, "Too large response headers: 312592 > 307200", false, .cannotParseResponse),
    (58, "Problem with the local SSL certificate", false, .clientCertificateRejected),
    (59, "Couldn't use specified SSL cipher", false, .secureConnectionFailed),
    (60, "SSL peer certificate was not OK", false, .serverCertificateUntrusted),
    (61, "Unrecognized transfer encoding", false, .cannotDecodeContentData),
    (63, "Maximum file size exceeded", false, .dataLengthExceedsMaximum),
    (66, "Failed to initialise SSL Engine", false, .secureConnectionFailed),
    (77, "Problem with the SSL CA cert", false, .secureConnectionFailed),
    (83, "Issuer check failed", false, .serverCertificateUntrusted),
    (92, "Stream error in the HTTP/2 framing layer", false, .networkConnectionLost),
    (94, "An authentication function returned an error", false, .userAuthenticationRequired),
    (2, "Failed initialization", false, .unknown),
    (99, "Unknown error", false, .unknown),
  ]

  /// HTTP/2 events as libcurl 7.88 reports them (measured against an `h2` server, see
  /// `HTTP2FailureTests`): one code each; `retried` is whether libcurl sent the request again
  /// itself, which a fetcher must not multiply.
  static let http2Mapping:
    [(code: Int32, message: String, overHTTP2: Bool, expected: URLError.Code, retried: Bool)] = [
      (
        92, "HTTP/2 stream 1 was not closed cleanly: INTERNAL_ERROR (err 2)", true, .networkConnectionLost,
        false
      ),
      (92, "HTTP/2 stream 1 was not closed cleanly: PROTOCOL_ERROR (err 1)", true, .badServerResponse, false),
      (
        92, "HTTP/2 stream 3 was not closed cleanly: FRAME_SIZE_ERROR (err 6)", true, .badServerResponse,
        false
      ),
      (
        92, "HTTP/2 stream 5 was not closed cleanly: COMPRESSION_ERROR (err 9)", true, .badServerResponse,
        false
      ),
      (16, "Error in the HTTP2 framing layer", true, .networkConnectionLost, false),
      (52, "Empty reply from server", true, .cannotParseResponse, false),
      (52, "Empty reply from server", false, .networkConnectionLost, false),
      (56, "Connection died, tried 5 times before giving up", true, .networkConnectionLost, true),
      (56, "Recv failure: Connection reset by peer", true, .networkConnectionLost, false),
      (18, "transfer closed with outstanding read data remaining", true, .networkConnectionLost, false),
    ]

  @Test(arguments: 0..<http2Mapping.count) func http2EventsMapToOneCodeEach(_ row: Int) {
    let entry = Self.http2Mapping[row]
    let error = CurlErrorMapping.urlError(
      code: entry.code, curlMessage: entry.message, url: nil, overHTTP2: entry.overHTTP2)
    #expect(error.code == entry.expected)
    let retried = error.userInfo[RetryPolicy.retriedByTransportKey] as? Bool == true
    #expect(retried == entry.retried)
    // What libcurl already retried is not retried again; the lost connections are, for a GET.
    let suggested = RetryPolicy.isRetryable(statusCode: nil, error: error, method: "GET")
    #expect(suggested == (entry.expected == .networkConnectionLost && !entry.retried))
  }

  /// HTTP/2 is offered by default from libcurl 8.13.0 (`LIBCURL_VERSION_NUM` 0x080D00), and
  /// whenever the caller asks; never when the caller says no.
  @Test(
    arguments: [
      (nil, UInt32(0x07_58_01), false), (nil, 0x08_05_00, false), (nil, 0x08_0C_01, false),
      (nil, 0x08_0D_00, true), (nil, 0x08_12_00, true), (nil, 0, false),
      (true, 0x07_58_01, true), (false, 0x08_12_00, false),
    ] as [(Bool?, UInt32, Bool)])
  func http2IsOfferedFromTheVersionThatReportsCutBodies(
    _ setting: Bool?, _ version: UInt32, _ offered: Bool
  ) {
    #expect(HTTP2Offer.offers(setting: setting, libcurlVersion: version) == offered)
  }

  @Test(arguments: 0..<mapping.count) func curlCodeMapsToTheApplePlatformsError(_ row: Int) throws {
    let entry = Self.mapping[row]
    let url = try #require(URL(string: "https://example.com/a"))
    let error = CurlErrorMapping.urlError(
      code: entry.code, curlMessage: entry.message, url: url, bodyIsFile: entry.isFile)
    #expect(error.code == entry.expected)
    #expect(error.userInfo[NSLocalizedDescriptionKey] as? String == entry.message)
    #expect(error.userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
    #expect(error.userInfo[EngineErrorKeys.failingURLString] as? String == url.absoluteString)
    #expect(error.userInfo[EngineErrorKeys.curlCode] as? Int == Int(entry.code))
  }

  @Test func headsAreAssembledLineByLine() throws {
    var parser = CurlResponseHeadParser()
    let lines = [
      "HTTP/1.1 100 Continue\r\n", "\r\n", "HTTP/1.1 200 OK\r\n", "Set-Cookie: a=1\r\n", "X-Long: one\r\n",
      "  two\r\n", "set-cookie: c=3\r\n", "Set-Cookie:  b=2 \r\n", "Empty:\r\n", "X-Tab:\tv 1\t\r\n",
      "X-UTF8: caf\u{e9}\r\n", "\r\n",
    ]
    var heads: [ParsedResponseHead] = []
    for line in lines {
      if let head = parser.consume(line: line) { heads.append(head) }
    }
    #expect(heads.count == 2)
    #expect(heads[0].isInterim && heads[0].statusCode == 100)
    let final = heads[1]
    #expect(!final.isInterim)
    #expect(final.statusCode == 200 && final.httpVersion == "HTTP/1.1")
    // Same spelling joined with ", " in order; another spelling kept apart (FoundationNetworking).
    #expect(final.headerFields["Set-Cookie"] == "a=1, b=2")
    #expect(final.headerFields["set-cookie"] == "c=3")
    #expect(final.headerFields["X-Long"] == "one two")
    #expect(final.headerFields["Empty"] == "")
    #expect(final.headerFields["X-Tab"] == "v 1")
    #expect(final.headerFields["X-UTF8"] == "caf\u{e9}")
    #expect(final.value(named: "x-long") == "one two")
  }

  @Test(arguments: [
    ("HTTP/2 204 \r\n", 204, "HTTP/2"), ("HTTP/1.0 404 Not Found\r\n", 404, "HTTP/1.0"),
    ("HTTP/3 200\r\n", 200, "HTTP/3"), ("HTTP/1.1 200 OK\r\n", 200, "HTTP/1.1"),
    ("HTTP/2.0 301 Moved\r\n", 301, "HTTP/2"), ("HTTP/3.0 503\r\n", 503, "HTTP/3"),
    ("HTTP/1.1   418   I'm a teapot\r\n", 418, "HTTP/1.1"), ("HTTP/1.1 200\n", 200, "HTTP/1.1"),
    ("HTTP/2.5 200 x\r\n", 200, "HTTP/2.5"), ("HTTP/4 599\r\n", 599, "HTTP/4"),
  ])
  func statusLinesGiveTheVersion(_ line: String, _ status: Int, _ version: String) {
    var parser = CurlResponseHeadParser()
    _ = parser.consume(line: line)
    let head = parser.consume(line: "\r\n")
    #expect(head?.statusCode == status)
    #expect(head?.httpVersion == version)
  }

  /// A line that is not a status line where one is expected is skipped: the next one starts the head.
  @Test(arguments: [
    "HTTP/1.1\r\n", "HTTP/1.1 \r\n", "HTTP/1.1 abc OK\r\n", "HTTP/1.1 20x\r\n", "HTTP/1.1 -200\r\n",
    "HTTP/1.1 1234567890\r\n", "http/1.1 200 OK\r\n", "HTTP 200\r\n", "ICY 200 OK\r\n", "",
    " HTTP/1.1 200\r\n",
  ])
  func malformedStatusLinesAreSkipped(_ line: String) {
    var parser = CurlResponseHeadParser()
    #expect(parser.consume(line: line) == nil)
    #expect(parser.consume(line: "HTTP/1.1 202 Accepted\r\n") == nil)
    #expect(parser.consume(line: "A: b\r\n") == nil)
    let head = parser.consume(line: "\r\n")
    #expect(head?.statusCode == 202)
    #expect(head?.fields == [ParsedResponseHead.Field(name: "A", value: "b")])
  }

  /// The parser notes whether every name of a head is ASCII (a lookup by ASCII case is then exact).
  @Test(arguments: [
    (["A: b\r\n", "Set-Cookie: c\r\n"], true), ([String](), true), (["Ünï: x\r\n"], false),
    (["A: b\r\n", "Set-Coo\u{212A}ie: k\r\n"], false), (["A: ü\r\n"], true),
  ])
  func parsedHeadsKnowWhetherTheirNamesAreASCII(_ lines: [String], _ ascii: Bool) {
    var parser = CurlResponseHeadParser()
    #expect(parser.consume(line: "HTTP/1.1 200 OK\r\n") == nil)
    for line in lines { #expect(parser.consume(line: line) == nil) }
    let head = parser.consume(line: "\r\n")
    #expect(head?.namesAreASCII == ascii)
    #expect(head == ParsedResponseHead(statusCode: 200, httpVersion: "HTTP/1.1", fields: head?.fields ?? []))
    // The next head starts over.
    #expect(parser.consume(line: "HTTP/1.1 204 No Content\r\n") == nil)
    #expect(parser.consume(line: "\r\n")?.namesAreASCII == true)
  }

  @Test func redirectTargetsResolveAgainstTheRequest() throws {
    let base = try #require(URL(string: "http://h:8/a/b?q=1"))
    func target(_ status: Int, _ location: String?) -> URL? {
      let fields = location.map { [ParsedResponseHead.Field(name: "location", value: $0)] } ?? []
      return ParsedResponseHead(statusCode: status, httpVersion: "HTTP/1.1", fields: fields)
        .redirectTarget(relativeTo: base)
    }
    #expect(target(302, "c")?.absoluteString == "http://h:8/a/c")
    #expect(target(301, "/x?y=2")?.absoluteString == "http://h:8/x?y=2")
    #expect(target(307, "https://o/p")?.absoluteString == "https://o/p")
    #expect(target(200, "/x") == nil)
    #expect(target(302, nil) == nil)
  }

  @Test func proxyDictionaryMapsToCurlProxyPerScheme() {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.connectionProxyDictionary = [
      "HTTPEnable": 1, "HTTPProxy": "proxy.local", "HTTPPort": 3128,
      "HTTPSEnable": false, "HTTPSProxy": "secure.local", "HTTPSPort": 443,
    ]
    configuration.httpMaximumConnectionsPerHost = 32
    let options = CurlEngineOptions(configuration: configuration)
    #expect(options.proxyURL(forScheme: "http") == "http://proxy.local:3128")
    #expect(options.proxyURL(forScheme: "HTTPS") == nil)
    #expect(options.maximumConnectionsPerHost == 32)
    #expect(options.connectionCacheSize == 128)
    #expect(CurlEngineOptions(maximumConnectionsPerHost: 6).connectionCacheSize == 64)
    // The cache grows with the transfers attached at once, doubling at least, and never shrinks.
    let growth: [(current: Int, transfers: Int, expected: Int?)] = [
      (64, 1, nil), (64, 64, nil), (64, 65, 128), (64, 256, 256), (128, 129, 256), (256, 10, nil),
      (3000, 3001, 4096), (4096, 5000, nil), (64, 10_000, 4096),
    ]
    for row in growth {
      #expect(
        CurlEngineOptions.connectionCacheSize(current: row.current, transfers: row.transfers) == row.expected,
        "\(row)")
    }
    let ipv6 = CurlEngineOptions(
      configuration: {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.connectionProxyDictionary = ["HTTPSEnable": true, "HTTPSProxy": "::1"]
        return configuration
      }())
    #expect(ipv6.proxyURL(forScheme: "https") == "http://[::1]")
  }
}
