import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Hostile input on the request side, on the scripted engine: header names, values and methods
/// that could split a request, from the caller, an authorizer, a redirect block or the session
/// configuration, and redirects to schemes the fetch did not allow, are refused before the request
/// they are in is made. What reaches a raw socket (the bytes of a valid request, a smuggling
/// attempt, a cookie) is in `HostileRequestTests`.
@Suite("Security: hostile requests (scripted)")
struct ScriptedHostileRequestTests {
  static func engine() -> ScriptedEngine {
    let engine = ScriptedEngine()
    engine.respond(to: "/", with: .response(body: Data("ok".utf8)))
    return engine
  }

  static func fetcher(_ engine: ScriptedEngine) -> SessionFetcher {
    let fetcher = engine.fetcher("/")
    fetcher.cookieStorage = SessionCookieStorage()
    return fetcher
  }

  /// Fails `fetcher` must: `invalidConfiguration` whose text holds `naming` on one line and quotes
  /// no value, with no request made and Started and Stopped balanced.
  static func expectRefused(
    _ fetcher: SessionFetcher, on engine: ScriptedEngine, naming: String, started: Int = 0,
    requests: Int = 0, sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    let recorder = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    guard case .invalidConfiguration(let text)? = result.fetcherError else {
      Issue.record("not refused: \(String(describing: result.error))", sourceLocation: sourceLocation)
      return
    }
    #expect(text.contains(naming), "\(text)", sourceLocation: sourceLocation)
    #expect(!text.utf8.contains { $0 == 0x0D || $0 == 0x0A }, sourceLocation: sourceLocation)
    // A value may be a secret: the text names the header, never quotes the value.
    #expect(!text.contains("secret"), sourceLocation: sourceLocation)
    await engine.drainEvents()
    await drain(fetcher.callbackQueue)
    #expect(engine.requests.count == requests, sourceLocation: sourceLocation)
    #expect(recorder.started == started && recorder.stopped == started, sourceLocation: sourceLocation)
  }

  @Test(arguments: [
    "Host: evil.example", "Host:", "X-A\nX-B", "X-A\rX-B", "X A", "X-\u{0}", "X-\t", "X-é", "", "X-(a)",
    "X-A\r\n", "X-N: a\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: evil\r\nX-Y",
  ])
  func headerNamesThatAreNotTokensAreRefusedFromTheSetterOrTheRequest(_ name: String) async {
    let engine = Self.engine()
    let viaSetter = Self.fetcher(engine)
    viaSetter.setRequestValue("v", forHTTPHeaderField: name)
    await Self.expectRefused(viaSetter, on: engine, naming: "header name")
    let viaRequest = Self.fetcher(engine)
    var request = viaRequest.request!
    request.allHTTPHeaderFields = ["Accept": "*/*", name: "v"]
    viaRequest.request = request
    await Self.expectRefused(viaRequest, on: engine, naming: "header name")
  }

  @Test(arguments: [
    "secret\r\nX-Injected: 1", "secret\nX-Injected: 1", "secret\rX", "secret\u{0}", "secret\u{0B}x",
    "secret\u{0C}", "secret\u{1B}[2J", "secret\u{7F}", "secret\u{85}",
  ])
  func headerValuesWithControlsAreRefusedNamingTheHeaderOnly(_ value: String) async {
    let engine = Self.engine()
    let fetcher = Self.fetcher(engine)
    fetcher.setRequestValue(value, forHTTPHeaderField: "X-Token")
    await Self.expectRefused(fetcher, on: engine, naming: "value of header \"X-Token\"")
  }

  @Test(arguments: [
    "DELETE /x HTTP/1.1\r\nX-Inj: 1\r\nX-Z:", "GET /other", "GET\r\n", "PO ST", "", "G\u{0}T",
  ])
  func methodsThatAreNotTokensAreRefusedNeverRewritten(_ method: String) async {
    let engine = Self.engine()
    let fetcher = Self.fetcher(engine)
    var request = fetcher.request!
    request.httpMethod = method
    fetcher.request = request
    await Self.expectRefused(fetcher, on: engine, naming: "HTTP method")
  }

  @Test(arguments: [("Authorization", "Bearer t\r\nX-Injected: 1"), ("X-Auth: evil", "t")])
  func anAuthorizerThatAddsABadHeaderFailsTheFetchWithNothingSent(_ name: String, _ value: String) async {
    let engine = Self.engine()
    let fetcher = Self.fetcher(engine)
    fetcher.authorizer = HostileRequestTests.HeaderAuthorizer(name: name, value: value)
    await Self.expectRefused(fetcher, on: engine, naming: "header")
  }

  @Test func aRedirectBlockThatAddsABadHeaderFailsTheFetchBeforeTheNextRequest() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/start", with: .redirect(to: "/next"))
    engine.respond(to: "/next", with: .response(body: Data("ok".utf8)))
    let fetcher = engine.fetcher("/start")
    fetcher.willRedirectBlock = { _, request, respond in
      var changed = request
      var fields = changed.allHTTPHeaderFields ?? [:]
      fields["X-Hop"] = "1\r\nX-Injected: 1"
      changed.allHTTPHeaderFields = fields
      respond(changed)
    }
    await Self.expectRefused(
      fetcher, on: engine, naming: "value of header \"X-Hop\"", started: 1, requests: 1)
    #expect(engine.requests.map(\.path) == ["/start"])
  }

  @Test func headersTheSessionConfigurationAddsPassTheSameRule() async {
    let engine = Self.engine()
    let fetcher = Self.fetcher(engine)
    fetcher.configurationBlock = { $0.httpAdditionalHeaders = ["X-Extra": "a\r\nX-Injected: 1"] }
    await Self.expectRefused(fetcher, on: engine, naming: "value of header \"X-Extra\"")
    let named = Self.fetcher(engine)
    named.configurationBlock = { $0.httpAdditionalHeaders = ["X-Extra: evil": "1"] }
    await Self.expectRefused(named, on: engine, naming: "header name \"X-Extra: evil\"")
  }

  // MARK: - Redirects to other protocols

  static func expectInsecure(
    _ fetcher: SessionFetcher, target: String, sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    let result = await fetcher.fetchResult()
    guard case .insecureRequest(let url)? = result.fetcherError else {
      Issue.record("not refused: \(String(describing: result.error))", sourceLocation: sourceLocation)
      return
    }
    #expect(url.absoluteString.hasPrefix(target), "\(url)", sourceLocation: sourceLocation)
  }

  /// A redirect never switches a fetch to a scheme it did not allow; `data:` and `file:` are
  /// refused even when listed. Only the redirect itself was requested.
  @Test(
    arguments: [
      ("ftp://127.0.0.1:2121/secret.txt", []), ("ftp://127.0.0.1:2121/secret.txt", ["ftp"]),
      ("data:text/plain,pwned", []), ("data:text/plain,pwned", ["data"]), ("file:///etc/hostname", []),
      ("file:///etc/hostname", ["file"]),
    ] as [(String, [String])])
  func aRedirectToAnotherProtocolIsRefused(_ target: String, _ allowedSchemes: [String]) async {
    let engine = ScriptedEngine()
    engine.respond(to: "/redirect", with: .redirect(to: target))
    let fetcher = engine.fetcher("/redirect")
    fetcher.allowedInsecureSchemes = allowedSchemes
    fetcher.allowLocalhostRequest = true
    await Self.expectInsecure(fetcher, target: target)
    #expect(engine.requests.map(\.path) == ["/redirect"], "a request nobody meant was made")
  }

  @Test func aRedirectBlockThatPointsAtFTPIsRefusedToo() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/redirect", with: .redirect(to: "/text"))
    engine.respond(to: "/text", with: .response(body: Data("ok".utf8)))
    let target = "ftp://127.0.0.1:2121/x"
    let fetcher = engine.fetcher("/redirect")
    fetcher.allowLocalhostRequest = true
    fetcher.willRedirectBlock = { _, request, respond in
      var changed = request
      changed.url = URL(string: target)
      respond(changed)
    }
    await Self.expectInsecure(fetcher, target: target)
    #expect(engine.requests.map(\.path) == ["/redirect"])
  }
}
