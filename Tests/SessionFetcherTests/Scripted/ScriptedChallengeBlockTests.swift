import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// How a fetch answers a server's challenge, with and without a `challengeBlock`, on the scripted
/// engine: what the block is shown, which `Authorization` each request carries, when the fetch
/// gives up. That a real server accepts the answers (Basic, and Digest with each algorithm) is in
/// `ChallengeBlockTests`, on each engine.
@Suite("Authentication challenges (scripted)")
struct ScriptedChallengeBlockTests {
  static let body = Data("welcome".utf8)

  static func credential(_ password: String) -> URLCredential {
    URLCredential(user: "user", password: password, persistence: .none)
  }

  /// The Basic answer for `user` with `password`.
  static func basic(_ password: String) -> String {
    "Basic " + Data("user:\(password)".utf8).base64EncodedString()
  }

  /// A Digest challenge of realm `test` with `nonce`.
  static func digest(nonce: String = "n1", extra: String = "") -> ScriptedExchange {
    .challenge(#"Digest realm="test", nonce="\#(nonce)", qop="auth", algorithm=MD5, opaque="o""# + extra)
  }

  /// What a challenge block was shown.
  struct Seen: Sendable, Equatable {
    var realm: String?
    var method: String
    var previousFailureCount: Int
    var failureStatus: Int?
  }

  /// A block that records each challenge and answers with `answer(previousFailureCount)`.
  static func recordingBlock(
    _ seen: Recorder<Seen>,
    answer: @escaping @Sendable (Int) -> (URLSession.AuthChallengeDisposition, URLCredential?)
  ) -> SessionFetcher.ChallengeBlock {
    { _, challenge in
      let space = challenge.protectionSpace
      seen.append(
        Seen(
          realm: space.realm, method: space.authenticationMethod,
          previousFailureCount: challenge.previousFailureCount,
          failureStatus: (challenge.failureResponse as? HTTPURLResponse)?.statusCode))
      return answer(challenge.previousFailureCount)
    }
  }

  /// How the block answers a challenge.
  enum Answer: Sendable {
    case password(String)
    /// `wrong` on the first challenge, `pa55` after.
    case wrongThenRight
    case disposition(URLSession.AuthChallengeDisposition)

    func callAsFunction(_ failures: Int) -> (URLSession.AuthChallengeDisposition, URLCredential?) {
      switch self {
      case .password(let password): return (.useCredential, credential(password))
      case .wrongThenRight: return (.useCredential, credential(failures == 0 ? "wrong" : "pa55"))
      case .disposition(let disposition): return (disposition, credential("pa55"))
      }
    }
  }

  /// One row: the fetcher's credential, how its block answers, the server's answers, and what the
  /// fetcher sends and decides.
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var credential: String? = nil
    var answer: Answer
    /// The answers to the fetcher's requests, in order (the last answers every later one).
    var answers: [ScriptedExchange]
    /// The `Authorization` of each request sent.
    var sent: [String?]
    /// The `previousFailureCount` of each challenge the block was shown.
    var failureCounts: [Int]
    /// A 401, else the body.
    var endsWith401 = false

    var testDescription: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "the block's credential takes precedence over the fetcher's", credential: "wrong",
      answer: .password("pa55"), answers: [.challenge(), .response(body: body)], sent: [nil, basic("pa55")],
      failureCounts: [0]),
    Row(
      name: "default handling answers with the fetcher's credential", credential: "pa55",
      answer: .disposition(.performDefaultHandling), answers: [.challenge(), .response(body: body)],
      sent: [nil, basic("pa55")], failureCounts: [0]),
    Row(
      name: "cancelling completes at once with the 401", credential: "pa55",
      answer: .disposition(.cancelAuthenticationChallenge), answers: [.challenge(), .response(body: body)],
      sent: [nil], failureCounts: [0], endsWith401: true),
    Row(
      name: "rejecting the protection space completes at once with the 401", credential: "pa55",
      answer: .disposition(.rejectProtectionSpace), answers: [.challenge(), .response(body: body)],
      sent: [nil], failureCounts: [0], endsWith401: true),
    Row(
      name: "default handling without a credential completes at once with the 401",
      answer: .disposition(.performDefaultHandling), answers: [.challenge(), .response(body: body)],
      sent: [nil], failureCounts: [0], endsWith401: true),
    Row(
      name: "a rejected credential is shown again with its failure count", answer: .wrongThenRight,
      answers: [.challenge(), .challenge(), .response(body: body)],
      sent: [nil, basic("wrong"), basic("pa55")],
      failureCounts: [0, 1]),
    Row(
      name: "a block that always answers wrong ends with the 401 after four answers, not a loop",
      answer: .password("wrong"), answers: [.challenge()],
      sent: [nil] + Array(repeating: basic("wrong"), count: 4),
      failureCounts: [0, 1, 2, 3, 4], endsWith401: true),
  ]

  @Test(arguments: rows)
  func theBlockDecidesEachChallenge(_ row: Row) async {
    let engine = ScriptedEngine()
    for answer in row.answers { engine.respond(to: "/private", with: answer) }
    let fetcher = engine.fetcher("/private")
    if let password = row.credential { fetcher.credential = Self.credential(password) }
    let seen = Recorder<Seen>()
    let answer = row.answer
    fetcher.challengeBlock = Self.recordingBlock(seen) { answer($0) }
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    if row.endsWith401 {
      #expect(result.fetcherError?.statusCode == 401, "\(String(describing: result.error))")
    } else {
      #expect(result.data == Self.body, "\(String(describing: result.error))")
    }
    #expect(engine.requests.map { $0.header("Authorization") } == row.sent)
    #expect(seen.values.map(\.previousFailureCount) == row.failureCounts)
    #expect(seen.values.allSatisfy { $0.realm == "scripted" && $0.failureStatus == 401 })
    #expect(seen.values.allSatisfy { $0.method == NSURLAuthenticationMethodHTTPBasic })
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
  }

  @Test func stoppingWhileTheBlockDecidesSendsNothingMore() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/private", with: .challenge(), .response(body: Self.body))
    let watched = WeakReference<SessionFetcher>()
    let entered = AsyncLatch()
    let release = AsyncLatch()
    let answered = Recorder<Bool>()
    let counter = NotificationRecorder()
    let completions = Recorder<Bool>()
    let callbackQueue: DispatchQueue
    do {
      let fetcher = engine.fetcher("/private")
      watched.object = fetcher
      callbackQueue = fetcher.callbackQueue
      counter.watch(fetcher)
      fetcher.challengeBlock = { _, _ in
        entered.signal()
        await release.wait()
        answered.append(true)
        return (.useCredential, Self.credential("pa55"))
      }
      fetcher.beginFetch { _, _ in completions.append(true) }
      await entered.wait()
      fetcher.stopFetching()
    }
    release.signal()
    #expect(await eventually { counter.stopped == 1 && answered.count == 1 })
    // The task that took the answer holds the fetcher until it has done what the answer starts (a
    // request, or nothing): the fetcher freed is that task ended.
    #expect(await eventually { watched.object == nil }, "the fetcher is still held")
    await engine.drainEvents()
    await drain(callbackQueue)
    #expect(completions.count == 0)
    #expect(engine.requests.count == 1)
    #expect(counter.started == 1 && counter.stopped == 1)
  }

  // MARK: - Digest

  @Test func theBlockSeesADigestChallengeAndItsAnswerIsDigest() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/private", with: Self.digest(), .response(body: Self.body))
    let fetcher = engine.fetcher("/private")
    let seen = Recorder<Seen>()
    fetcher.challengeBlock = Self.recordingBlock(seen) { _ in (.useCredential, Self.credential("pa55")) }
    #expect(await fetcher.fetchResult().data == Self.body)
    #expect(
      seen.values == [
        Seen(
          realm: "test", method: NSURLAuthenticationMethodHTTPDigest, previousFailureCount: 0,
          failureStatus: 401)
      ])
    let answer = try #require(engine.requests.last?.header("Authorization"))
    #expect(answer.hasPrefix("Digest "))
    for part in [
      #"username="user""#, #"realm="test""#, #"nonce="n1""#, #"uri="/private""#, "nc=00000001",
      #"opaque="o""#,
    ] {
      #expect(answer.contains(part), "\(answer)")
    }
  }

  @Test func aWrongDigestPasswordEndsAs401AfterOneAnswer() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/private", with: Self.digest())
    let fetcher = engine.fetcher("/private")
    fetcher.credential = Self.credential("wrong")
    let counter = NotificationRecorder([fetcher])
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 401)
    #expect(engine.requests.map { $0.header("Authorization") != nil } == [false, true])
    #expect(await eventually { counter.completionInvoked == 1 })
    #expect(counter.started == 1 && counter.stopped == 1)
  }

  @Test(arguments: [
    #"Digest realm="test", nonce="n", algorithm=SHA-512"#,
    #"Digest realm="test""#,
    #"Digest realm="t, nonce="#,
    #"Digest realm="t", nonce="n", qop="auth-int""#,
    "Digest ===,,",
  ])
  func anUnanswerableDigestChallengeIsA401(_ challenge: String) async {
    let engine = ScriptedEngine()
    engine.respond(to: "/private", with: .challenge(challenge), .response(body: Self.body))
    let fetcher = engine.fetcher("/private")
    fetcher.credential = Self.credential("pa55")
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 401)
    #expect(engine.requests.count == 1)
  }

  @Test func aStaleNonceIsAnsweredAgainWithTheNewNonce() async {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/private", with: Self.digest(nonce: "old"), Self.digest(nonce: "fresh", extra: ", stale=true"),
      .response(body: Self.body))
    let fetcher = engine.fetcher("/private")
    fetcher.credential = Self.credential("pa55")
    let seen = Recorder<Seen>()
    fetcher.challengeBlock = Self.recordingBlock(seen) { _ in (.performDefaultHandling, nil) }
    #expect(await fetcher.fetchResult().data == Self.body)
    // The credential was right: a stale nonce is no failure, and default handling answers again.
    #expect(seen.values.map(\.previousFailureCount) == [0, 0])
    let nonces = engine.requests.map { $0.header("Authorization").map(Self.nonce) }
    #expect(nonces == [nil, "old", "fresh"])
  }

  @Test func theNonceCountGrowsWhenTheSameNonceIsAnsweredAgain() async {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/private", with: Self.digest(nonce: "fixed"), Self.digest(nonce: "fixed"),
      .response(body: Self.body))
    let fetcher = engine.fetcher("/private")
    let answer = Answer.wrongThenRight
    fetcher.challengeBlock = { _, challenge in answer(challenge.previousFailureCount) }
    #expect(await fetcher.fetchResult().data == Self.body)
    let counts = engine.requests.compactMap { $0.header("Authorization") }.map { value in
      value.range(of: "nc=0000000[0-9]", options: .regularExpression).map { String(value[$0]) }
    }
    #expect(counts == ["nc=00000001", "nc=00000002"])
  }

  @Test func aRedirectToAnotherProtectedPathIsANewChallenge() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/first", with: Self.digest(nonce: "a"), .redirect(to: "/second"))
    engine.respond(to: "/second", with: Self.digest(nonce: "b"), .response(body: Self.body))
    let fetcher = engine.fetcher("/first")
    fetcher.credential = Self.credential("pa55")
    let seen = Recorder<Seen>()
    fetcher.challengeBlock = Self.recordingBlock(seen) { _ in (.performDefaultHandling, nil) }
    #expect(await fetcher.fetchResult().data == Self.body)
    #expect(seen.values.map(\.previousFailureCount) == [0, 0])
    #expect(engine.requests.map(\.path) == ["/first", "/first", "/second", "/second"])
    let requests = engine.requests
    try #require(requests.count == 4)
    #expect(requests[0].header("Authorization") == nil)
    #expect(requests[1].header("Authorization").flatMap(Self.nonce) == "a")
    // The answer to /first names /first (RFC 7616 §3.4: a server answers another URI with 400):
    // it does not go with the redirect.
    #expect(requests[2].header("Authorization") == nil)
    // The redirect's own challenge is answered with its own nonce, for its own URI.
    #expect(requests[3].header("Authorization").flatMap(Self.nonce) == "b")
    #expect(requests[3].header("Authorization")?.contains(#"uri="/second""#) == true)
  }

  /// A Digest answer is for its request alone, but a Basic answer holds for the whole protection
  /// space: it still goes with a same-origin redirect, as the caller's own `Authorization` does
  /// (`ScriptedRedirectTests`).
  @Test func aSameOriginRedirectKeepsABasicAnswer() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/basic", with: .challenge(), .redirect(to: "/basic-next"))
    engine.respond(to: "/basic-next", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/basic")
    fetcher.credential = Self.credential("pa55")
    #expect(await fetcher.fetchResult().data == Self.body)
    let sent = engine.requests.map { $0.header("Authorization") }
    #expect(sent == [nil, Self.basic("pa55"), Self.basic("pa55")])
  }

  @Test(arguments: [true, false])
  func theCredentialIsNotGivenToAnotherOrigin(digest: Bool) async {
    let engine = ScriptedEngine()
    let other = "https://other.test/private"
    engine.respond(to: "/start", with: .redirect(to: other))
    engine.respond(to: other, with: digest ? Self.digest() : .challenge(), .response(body: Self.body))
    let fetcher = engine.fetcher("/start")
    fetcher.credential = Self.credential("pa55")
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 401)
    #expect(engine.requests.map(\.url.absoluteString) == [ScriptedEngine.origin + "/start", other])
    #expect(engine.requests.allSatisfy { $0.header("Authorization") == nil })
  }

  /// The `nonce` of a Digest answer.
  static func nonce(_ authorization: String) -> String? {
    // Not the `cnonce`.
    guard let range = authorization.range(of: #"[ ,]nonce=""#, options: .regularExpression) else {
      return nil
    }
    return String(authorization[range.upperBound...].prefix { $0 != "\"" })
  }
}
