import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Digest authentication against httpbin's `/digest-auth/auth/USER/PASS/ALGORITHM`, which checks
/// the answer itself.
@Suite("Interop: Digest authentication with httpbin", .enabled(if: Interop.isEnabled, Interop.skipMessage))
struct InteropDigestTests {
  @Test(arguments: ["MD5", "SHA-256"])
  func theCredentialAnswersDigest(_ algorithm: String) async throws {
    let fetcher = Interop.fetcher(Interop.httpbin("/digest-auth/auth/user/passwd/\(algorithm)"))
    fetcher.credential = URLCredential(user: "user", password: "passwd", persistence: .none)
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(Interop.json(result.data)["authenticated"] as? Bool == true)
  }

  @Test(arguments: ["MD5", "SHA-256"])
  func theChallengeBlockAnswersDigest(_ algorithm: String) async throws {
    let fetcher = Interop.fetcher(Interop.httpbin("/digest-auth/auth/user/passwd/\(algorithm)"))
    let methods = Recorder<String>()
    fetcher.challengeBlock = { _, challenge in
      methods.append(challenge.protectionSpace.authenticationMethod)
      return (.useCredential, URLCredential(user: "user", password: "passwd", persistence: .none))
    }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(methods.values == [NSURLAuthenticationMethodHTTPDigest])
  }

  @Test(arguments: ["MD5", "SHA-256"])
  func aWrongPasswordEndsPromptlyAs401(_ algorithm: String) async throws {
    let fetcher = Interop.fetcher(Interop.httpbin("/digest-auth/auth/user/passwd/\(algorithm)"))
    fetcher.credential = URLCredential(user: "user", password: "wrong", persistence: .none)
    let exchanges = Recorder<Bool>()
    fetcher.metricsCollectionBlock = { _ in exchanges.append(true) }
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError?.statusCode == 401)
    // The challenge and one answer: never a loop.
    #expect(exchanges.count == 2)
  }
}
