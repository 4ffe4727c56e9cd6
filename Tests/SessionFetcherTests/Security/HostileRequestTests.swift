import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Hostile input on the request side: what the library sends is what the caller meant, or nothing
/// is sent. Request splitting through header names, values and methods; redirects to other
/// protocols; TLS files that cannot be used. Each runs on the engine of the run
/// (`SESSIONFETCHER_ENGINE`), against a raw-socket server that counts connections and keeps the
/// bytes it got. Every refused name, value, method and redirect is in
/// `ScriptedHostileRequestTests`.
@Suite("Security: hostile requests")
struct HostileRequestTests {
  static func okServer() throws -> HostileServer {
    try HostileServer { _ in .bytes(Data("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)) }
  }

  static func fetcher(_ url: URL) -> SessionFetcher {
    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.cookieStorage = SessionCookieStorage()
    var request = fetcher.request!
    request.timeoutInterval = 10
    fetcher.request = request
    return fetcher
  }

  /// Fails `fetcher` must: `invalidConfiguration` whose text holds `naming`, with no connection to
  /// `server` and Started and Stopped balanced.
  static func expectRefused(
    _ fetcher: SessionFetcher, server: HostileServer, naming: String, started: Int = 0,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    let recorder = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult(timeout: 60)
    guard case .invalidConfiguration(let text)? = result.fetcherError else {
      Issue.record("not refused: \(String(describing: result.error))", sourceLocation: sourceLocation)
      return
    }
    #expect(text.contains(naming), "\(text)", sourceLocation: sourceLocation)
    #expect(!text.utf8.contains { $0 == 0x0D || $0 == 0x0A }, sourceLocation: sourceLocation)
    // A value may be a secret: the text names the header, never quotes the value.
    #expect(!text.contains("secret"), sourceLocation: sourceLocation)
    await drain(fetcher.callbackQueue)
    #expect(server.connectionCount == 0, sourceLocation: sourceLocation)
    #expect(recorder.started == started && recorder.stopped == started, sourceLocation: sourceLocation)
  }

  // MARK: - Header names, values and methods

  @Test("a header name carrying a second request is refused before any byte is sent")
  func requestSplittingThroughAHeaderName() async throws {
    let server = try Self.okServer()
    defer { server.stop() }
    let fetcher = Self.fetcher(server.url("/"))
    fetcher.setRequestValue(
      "v", forHTTPHeaderField: "X-N: a\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: evil\r\nX-Y")
    await Self.expectRefused(fetcher, server: server, naming: "header name \"X-N: a\\r\\n")
    #expect(!server.receivedBytes.contains(Data("smuggled".utf8)))
  }

  @Test("valid tokens and values reach the server exactly as given")
  func validRequestsPassUnchanged() async throws {
    let server = try Self.okServer()
    defer { server.stop() }
    let fetcher = Self.fetcher(server.url("/"))
    var request = fetcher.request!
    request.httpMethod = "PROPFIND"
    fetcher.request = request
    fetcher.setRequestValue("a\tb é ✓", forHTTPHeaderField: "X-Odd!#$%&'*+-.^_`|~1")
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.error == nil, "\(String(describing: result.error))")
    let head = String(decoding: server.requestHeads.first ?? Data(), as: UTF8.self)
    #expect(head.hasPrefix("PROPFIND / HTTP/1.1\r\n"), "\(head)")
    #expect(head.contains("X-Odd!#$%&'*+-.^_`|~1: a\tb é ✓\r\n"), "\(head)")
  }

  @Test("a method reaches the server as given, in its case", arguments: ["patch", "M-SEARCH", "Purge"])
  func methodsAreNotRewritten(_ method: String) async throws {
    let server = try Self.okServer()
    defer { server.stop() }
    let fetcher = Self.fetcher(server.url("/"))
    var request = fetcher.request!
    request.httpMethod = method
    fetcher.request = request
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.error == nil, "\(String(describing: result.error))")
    let head = String(decoding: server.requestHeads.first ?? Data(), as: UTF8.self)
    #expect(head.hasPrefix("\(method) / HTTP/1.1\r\n"), "\(head)")
  }

  // MARK: - Headers added after begin

  struct HeaderAuthorizer: FetcherAuthorizer {
    var name: String
    var value: String
    func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
      // Through the dictionary: `setValue` would drop a value with CR or LF on Linux.
      var authorized = request
      var fields = authorized.allHTTPHeaderFields ?? [:]
      fields[name] = value
      authorized.allHTTPHeaderFields = fields
      return authorized
    }
  }

  @Test("a cookie made in code with a control character is not stored, so never sent")
  func jarRefusesControlCharacters() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/cookies")
    let jar = fetcher.cookieStorage
    jar.setCookie(SessionCookie(name: "a", value: "1\r\nX-Injected: 1", domain: "127.0.0.1"))
    jar.setCookie(SessionCookie(name: "b\u{0}", value: "1", domain: "127.0.0.1"))
    jar.setCookie(SessionCookie(name: "good", value: "1", domain: "127.0.0.1"))
    #expect(jar.cookies.map(\.name) == ["good"])
    #expect(await fetcher.fetchResult(timeout: 60).error == nil)
    #expect(server.requests.last?.header("Cookie") == "good=1")
    #expect(server.requests.last?.header("X-Injected") == nil)
  }
}

/// Redirects never switch a fetch to a scheme it did not allow, and `allowLocalhostRequest` admits
/// plain http only; a fake FTP server (a raw listener) must get no connection.
@Suite("Security: redirects to other protocols")
struct HostileRedirectTests {
  static func expectInsecure(
    _ fetcher: SessionFetcher, target: String, sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    let result = await fetcher.fetchResult(timeout: 60)
    guard case .insecureRequest(let url)? = result.fetcherError else {
      Issue.record("not refused: \(String(describing: result.error))", sourceLocation: sourceLocation)
      return
    }
    #expect(url.absoluteString.hasPrefix(target), "\(url)", sourceLocation: sourceLocation)
  }

  static func percentEncoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
  }

  @Test("a fetch of ftp on localhost is refused at begin with allowLocalhostRequest, nothing sent")
  func initialFTPRequest() async throws {
    let ftp = try HostileServer { _ in .bytes(Data("220 fake FTP\r\n".utf8)) }
    defer { ftp.stop() }
    let target = "ftp://127.0.0.1:\(ftp.port)/x"
    let fetcher = SessionFetcher.fetcher(url: URL(string: target)!)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    let recorder = NotificationRecorder([fetcher])
    await Self.expectInsecure(fetcher, target: target)
    await drain(fetcher.callbackQueue)
    #expect(ftp.connectionCount == 0)
    #expect(recorder.started == 0 && recorder.stopped == 0)
  }
}

/// TLS files are read and checked when the fetch begins, on every engine: one that cannot be used
/// fails with `invalidTLSSettings` naming the caller's file, before any connection.
@Suite("Security: unusable TLS files")
struct HostileTLSFileTests {
  enum Role: String, CaseIterable, Sendable {
    case trustRoot, clientCertificate, clientKey
  }

  enum Bad: String, CaseIterable, Sendable {
    case empty, garbage, truncated, damaged, directory, fifo, oversized
  }

  /// Certificate-shaped DER with 300 bytes in its subject, so that its PEM body spans lines.
  static let certificateDER = TLSSettingsTests.certificateDER(padding: 300)
  static let keyDER = TLSSettingsTests.keyDER

  static func pem(_ label: String, _ der: Data) -> String {
    let body = der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
    return "-----BEGIN \(label)-----\n\(body)\n-----END \(label)-----\n"
  }

  /// Makes the bad file `bad` at `url`, standing for a file of `label`.
  static func make(_ bad: Bad, at url: URL, label: String) throws {
    let good = label == "CERTIFICATE" ? pem(label, certificateDER) : pem(label, keyDER)
    switch bad {
    case .empty:
      try Data().write(to: url)
    case .garbage:
      try Data("not a certificate at all\n".utf8).write(to: url)
    case .truncated:
      // The file cut off in its body: no end line.
      try Data(good.utf8.prefix(good.utf8.count / 2)).write(to: url)
    case .damaged:
      // A whole base64 line removed: still base64, no longer DER (what a bad copy and paste gives).
      var lines = good.split(separator: "\n", omittingEmptySubsequences: false)
      if lines.count > 4 { lines.remove(at: 2) } else { lines[1] = "MAA=" }
      try Data(lines.joined(separator: "\n").utf8).write(to: url)
    case .directory:
      try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    case .fifo:
      guard mkfifo(url.path, 0o600) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    case .oversized:
      // Valid PEM, repeated past the 10 MiB limit.
      var data = Data()
      while data.count <= 10 * 1024 * 1024 { data.append(contentsOf: good.utf8) }
      try data.write(to: url)
    }
  }

  static var cases: [(Role, Bad)] {
    Role.allCases.flatMap { role in Bad.allCases.map { (role, $0) } }
  }

  @Test("an unusable TLS file fails at begin naming it, before any connection", arguments: cases)
  func unusableFile(_ role: Role, _ bad: Bad) async throws {
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let server = try HostileServer { _ in .close }
    defer { server.stop() }
    let badFile = folder.appendingPathComponent("bad-\(role.rawValue)-\(bad.rawValue).pem")
    let certificate = folder.appendingPathComponent("client.pem")
    try Data(Self.pem("CERTIFICATE", Self.certificateDER).utf8).write(to: certificate)
    var tls = TLSSettings()
    switch role {
    case .trustRoot:
      try Self.make(bad, at: badFile, label: "CERTIFICATE")
      tls.additionalTrustRoots = [badFile]
    case .clientCertificate:
      try Self.make(bad, at: badFile, label: "CERTIFICATE")
      tls.clientCertificate = badFile
    case .clientKey:
      try Self.make(bad, at: badFile, label: "PRIVATE KEY")
      tls.clientCertificate = certificate
      tls.clientKey = badFile
    }
    let fetcher = SessionFetcher.fetcher(url: URL(string: "https://127.0.0.1:\(server.port)/")!)
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.tlsSettings = tls
    let recorder = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult(timeout: 60)
    guard case .invalidTLSSettings(let text)? = result.fetcherError else {
      Issue.record("\(role) \(bad): \(String(describing: result.error))")
      return
    }
    #expect(text.contains(badFile.path), "\(text)")
    switch bad {
    case .directory: #expect(text.contains("directory"), "\(text)")
    case .fifo: #expect(text.contains("not a regular file"), "\(text)")
    case .oversized: #expect(text.contains("larger than 10 MiB"), "\(text)")
    default: break
    }
    await drain(fetcher.callbackQueue)
    #expect(server.connectionCount == 0)
    #expect(recorder.started == 0 && recorder.stopped == 0)
  }
}

#if canImport(FoundationNetworking)
  /// The libcurl engine applies the same rule itself, for a request that reaches it another way
  /// than through a fetcher.
  @Suite("Security: the libcurl engine's own gate")
  struct CurlRequestGateTests {
    @Test(
      "the engine refuses what the rule refuses, with no connection",
      arguments: [
        (nil, "X-N: a\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: evil\r\nX-Y", "v"), (nil, "Host:", "evil"),
        (nil, "X-VT", "a\u{0B}b"), (nil, "X-CRLF", "a\r\nX-Injected: 1"),
        ("DELETE /x HTTP/1.1\r\nX-Inj: 1\r\nX-Z:", "Accept", "*/*"),
      ] as [(String?, String, String)])
    func engineGate(_ method: String?, _ name: String, _ value: String) throws {
      let server = try HostileRequestTests.okServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      var request = URLRequest(url: server.url("/"))
      if let method { request.httpMethod = method }
      request.allHTTPHeaderFields = [name: value]
      let (record, _) = try curlExchange(engine, request)
      #expect(record.completions.first!.urlErrorCode == .badURL)
      #expect(server.connectionCount == 0)
    }
  }
#endif
