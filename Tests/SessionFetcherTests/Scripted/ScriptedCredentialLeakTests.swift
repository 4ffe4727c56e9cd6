import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Attack table, part 1, on the scripted engine: the credential headers a caller set never follow
/// a redirect to another origin (another host, another port, or back from one). What a real
/// engine sends on the wire after such a redirect is in `CredentialLeakTests`.
@Suite("Security: credentials across origins (scripted)")
struct ScriptedCredentialLeakTests {
  /// The credential headers a caller can set, with recognisable values.
  static let secretHeaders = [
    ("Authorization", "Bearer leak-token-1"),
    ("Proxy-Authorization", "Basic bGVhazpwcm94eQ=="),
    ("Cookie", "session=leak-cookie-3"),
  ]

  /// A fetcher of `/start`, with every credential header set and one harmless one.
  static func fetcher(on engine: ScriptedEngine) -> SessionFetcher {
    let fetcher = engine.fetcher("/start")
    // A private, empty jar: only the headers set here could carry a Cookie.
    fetcher.cookieStorage = SessionCookieStorage()
    for (name, value) in secretHeaders { fetcher.setRequestValue(value, forHTTPHeaderField: name) }
    fetcher.setRequestValue("kept", forHTTPHeaderField: "X-Harmless")
    return fetcher
  }

  static func expectNoSecrets(in request: ScriptedRequest, sourceLocation: SourceLocation = #_sourceLocation)
  {
    for (name, value) in secretHeaders {
      #expect(request.header(name) == nil, "\(name) reached \(request.url)", sourceLocation: sourceLocation)
      #expect(
        !request.headers.values.contains { $0.contains(value) }, "a secret value reached \(request.url)",
        sourceLocation: sourceLocation)
    }
    #expect(request.header("X-Harmless") == "kept", sourceLocation: sourceLocation)
  }

  static func expectAllSecrets(in request: ScriptedRequest, sourceLocation: SourceLocation = #_sourceLocation)
  {
    for (name, value) in secretHeaders {
      #expect(
        request.header(name) == value, "\(name) missing at \(request.url)", sourceLocation: sourceLocation)
    }
  }

  static let otherOrigins = ["https://other.test/landing", "https://scripted.test:8443/landing"]

  @Test(arguments: [301, 302, 303, 307, 308], otherOrigins)
  func aRedirectToAnotherOriginCarriesNoCredential(status: Int, target: String) async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/start", with: .redirect(to: target, status: status))
    engine.respond(to: target, with: .response(body: Data("landed".utf8)))
    let fetcher = Self.fetcher(on: engine)
    #expect(await fetcher.fetchResult().data == Data("landed".utf8))
    let requests = engine.requests
    try #require(requests.count == 2)
    // The first hop, on the request's own origin, did carry them.
    Self.expectAllSecrets(in: requests[0])
    #expect(requests[1].url.absoluteString == target)
    Self.expectNoSecrets(in: requests[1])
  }

  @Test func aRedirectOnTheSameOriginKeepsThem() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/start", with: .redirect(to: "/landing", status: 307))
    engine.respond(to: "/landing", with: .response(body: Data("landed".utf8)))
    let fetcher = Self.fetcher(on: engine)
    #expect(await fetcher.fetchResult().data == Data("landed".utf8))
    #expect(engine.requests.count == 2)
    for request in engine.requests { Self.expectAllSecrets(in: request) }
  }

  @Test func aChainThatComesBackToTheOriginDoesNotGetThemBack() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/start", with: .redirect(to: "https://other.test/bounce"))
    engine.respond(to: "https://other.test/bounce", with: .redirect(to: ScriptedEngine.origin + "/landing"))
    engine.respond(to: "/landing", with: .response(body: Data("landed".utf8)))
    let fetcher = Self.fetcher(on: engine)
    #expect(await fetcher.fetchResult().data == Data("landed".utf8))
    let requests = engine.requests
    #expect(requests.map(\.path) == ["/start", "/bounce", "/landing"])
    Self.expectAllSecrets(in: requests[0])
    for request in requests.dropFirst() { Self.expectNoSecrets(in: request) }
  }
}
