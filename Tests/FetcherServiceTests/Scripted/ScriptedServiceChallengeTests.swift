import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// The service's challenge block answers its fetchers' challenges, on the scripted engine: the
/// fetcher reads the 401's `WWW-Authenticate`, asks the block, and sends again with the answer.
@Suite("The service's challenge block on the scripted engine")
struct ScriptedServiceChallengeTests {
  static let credential = URLCredential(user: "user", password: "pa55", persistence: .none)

  static let challenges = [
    "Basic": #"Basic realm="test""#,
    "Digest": #"Digest realm="test", nonce="n0nce", qop="auth", algorithm=SHA-256"#,
  ]

  /// `/protected`: a challenge of `scheme`, then the protected body.
  static func engine(_ scheme: String) -> ScriptedEngine {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/protected", with: .challenge(challenges[scheme] ?? ""), .response(body: Data("secret".utf8)))
    return engine
  }

  @Test(arguments: ["Basic", "Digest"])
  func theServiceChallengeBlockAnswersForItsFetchers(scheme: String) async throws {
    let engine = Self.engine(scheme)
    let service = ScriptedServiceTests.service(engine)
    let spaces = Recorder<URLProtectionSpace>()
    service.challengeBlock = { _, challenge in
      spaces.append(challenge.protectionSpace)
      return (.useCredential, Self.credential)
    }
    let result = await service.fetcher(url: engine.url("/protected")).fetchResult()
    #expect(result.data == Data("secret".utf8), "\(String(describing: result.error))")
    #expect(spaces.values.map(\.realm) == ["test"])
    #expect(engine.requests.map { $0.header("Authorization") == nil } == [true, false])
    #expect(engine.requests.last?.header("Authorization")?.hasPrefix(scheme + " ") == true)
  }

  @Test func aFetcherMayReplaceTheServiceBlocks() async throws {
    let engine = Self.engine("Basic")
    let service = ScriptedServiceTests.service(engine)
    let serviceAsked = Recorder<Bool>()
    service.challengeBlock = { _, _ in
      serviceAsked.append(true)
      return (.cancelAuthenticationChallenge, nil)
    }
    let fetcher = service.fetcher(url: engine.url("/protected"))
    fetcher.challengeBlock = { _, _ in (.useCredential, Self.credential) }
    #expect(await fetcher.fetchResult().data == Data("secret".utf8))
    #expect(serviceAsked.count == 0)
    #expect(engine.requests.last?.header("Authorization") == "Basic dXNlcjpwYTU1")
  }
}
