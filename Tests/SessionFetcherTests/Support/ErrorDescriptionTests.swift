import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Every ``SessionFetcherError`` reads as one line that says what to change, however it is printed.
@Suite struct ErrorDescriptionTests {
  /// One error of each case, with what its text must name.
  static let table: [(error: SessionFetcherError, names: [String])] = [
    (.status(code: 503, data: Data("busy".utf8)), ["HTTP status 503", "4 body bytes"]),
    (.status(code: 404, data: nil), ["HTTP status 404"]),
    (
      .insecureRequest(URL(string: "http://127.0.0.1:8080/items")!),
      ["http://127.0.0.1:8080/items", "allowLocalhostRequest", "allowedInsecureSchemes", "FetcherService"]
    ),
    (
      .insecureRequest(URL(string: "http://example.com/")!),
      ["http://example.com/", "use https", "\"http\" to allowedInsecureSchemes"]
    ),
    // No engine fetches ftp: the refusal says so, and names no setting that would not help.
    (
      .insecureRequest(URL(string: "ftp://localhost/pub/x")!),
      ["ftp://localhost/pub/x", "\"ftp\"", "http and https"]
    ),
    (.invalidURL("not a url"), ["\"not a url\"", "absolute URL", "SessionFetcher.fetcher(urlString:)"]),
    (.invalidURL(""), ["an empty string", "https://example.com/path"]),
    (.cancelled, ["cancelled"]),
    (.bodyUnavailable(description: "no file at /data/movie.mp4"), ["/data/movie.mp4"]),
    (.downloadFailed(description: "the folder /tmp/x is not writable"), ["/tmp/x"]),
    (.invalidConfiguration("set at most one of bodyData and bodyFileURL"), ["bodyData", "bodyFileURL"]),
    (.authorizationFailed(description: "token expired"), ["Authorization failed", "token expired"]),
    (.streamInterrupted(description: "the resource's length changed"), ["length changed"]),
    (.responseTooLarge(limit: 1024), ["1024 bytes"]),
    (.engineUnavailable("no loadable libcurl.so.4"), ["libcurl.so.4"]),
    (
      .unsupportedByEngine("TLSSettings pinnedPublicKeys on the URLSession engine (set engine = .libcurl)"),
      ["pinnedPublicKeys", "engine = .libcurl"]
    ),
    (
      .invalidTLSSettings("clientKey file /k.pem holds no PEM private key"),
      ["tlsSettings", "clientKey", "/k.pem"]
    ),
    // A text made of several lines still prints as one.
    (.bodyUnavailable(description: "line one\nline two\r\n\tthree"), ["line one line two three"]),
  ]

  /// The name of `error`'s case; a new case does not compile until it is named here (and tabled).
  static func caseName(_ error: SessionFetcherError) -> String {
    switch error {
    case .status: "status"
    case .insecureRequest: "insecureRequest"
    case .invalidURL: "invalidURL"
    case .cancelled: "cancelled"
    case .bodyUnavailable: "bodyUnavailable"
    case .downloadFailed: "downloadFailed"
    case .invalidConfiguration: "invalidConfiguration"
    case .authorizationFailed: "authorizationFailed"
    case .streamInterrupted: "streamInterrupted"
    case .responseTooLarge: "responseTooLarge"
    case .engineUnavailable: "engineUnavailable"
    case .unsupportedByEngine: "unsupportedByEngine"
    case .invalidTLSSettings: "invalidTLSSettings"
    }
  }

  @Test func theTableHasEveryCase() {
    #expect(Set(Self.table.map { Self.caseName($0.error) }).count == 13)
  }

  @Test(arguments: Self.table.indices)
  func everyRenderingIsOneReadableLine(_ index: Int) {
    let (error, names) = Self.table[index]
    let renderings = [
      error.description, String(describing: error), "\(error)", error.localizedDescription,
      (error as any Error).localizedDescription, (error as NSError).localizedDescription,
    ]
    for text in renderings {
      #expect(text == error.description, "\(Self.caseName(error))")
    }
    let text = error.description
    let hasNewline = text.contains(where: \.isNewline)
    #expect(!hasNewline)
    #expect(!text.contains("\t"))
    for dump in ["(null)", "UserInfo", "Error Domain", "SessionFetcherError"] {
      #expect(!text.contains(dump), "\(text)")
    }
    for name in names {
      #expect(text.contains(name), "\(text) should name \(name)")
    }
  }

  @Test func anUnsupportedSchemeNamesNoSettingThatCannotHelp() {
    let text = SessionFetcherError.insecureRequest(URL(string: "ftp://localhost/pub/x")!).description
    #expect(!text.contains("allowLocalhostRequest") && !text.contains("allowedInsecureSchemes"), "\(text)")
  }

  /// `describe(_:url:)` over the errors a fetch ends with: the line each must be, exactly.
  static let described: [(error: any Error, url: URL?, line: String)] = {
    let url = URL(string: "https://api.example.com:8443/items?page=2")!
    func urlError(_ code: URLError.Code, _ text: String?) -> URLError {
      var info: [String: Any] = [NSURLErrorFailingURLErrorKey: url]
      if let text { info[NSLocalizedDescriptionKey] = text }
      return URLError(code, userInfo: info)
    }
    return [
      (
        urlError(.cannotConnectToHost, "Failed to connect to api.example.com port 8443: Connection refused"),
        nil,
        "Could not connect to api.example.com:8443: Failed to connect to api.example.com port 8443: "
          + "Connection refused (URLError -1004)"
      ),
      (
        urlError(.timedOut, nil), nil,
        "Timed out waiting for api.example.com:8443 (URLError -1001); request.timeoutInterval or "
          + "resourceTimeoutInterval set the limits"
      ),
      (
        urlError(.cannotFindHost, "(null)"), nil,
        "Could not resolve the host of https://api.example.com:8443/items?page=2 (URLError -1003)"
      ),
      (
        urlError(.serverCertificateHasUnknownRoot, "SSL certificate problem:\nunable to get local issuer"),
        nil,
        "The certificate of api.example.com:8443 is not trusted: SSL certificate problem: unable to get "
          + "local issuer (URLError -1203); tlsSettings.additionalTrustRoots adds a root (libcurl engine)"
      ),
      (
        urlError(.httpTooManyRedirects, nil), nil,
        "Too many redirects from https://api.example.com:8443/items?page=2 (URLError -1007); "
          + "maximumRedirects sets the limit"
      ),
      (
        URLError(.networkConnectionLost), url,
        "The connection to api.example.com:8443 was lost before the response was complete (URLError -1005)"
      ),
      (
        URLError(.networkConnectionLost), nil,
        "The connection to the server was lost before the response was complete (URLError -1005)"
      ),
      // The status's reason phrase is the platform's (its case differs between Foundations).
      (
        SessionFetcherError.status(code: 404, data: Data("gone".utf8)), url,
        SessionFetcherError.status(code: 404, data: Data("gone".utf8)).description
          + " from api.example.com:8443"
      ),
      (
        SessionFetcherError.status(code: 500, data: nil), nil,
        SessionFetcherError.status(code: 500, data: nil).description
      ),
      (SessionFetcherError.cancelled, url, "The fetch was cancelled"),
      (CocoaError(.fileReadNoSuchFile), nil, SessionFetcherError.readable(CocoaError(.fileReadNoSuchFile))),
    ]
  }()

  @Test(arguments: Self.described.indices)
  func describeNamesTheHostAndTheCause(_ index: Int) {
    let (error, url, line) = Self.described[index]
    let text = SessionFetcherError.describe(error, url: url)
    #expect(text == line)
    #expect(!text.contains(where: \.isNewline) && !text.contains("UserInfo") && !text.contains("(null)"))
  }

  /// Through a real refused connection on each engine: one line naming the host, port and cause.
  @Test(arguments: FetcherEngine.libcurl.isAvailable ? [FetcherEngine.urlSession, .libcurl] : [.urlSession])
  func aRefusedConnectionIsOneLineNamingTheHost(engine: FetcherEngine) async throws {
    let port = try closedPort()
    let fetcher = SessionFetcher.fetcher(urlString: "http://127.0.0.1:\(port)/items")
    fetcher.engine = engine
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    let error = try #require(await fetcher.fetchResult(timeout: 60).error)
    let text = SessionFetcherError.describe(error, url: fetcher.request?.url)
    #expect(text.hasPrefix("Could not connect to 127.0.0.1:\(port)"), "\(text)")
    #expect(text.hasSuffix("(URLError -1004)"), "\(text)")
    #expect(!text.contains("UserInfo") && !text.contains(where: \.isNewline), "\(text)")
  }

  /// An event stream's errors are one line naming the stream, however they are printed.
  @Test func eventSourceErrorsAreOneLine() {
    let url = URL(string: "https://example.com/events")!
    let errors: [EventSourceError] = [
      .streamEnded(url: url), .notAnEventStream(url: url, status: 200, contentType: "text/html"),
      .gaveUp(url: url, attempts: 5, lastCause: URLError(.cannotConnectToHost)),
    ]
    for error in errors {
      let line = error.description
      #expect("\(error)" == line && SessionFetcherError.describe(error) == line)
      #expect(line.contains(url.absoluteString))
      #expect(!line.contains(where: \.isNewline) && !line.contains("UserInfo"), "\(line)")
    }
  }

  @Test func aFoundationErrorInsideReadsAsItsLocalizedText() {
    let cocoa = CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: "/data/x"])
    let posix = NSError(domain: NSPOSIXErrorDomain, code: Int(ENOENT))
    struct Plain: Error, CustomStringConvertible { var description: String { "plain failure" } }
    for error in [cocoa, posix, Plain()] as [any Error] {
      let text = SessionFetcherError.readable(error)
      let hasNewline = text.contains(where: \.isNewline)
      #expect(!text.contains("UserInfo") && !text.contains("(null)") && !hasNewline, "\(text)")
    }
    #expect(SessionFetcherError.readable(Plain()) == "plain failure")
  }

  /// Through a real fetch, on the process's engine: the refusal names the switch for localhost.
  @Test func aRefusedLocalhostFetchNamesTheSwitches() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = SessionFetcher.fetcher(url: server.url("/bytes/1"))
    fetcher.callbackQueue = makeCallbackQueue()
    let text = try #require(await fetcher.fetchResult().fetcherError).description
    #expect(text.contains("allowLocalhostRequest") && text.contains("allowedInsecureSchemes"), "\(text)")
    #expect(server.requests.isEmpty)
  }

  /// A body stream provider that throws a Foundation error: the fetch's error has no `UserInfo` dump.
  @Test func aThrowingBodyProviderReadsAsOneLine() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/upload")
    fetcher.bodyStreamProvider = {
      throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: "/data/missing.bin"])
    }
    let error = try #require(await fetcher.fetchResult().fetcherError)
    guard case .bodyUnavailable = error else {
      Issue.record("expected bodyUnavailable, got \(error)")
      return
    }
    #expect(!error.description.contains("UserInfo") && !error.description.contains("(null)"), "\(error)")
    #expect(error.description.contains("body stream provider threw"))
  }
}
