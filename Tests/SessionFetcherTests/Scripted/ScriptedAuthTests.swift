import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Challenges and authorizers on the scripted engine: what the fetcher sends after a 401.
@Suite("Authentication (scripted)")
struct ScriptedAuthTests {
  static let body = Data("welcome".utf8)

  @Test func basicChallengeIsAnsweredFromTheCredential() async throws {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/private", with: .challenge(body: Data("denied".utf8)), .response(body: Self.body))
    let fetcher = engine.fetcher("/private")
    fetcher.credential = URLCredential(user: "user", password: "pa55", persistence: .none)
    let result = await fetcher.fetchResult()
    // The 401's body is not glued in front of the 200's.
    #expect(result.data == Self.body)
    #expect(engine.requests.count == 2)
    #expect(engine.requests.first?.header("Authorization") == nil)
    let answer = "Basic " + Data("user:pa55".utf8).base64EncodedString()
    #expect(engine.requests.last?.header("Authorization") == answer)
  }

  @Test func missingCredentialCompletesWith401() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/private", with: .challenge())
    let fetcher = engine.fetcher("/private")
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.fetcherError?.statusCode == 401)
    #expect(fetcher.statusCode == 401)
    #expect(engine.requests.count == 1)
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
  }

  @Test func wrongCredentialIsTriedOnceThen401() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/private", with: .challenge())
    let fetcher = engine.fetcher("/private")
    fetcher.credential = URLCredential(user: "user", password: "wrong", persistence: .none)
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.fetcherError?.statusCode == 401)
    #expect(engine.requests.count == 2)
  }

  /// Hands out tokens in turn: each refresh moves to the next.
  final class Authorizer: FetcherAuthorizer, @unchecked Sendable {
    // `@unchecked Sendable`: `tokens`, `refreshes` and `authorized` are only touched under `lock`.
    private let lock = NSLock()
    private var tokens: [String]
    private var refreshCount = 0
    private var authorizedCount = 0
    let allowRefresh: Bool

    init(tokens: [String], allowRefresh: Bool) {
      self.tokens = tokens
      self.allowRefresh = allowRefresh
    }

    var refreshes: Int { lock.withLock { refreshCount } }
    var authorized: Int { lock.withLock { authorizedCount } }

    func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
      #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
      return lock.withLock {
        authorizedCount += 1
        var request = request
        request.setValue("Bearer \(tokens.first ?? "none")", forHTTPHeaderField: "Authorization")
        return request
      }
    }

    func primeForRefresh() async -> Bool {
      lock.withLock {
        refreshCount += 1
        if allowRefresh && tokens.count > 1 { tokens.removeFirst() }
        return allowRefresh
      }
    }
  }

  @Test func authorizerRefreshesOnceAfter401() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(status: 401), .response(body: Self.body))
    let authorizer = Authorizer(tokens: ["expired", "fresh"], allowRefresh: true)
    let fetcher = engine.fetcher("/api")
    fetcher.authorizer = authorizer
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.data == Self.body)
    #expect(authorizer.refreshes == 1)
    #expect(authorizer.authorized == 2)
    #expect(engine.requests.map { $0.header("Authorization") } == ["Bearer expired", "Bearer fresh"])
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 2 && counter.stopped == 2)
  }

  @Test func authorizerRefusingRefreshGives401() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(status: 401), .response(body: Self.body))
    let authorizer = Authorizer(tokens: ["expired"], allowRefresh: false)
    let fetcher = engine.fetcher("/api")
    fetcher.authorizer = authorizer
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 401)
    #expect(authorizer.refreshes == 1)
    #expect(engine.requests.count == 1)
  }

  @Test func authorizerIsAskedOnlyOnceForRefreshEvenIfStill401() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(status: 401))
    let authorizer = Authorizer(tokens: ["a", "b"], allowRefresh: true)
    let fetcher = engine.fetcher("/api")
    fetcher.authorizer = authorizer
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 401)
    #expect(authorizer.refreshes == 1)
    #expect(engine.requests.map { $0.header("Authorization") } == ["Bearer a", "Bearer b"])
  }

  struct FailingAuthorizer: FetcherAuthorizer {
    struct NoToken: Error {}
    func authorizeRequest(_ request: URLRequest) async throws -> URLRequest { throw NoToken() }
  }

  @Test func authorizerErrorFailsTheFetchWithoutTraffic() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/api")
    fetcher.authorizer = FailingAuthorizer()
    let result = await fetcher.fetchResult()
    #expect(result.error is FailingAuthorizer.NoToken, "\(String(describing: result.error))")
    #expect(engine.requests.isEmpty)
  }
}
