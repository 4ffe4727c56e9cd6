import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// One behaviour, one error, on every engine: each way a server can fail an exchange on the wire
/// ends a fetch with one `URLError` code (the one Apple platforms give), never `.unknown`, and the
/// same retry suggestion for a GET. Runs on the engine the process runs with
/// (`SESSIONFETCHER_ENGINE`); the Engines article has the same table.
@Suite("Wire events")
struct WireEventTests {
  /// What the server does to the exchange.
  enum Event: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case cutBody, cutChunk, nonHTTPAnswer, noAnswer, resetBeforeAnswer, resetInBody
    case tooLargeHead, tooManyRedirects, tlsToPlainServer, silentServer, stalledBody

    var testDescription: String { rawValue }

    /// The code the fetch ends with, and whether a GET is suggested for a retry.
    var expected: (code: URLError.Code, retried: Bool) {
      switch self {
      case .cutBody, .cutChunk, .noAnswer, .resetBeforeAnswer, .resetInBody: (.networkConnectionLost, true)
      case .nonHTTPAnswer: (.badServerResponse, false)
      case .tooLargeHead: (.cannotParseResponse, false)
      case .tooManyRedirects: (.httpTooManyRedirects, false)
      case .tlsToPlainServer: (.secureConnectionFailed, false)
      case .silentServer, .stalledBody: (.timedOut, true)
      }
    }
  }

  /// A head announcing 1,000 bytes, and 10 of them.
  static let shortBody = Data("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789".utf8)

  /// The server of `event`, started, and the URL that meets it.
  static func serve(_ event: Event) throws -> (url: URL, stop: @Sendable () -> Void) {
    func hostile(_ reply: HostileServer.Reply) throws -> (URL, @Sendable () -> Void) {
      let server = try HostileServer { _ in reply }
      return (server.url("/wire"), { server.stop() })
    }
    switch event {
    case .cutBody:
      return try hostile(.bytes(shortBody))
    case .cutChunk:
      return try hostile(
        .bytes(Data("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100\r\n0123456789".utf8)))
    case .nonHTTPAnswer:
      return try hostile(.bytes(Data("SSH-2.0-OpenSSH_9.6\r\n".utf8)))
    case .noAnswer:
      return try hostile(.close)
    case .resetBeforeAnswer:
      return try hostile(.bytesThenReset(Data()))
    case .resetInBody:
      return try hostile(.bytesThenReset(shortBody))
    case .tooLargeHead:
      // Far over every engine's cap on a head (libcurl's is 300 KiB), then the server closes.
      let line = Data(("X-Filler: " + String(repeating: "h", count: 1_000) + "\r\n").utf8)
      return try hostile(
        .repeating(head: Data("HTTP/1.1 200 OK\r\n".utf8), chunk: line, totalBytes: 4 << 20))
    case .tooManyRedirects:
      let server = try TestServer()
      return (server.url("/redirect/5"), { server.stop() })
    case .tlsToPlainServer:
      // A plain HTTP server's answer to a TLS hello, which is no request it can read.
      let server = try HandshakeCloser(
        answer: Data("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
      return (server.url, { server.stop() })
    case .silentServer:
      return try hostile(.bytesThenStall(Data()))
    case .stalledBody:
      return try hostile(.bytesThenStall(shortBody))
    }
  }

  @Test(arguments: Event.allCases)
  func oneCodePerEvent(_ event: Event) async throws {
    let (url, stop) = try Self.serve(event)
    defer { stop() }
    // A short request timeout only where the timeout is the event: under load, a redirect chain or
    // a handshake can take longer than a second.
    let timeout: TimeInterval = event.expected.code == .timedOut ? 1 : 30
    let (code, retried) = await Self.outcome(of: url, timeout: timeout)
    #expect(code == event.expected.code, "\(event)")
    #expect(retried == [event.expected.retried], "\(event)")
  }

  /// A certificate no trusted root signed (a private CA's, the default trust): the certificate
  /// verdict, not retried.
  @Test(.enabled(if: TLSFixtures.isAvailable, "needs openssl"))
  func untrustedCertificate() async throws {
    let fixtures = try await TLSFixtures.make()
    let server = try await TLSFixtures.Server.start(fixtures, certificate: "server")
    defer { server.stop() }
    let (code, retried) = await Self.outcome(of: server.url())
    #expect(code == .serverCertificateHasUnknownRoot)
    #expect(retried == [false])
  }

  /// How a GET of `url` with a request timeout of `timeout` ends: its error's code, and the retry
  /// suggestions it was given (the retry block refuses each, so there is one).
  static func outcome(of url: URL, timeout: TimeInterval = 30) async -> (
    code: URLError.Code?, retried: [Bool]
  ) {
    var request = URLRequest(url: url)
    request.timeoutInterval = timeout
    let fetcher = SessionFetcher(request: request)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.maximumRedirects = 2
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.05
    let suggestions = LockedBox<[Bool]>([])
    fetcher.retryBlock = { suggested, _, respond in
      suggestions.withLock { $0.append(suggested) }
      respond(false)
    }
    let result = await fetcher.fetchResult(timeout: 60)
    return (result.urlError?.code, suggestions.withLock { $0 })
  }
}

/// A value shared with `@Sendable` blocks, under a lock.
final class LockedBox<Value>: @unchecked Sendable {
  // `@unchecked Sendable`: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return body(&value)
  }
}
