import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// `challengeBlock` and Digest authentication against the test server, on the engine the run
/// selects (`SESSIONFETCHER_ENGINE`): that the answers the fetcher computes are the ones a server
/// accepts. What the block is shown and what each of its answers decides (failure counts, refusals,
/// the limit of answers, stale nonces, other origins, a stop while it decides) is checked without
/// sockets in `ScriptedChallengeBlockTests`.
@Suite("Authentication challenges: challengeBlock and Digest", .ownThreads)
struct ChallengeBlockTests {
  /// What a challenge block was shown.
  struct Seen: Sendable {
    var realm: String?
    var host: String
    var port: Int
    var method: String
    var previousFailureCount: Int
    var failureStatus: Int?
  }

  /// A block that records each challenge and answers with `answer(previousFailureCount)`.
  static func recordingBlock(
    _ seen: Recorder<Seen>,
    answer: @escaping @Sendable (Int) -> (URLSession.AuthChallengeDisposition, URLCredential?)
  ) -> ChallengeBlock {
    { _, challenge in
      let space = challenge.protectionSpace
      seen.append(
        Seen(
          realm: space.realm, host: space.host, port: space.port, method: space.authenticationMethod,
          previousFailureCount: challenge.previousFailureCount,
          failureStatus: (challenge.failureResponse as? HTTPURLResponse)?.statusCode))
      return answer(challenge.previousFailureCount)
    }
  }

  static func credential(_ password: String = "pa55") -> URLCredential {
    URLCredential(user: "user", password: password, persistence: .none)
  }

  // MARK: - challengeBlock (the original's testHTTPAuthentication_ChallengeBlock)

  @Test func theBlockSeesTheBasicChallengeAndItsCredentialIsUsed() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/basic-auth/user/pa55")
    let seen = Recorder<Seen>()
    fetcher.challengeBlock = Self.recordingBlock(seen) { _ in (.useCredential, Self.credential()) }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == Data(#"{"authenticated":true,"user":"user"}"#.utf8))
    let challenge = try #require(seen.values.first)
    #expect(seen.count == 1)
    #expect(challenge.realm == "test")
    #expect(challenge.host == "127.0.0.1")
    #expect(challenge.port == Int(server.port))
    #expect(challenge.method == NSURLAuthenticationMethodHTTPBasic)
    #expect(challenge.previousFailureCount == 0)
    #expect(challenge.failureStatus == 401)
    #expect(server.requests.map { $0.header("Authorization") } == [nil, "Basic dXNlcjpwYTU1"])
  }

  /// The challenge block is asked and never answers: the request's timeout still ends the fetch on
  /// the engine's pending challenge, and nothing more is sent (the decision itself is
  /// `ScriptedTimeoutTests.aChallengeBlockThatNeverAnswersStillTimesOut`). The timeout must outlast
  /// the way to the block (a loopback request and the server's 401, milliseconds on an idle
  /// machine, hence 1 s): where a stalled machine lets it run out first, the run is made again with
  /// a longer one, so the block is always reached in the run that is checked.
  @Test func aBlockThatNeverReturnsStillTimesOut() async throws {
    for timeout in [1.0, 5, 15, 40] {
      let server = try TestServer()
      defer { server.stop() }
      var request = URLRequest(url: server.url("/basic-auth/user/pa55"))
      request.timeoutInterval = timeout
      let fetcher = SessionFetcher(request: request)
      fetcher.allowLocalhostRequest = true
      fetcher.callbackQueue = makeCallbackQueue()
      let asked = Recorder<Bool>()
      let release = AsyncLatch()
      fetcher.challengeBlock = { _, _ in
        asked.append(true)
        await release.wait()
        return (.useCredential, Self.credential())
      }
      let result = await fetcher.fetchResult(timeout: 120)
      release.signal()
      #expect((result.error as? URLError)?.code == .timedOut, "\(String(describing: result.error))")
      guard asked.count == 1 else { continue }
      #expect(server.requestCount(path: "/basic-auth/user/pa55") == 1)
      return
    }
    Issue.record("the challenge block was never reached, even with a 40 s timeout")
  }

  // MARK: - Digest

  @Test(arguments: ["MD5", "SHA-256", "MD5-sess", "SHA-256-sess"])
  func digestIsAnsweredFromTheCredential(_ algorithm: String) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let path = "/digest-auth/auth/user/pa55/\(algorithm)"
    let fetcher = server.fetcher(path)
    fetcher.credential = Self.credential()
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data == Data(#"{"authenticated":true,"user":"user","nc":"00000001"}"#.utf8))
    #expect(server.requestCount(path: path) == 2)
  }

  @Test func digestWithoutQualityOfProtection() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/digest-auth/none/user/pa55/MD5")
    fetcher.credential = Self.credential()
    #expect(await fetcher.fetchResult().error == nil)
  }

  @Test func digestOfAPostWithAQueryAndABody() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/digest-auth/auth/user/pa55/SHA-256?a=1&b=%2F")
    fetcher.bodyData = Data("payload".utf8)
    fetcher.credential = Self.credential()
    #expect(await fetcher.fetchResult().error == nil)
    #expect(server.requests.map(\.bodyText) == ["payload", "payload"])
    #expect(server.requests.last?.method == "POST")
  }
}

/// A one-shot signal for `async` callbacks: ``wait()`` suspends (never blocks a thread) until
/// ``signal()``.
///
/// `@unchecked Sendable`: its state is only touched under its lock.
final class AsyncLatch: @unchecked Sendable {
  private let lock = NSLock()
  private var isOpen = false
  private var waiters: [CheckedContinuation<Void, Never>] = []

  func wait() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let open = lock.withLock { () -> Bool in
        if isOpen { return true }
        waiters.append(continuation)
        return false
      }
      if open { continuation.resume() }
    }
  }

  func signal() {
    let waiting = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
      isOpen = true
      defer { waiters = [] }
      return waiters
    }
    for waiter in waiting { waiter.resume() }
  }
}
