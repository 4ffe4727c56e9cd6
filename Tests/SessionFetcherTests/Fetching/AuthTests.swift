import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("Authentication")
struct AuthTests {
  @Test func basicChallengeIsAnsweredFromTheCredential() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/basic-auth/user/pa55")
    fetcher.credential = URLCredential(user: "user", password: "pa55", persistence: .none)
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    // Workaround pinned: the 401 body is not glued in front of the 200 body (buffer reset per response).
    #expect(result.data == Data(#"{"authenticated":true,"user":"user"}"#.utf8))
  }

  @Test func missingCredentialCompletesPromptlyWith401() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // Workaround pinned: default handling would hang forever on Swift 6.3.1 (corelibs #5456).
    let fetcher = server.fetcher("/basic-auth/user/pa55")
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError?.statusCode == 401)
    #expect(fetcher.statusCode == 401)
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
  }

  @Test func wrongCredentialIsTriedOnceThen401() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/basic-auth/user/pa55")
    fetcher.credential = URLCredential(user: "user", password: "wrong", persistence: .none)
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError?.statusCode == 401)
    #expect(server.requestCount(path: "/basic-auth/user/pa55") == 2)
  }

  @Test func bearer401WithoutChallengeIsAStatusError() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let result = await server.fetcher("/bearer/token").fetchResult()
    #expect(result.fetcherError?.statusCode == 401)
  }

  final class Authorizer: FetcherAuthorizer, @unchecked Sendable {
    // `@unchecked Sendable`: `tokens`, `refreshes` and `authorized` are only touched under `lock`.
    private let lock = NSLock()
    private var tokens: [String]
    private(set) var refreshes = 0
    private(set) var authorized = 0
    let allowRefresh: Bool

    init(tokens: [String], allowRefresh: Bool) {
      self.tokens = tokens
      self.allowRefresh = allowRefresh
    }

    func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
      #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
      return lock.withLock {
        authorized += 1
        var request = request
        request.setValue("Bearer \(tokens.first ?? "none")", forHTTPHeaderField: "Authorization")
        return request
      }
    }

    func primeForRefresh() async -> Bool {
      lock.withLock {
        refreshes += 1
        if allowRefresh && tokens.count > 1 { tokens.removeFirst() }
        return allowRefresh
      }
    }
  }

  @Test func authorizerRefreshesOnceAfter401() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let authorizer = Authorizer(tokens: ["expired", "fresh"], allowRefresh: true)
    let fetcher = server.fetcher("/bearer/fresh")
    fetcher.authorizer = authorizer
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(authorizer.refreshes == 1)
    #expect(authorizer.authorized == 2)
    #expect(server.requests.map { $0.header("Authorization") } == ["Bearer expired", "Bearer fresh"])
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 2 && counter.stopped == 2)
  }

  /// Throws a token error of its own, or, when `trustsOwnHeader`, leaves a request with an
  /// `Authorization` header of the caller's as it is.
  struct GTMStyleAuthorizer: FetcherAuthorizer {
    struct Revoked: Error, Equatable { var account: String }
    let trustsOwnHeader: Bool
    let calls = Recorder<Bool>()

    func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
      calls.append(true)
      throw Revoked(account: "ada")
    }

    func isAuthorizedRequest(_ request: URLRequest) -> Bool {
      trustsOwnHeader && request.value(forHTTPHeaderField: "Authorization") != nil
    }
  }

  @Test func authorizerErrorReachesBothCompletionFormsAsItself() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let authorizer = GTMStyleAuthorizer(trustsOwnHeader: false)
    let closureForm = server.fetcher("/bytes/10")
    closureForm.authorizer = authorizer
    let result = await closureForm.fetchResult()
    #expect(result.error as? GTMStyleAuthorizer.Revoked == GTMStyleAuthorizer.Revoked(account: "ada"))
    let asyncForm = server.fetcher("/bytes/10")
    asyncForm.authorizer = authorizer
    await #expect(throws: GTMStyleAuthorizer.Revoked(account: "ada")) { try await asyncForm.beginFetch() }
    #expect(authorizer.calls.count == 2)
    #expect(server.requestCount(path: "/bytes/10") == 0)
  }

  @Test func requestTheAuthorizerCallsAuthorizedGoesOutWithTheCallersHeader() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let authorizer = GTMStyleAuthorizer(trustsOwnHeader: true)
    let fetcher = server.fetcher("/bearer/mine")
    fetcher.setRequestValue("Bearer mine", forHTTPHeaderField: "Authorization")
    fetcher.authorizer = authorizer
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(authorizer.calls.count == 0)
    #expect(server.requests.map { $0.header("Authorization") } == ["Bearer mine"])
  }

  /// Adds a stale token and has no `primeForRefresh` of its own.
  struct StaleTokenAuthorizer: FetcherAuthorizer {
    func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
      var request = request
      request.setValue("Bearer stale", forHTTPHeaderField: "Authorization")
      return request
    }
  }

  @Test func authorizerWithoutPrimeForRefreshGets401WithoutRetry() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/bearer/fresh")
    fetcher.authorizer = StaleTokenAuthorizer()
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 401)
    #expect(server.requests.map { $0.header("Authorization") } == ["Bearer stale"])
  }
}
