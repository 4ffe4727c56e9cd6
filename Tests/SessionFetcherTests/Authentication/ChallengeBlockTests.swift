import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// `challengeBlock` and Digest authentication against the test server, on the engine the run
/// selects (`SESSIONFETCHER_ENGINE`).
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

  @Test func theBlockTakesPrecedenceOverTheCredential() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/basic-auth/user/pa55")
    fetcher.credential = Self.credential("wrong")
    fetcher.challengeBlock = { _, _ in (.useCredential, Self.credential()) }
    #expect(await fetcher.fetchResult().error == nil)
  }

  @Test func defaultHandlingUsesTheCredential() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/basic-auth/user/pa55")
    fetcher.credential = Self.credential()
    let seen = Recorder<Seen>()
    fetcher.challengeBlock = Self.recordingBlock(seen) { _ in (.performDefaultHandling, nil) }
    #expect(await fetcher.fetchResult().error == nil)
    #expect(seen.count == 1)
  }

  @Test(arguments: [
    URLSession.AuthChallengeDisposition.cancelAuthenticationChallenge, .rejectProtectionSpace,
    .performDefaultHandling,
  ])
  func refusingCompletesAtOnceWith401(_ disposition: URLSession.AuthChallengeDisposition) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/basic-auth/user/pa55")
    let counter = NotificationRecorder([fetcher])
    fetcher.challengeBlock = { _, _ in (disposition, Self.credential()) }
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError?.statusCode == 401)
    #expect(server.requestCount(path: "/basic-auth/user/pa55") == 1)
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
  }

  @Test func aRejectedCredentialIsShownAgainWithItsFailureCount() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/basic-auth/user/pa55")
    let seen = Recorder<Seen>()
    fetcher.challengeBlock = Self.recordingBlock(seen) { failures in
      (.useCredential, Self.credential(failures == 0 ? "wrong" : "pa55"))
    }
    #expect(await fetcher.fetchResult().error == nil)
    #expect(seen.values.map(\.previousFailureCount) == [0, 1])
  }

  @Test func aBlockThatAlwaysAnswersWrongEndsAs401NotALoop() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/basic-auth/user/pa55")
    fetcher.challengeBlock = { _, _ in (.useCredential, Self.credential("wrong")) }
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 401)
    #expect((2...5).contains(server.requestCount(path: "/basic-auth/user/pa55")))
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

  @Test func stoppingWhileTheBlockDecidesSendsNothingMore() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/basic-auth/user/pa55")
    let entered = AsyncLatch()
    let release = AsyncLatch()
    let counter = NotificationRecorder([fetcher])
    fetcher.challengeBlock = { _, _ in
      entered.signal()
      await release.wait()
      return (.useCredential, Self.credential())
    }
    let completions = Recorder<Bool>()
    fetcher.beginFetch { _, _ in completions.append(true) }
    await entered.wait()
    fetcher.stopFetching()
    release.signal()
    #expect(await eventually { counter.stopped == 1 })
    try await Task.sleep(nanoseconds: 300_000_000)
    #expect(completions.count == 0)
    #expect(server.requestCount(path: "/basic-auth/user/pa55") == 1)
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

  @Test func theBlockSeesADigestChallenge() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/digest-auth/auth/user/pa55/SHA-256")
    let seen = Recorder<Seen>()
    fetcher.challengeBlock = Self.recordingBlock(seen) { _ in (.useCredential, Self.credential()) }
    #expect(await fetcher.fetchResult().error == nil)
    #expect(seen.values.map(\.method) == [NSURLAuthenticationMethodHTTPDigest])
    #expect(seen.values.first?.realm == "test")
  }

  @Test func aWrongDigestPasswordEndsAs401AfterOneAnswer() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let path = "/digest-auth/auth/user/pa55/MD5"
    let fetcher = server.fetcher(path)
    fetcher.credential = Self.credential("wrong")
    let counter = NotificationRecorder([fetcher])
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 401)
    #expect(server.requestCount(path: path) == 2)
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
  }

  @Test(arguments: [
    "/digest-auth/auth/user/pa55/SHA-512",
    "/digest-auth/auth/user/pa55/MD5?challenge=Digest%20realm%3D%22test%22",
    "/digest-auth/auth/user/pa55/MD5?challenge=Digest%20realm%3D%22t%2C%20nonce%3D",
    "/digest-auth/auth/user/pa55/MD5?challenge=Digest%20realm%3D%22t%22%2C%20nonce%3D%22n%22%2C%20qop%3D%22auth-int%22",
    "/digest-auth/auth/user/pa55/MD5?challenge=Digest%20%3D%3D%3D%2C%2C",
  ])
  func anUnanswerableDigestChallengeIsA401(_ pathAndQuery: String) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher(pathAndQuery)
    fetcher.credential = Self.credential()
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 401)
    #expect(server.requests.count == 1)
  }

  @Test func aStaleNonceIsAnsweredAgainWithTheNewNonce() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/digest-auth/auth/user/pa55/MD5?stale=1")
    let seen = Recorder<Seen>()
    fetcher.credential = Self.credential()
    fetcher.challengeBlock = Self.recordingBlock(seen) { _ in (.performDefaultHandling, nil) }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    // The credential was right: a stale nonce is no failure.
    #expect(seen.values.map(\.previousFailureCount) == [0, 0])
    let nonces = server.requests.compactMap { $0.header("Authorization") }.map {
      $0.contains("nonce=\"fresh-")
    }
    #expect(nonces == [false, true])
  }

  @Test func theNonceCountGrowsWhenTheSameNonceIsAnsweredAgain() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // The server offers this one nonce every time, and refuses the first answer's password.
    let challenge = #"Digest realm="test", nonce="fixed", opaque="0paque", qop="auth""#
    let query = challenge.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    let fetcher = server.fetcher("/digest-auth/auth/user/pa55/MD5?challenge=\(query)")
    fetcher.challengeBlock = { _, challenge in
      (.useCredential, Self.credential(challenge.previousFailureCount == 0 ? "wrong" : "pa55"))
    }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    let counts = server.requests.compactMap { $0.header("Authorization") }.map { value in
      value.range(of: "nc=0000000[0-9]", options: .regularExpression).map { String(value[$0]) }
    }
    #expect(counts == ["nc=00000001", "nc=00000002"])
  }

  @Test func aRedirectToAnotherProtectedPathIsANewChallenge() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher(
      "/digest-auth/auth/user/pa55/MD5?then=%2Fdigest-auth%2Fauth%2Fuser%2Fpa55%2FSHA-256")
    fetcher.credential = Self.credential()
    let seen = Recorder<Seen>()
    fetcher.challengeBlock = Self.recordingBlock(seen) { _ in (.performDefaultHandling, nil) }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(seen.values.map(\.previousFailureCount) == [0, 0])
    #expect(server.requests.count == 4)
  }

  @Test func theDigestCredentialIsNotGivenToAnotherOrigin() async throws {
    let target = try TestServer()
    defer { target.stop() }
    let origin = try TestServer()
    defer { origin.stop() }
    let location = target.url("/digest-auth/auth/user/pa55/MD5").absoluteString
      .replacingOccurrences(of: "127.0.0.1", with: "localhost")
    let fetcher = origin.fetcher(
      "/redirect?to=\(location.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
    fetcher.credential = Self.credential()
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 401)
    #expect(target.requests.allSatisfy { $0.header("Authorization") == nil })
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
