import Foundation

/// Decides how a fetch answers a server's authentication challenge (a 401 with `WWW-Authenticate`).
///
/// Called with the challenge (its protection space's realm, host, port and `authenticationMethod`
/// — `NSURLAuthenticationMethodHTTPBasic`, `NSURLAuthenticationMethodHTTPDigest`, or
/// `NSURLAuthenticationMethodDefault` for another scheme —, the `previousFailureCount` and the
/// `failureResponse`); returns the disposition and, for `.useCredential`, the credential:
///
/// - `.useCredential`: the request is sent again with the credential (Basic or Digest, computed
///   by the fetcher). A challenge the credential cannot answer (a Bearer challenge, a Digest
///   challenge with an unknown algorithm) completes with ``SessionFetcherError/status(code:data:)``
///   401.
/// - `.performDefaultHandling`: as without the block: ``SessionFetcher/credential``, once, for the
///   request's own origin.
/// - `.cancelAuthenticationChallenge`, `.rejectProtectionSpace`: the fetch completes at once with
///   ``SessionFetcherError/status(code:data:)`` 401.
///
/// The name of the original library's `challengeBlock` type, as a Swift `async` function.
public typealias ChallengeBlock =
  @Sendable (SessionFetcher, URLAuthenticationChallenge) async
  -> (URLSession.AuthChallengeDisposition, URLCredential?)

/// The server challenges of one attempt.
struct ChallengeState {
  /// Requests of the attempt sent again with an `Authorization` answer.
  var resends = 0
  /// Challenges that came after an answer (a rejected credential): a challenge's
  /// `previousFailureCount`. A Digest `stale=true` does not count: the credential was right.
  var failures = 0
  /// Requests made with each Digest nonce (its `nc`).
  var nonceCounts: [String: Int] = [:]
  /// The hop that carried the last answer: a challenge of another hop (a redirect's) is a new
  /// one, not a failure.
  var answeredHop: UInt64?
  /// The hop whose challenge waits for the ``ChallengeBlock``.
  var waitingHop: UInt64?

  /// The most resends of one attempt: a block that answers every challenge with a credential the
  /// server keeps refusing ends with the 401, never a loop.
  static let maximumResends = 4
}

extension SessionFetcher {
  /// The same type as the module's ``ChallengeBlock``.
  public typealias ChallengeBlock =
    @Sendable (SessionFetcher, URLAuthenticationChallenge) async
    -> (URLSession.AuthChallengeDisposition, URLCredential?)

  /// Decides how every server authentication challenge of the fetch is answered, on every engine;
  /// see ``ChallengeBlock``. It takes precedence over ``credential`` (which it can ask for with
  /// `.performDefaultHandling`). Called once per challenge, off the callback queue; the fetch's
  /// timeouts keep running while it decides, and a fetch stopped meanwhile ignores its answer.
  /// In a service, `FetcherService.challengeBlock` sets it on every fetcher.
  ///
  /// ```swift
  /// fetcher.challengeBlock = { _, challenge in
  ///   guard challenge.previousFailureCount == 0,
  ///     challenge.protectionSpace.realm == "reports" else { return (.cancelAuthenticationChallenge, nil) }
  ///   return (.useCredential, URLCredential(user: "ann", password: secret, persistence: .none))
  /// }
  /// ```
  public var challengeBlock: ChallengeBlock? {
    get { self[config: \.challengeBlock] }
    set { self[config: \.challengeBlock] = newValue }
  }

  /// Answers the 401 `response` of the current hop: asks the ``challengeBlock`` or applies
  /// ``credential``, then sends the hop again with an `Authorization` answer, or fails the attempt
  /// with the 401.
  func answerChallenge(_ challenge: ServerChallenge, response: HTTPURLResponse, body: Data) {
    let context:
      (
        block: ChallengeBlock?, credential: URLCredential?, failures: Int, url: URL, hop: UInt64,
        queue: DispatchQueue
      )? = storage.withLock { storage in
        guard storage.lifecycle.phase == .running, let plan = storage.plan,
          let url = storage.lifecycle.current.request?.url
        else { return nil }
        let attempt = storage.lifecycle.attempt
        if attempt.challenges.answeredHop != storage.run.hopCount {
          attempt.challenges.failures = 0
        } else if case .digest(let digest) = challenge.kind, digest.isStale {
          // The nonce expired, not the credential.
        } else {
          attempt.challenges.failures += 1
        }
        var credential = storage.config.credential
        if let origin = plan.baseRequest.url,
          !Self.protectionSpace(challenge.protectionSpace(url: url), isOriginOf: origin)
        {
          // A redirect led to another origin: the credential is for the request's own origin.
          credential = nil
        }
        let block = storage.config.challengeBlock
        if block != nil {
          // The fetch's timeouts cover the block's decision (see `checkTimeout`).
          attempt.challenges.waitingHop = storage.run.hopCount
          storage.lifecycle.current.pendingHop = storage.run.hopCount
          let idleLeft =
            plan.idleTimeout - plan.clock.now.timeIntervalSince(storage.lifecycle.current.lastActivity)
          armTimeout(&storage, after: max(0, idleLeft))
        }
        return (block, credential, attempt.challenges.failures, url, storage.run.hopCount, plan.callbackQueue)
      }
    guard let context else { return }
    let refusal = AttemptFailure(
      error: SessionFetcherError.status(code: 401, data: body.isEmpty ? nil : body), response: response,
      data: body.isEmpty ? nil : body)
    let decide: @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void = {
      disposition, given in
      let chosen: URLCredential?
      switch disposition {
      case .useCredential: chosen = given
      case .performDefaultHandling: chosen = context.failures == 0 ? context.credential : nil
      default: chosen = nil
      }
      self.resend(answering: challenge, with: chosen, refusal: refusal)
    }
    guard let block = context.block else {
      decide(.performDefaultHandling, nil)
      return
    }
    let urlChallenge = challenge.urlChallenge(
      url: context.url, previousFailureCount: context.failures, response: response)
    Task {
      LockAudit.userBlock("challengeBlock")
      let (disposition, credential) = await block(self, urlChallenge)
      // Only if the wait is still this hop's: a timeout or a stop has ended it otherwise.
      let current = self.storage.withLock { storage -> Bool in
        guard storage.lifecycle.phase == .running,
          storage.lifecycle.attempt.challenges.waitingHop == context.hop,
          storage.lifecycle.current.pendingHop == context.hop
        else { return false }
        storage.lifecycle.attempt.challenges.waitingHop = nil
        storage.lifecycle.current.pendingHop = nil
        Self.disarmTimeout(&storage)
        return true
      }
      guard current else { return }
      decide(disposition, credential)
    }
  }

  /// Sends the current hop again with `credential`'s answer to `challenge`, or fails the attempt
  /// with `refusal` when there is no credential or it cannot answer.
  private func resend(
    answering challenge: ServerChallenge, with credential: URLCredential?, refusal: AttemptFailure
  ) {
    let next: (URLRequest, BodySource, answer: String?)?? = storage.withLock { storage in
      guard storage.lifecycle.phase == .running, let plan = storage.plan,
        var hop = storage.lifecycle.current.hopRequest
      else {
        return .some(nil)
      }
      let attempt = storage.lifecycle.attempt
      guard let credential, let user = credential.user,
        attempt.challenges.resends < ChallengeState.maximumResends
      else { return nil }
      var nonceCount = 1
      if case .digest(let digest) = challenge.kind {
        nonceCount = attempt.challenges.nonceCounts[digest.nonce, default: 0] + 1
      }
      guard
        let value = challenge.authorization(
          user: user, password: credential.password ?? "", request: hop, nonceCount: nonceCount,
          clientNonce: DigestChallenge.makeClientNonce())
      else { return nil }
      attempt.challenges.resends += 1
      // `sendHop` numbers the resend next.
      attempt.challenges.answeredHop = storage.run.hopCount + 1
      let body = storage.lifecycle.current.keepsBody ? plan.body : .none
      if case .digest(let digest) = challenge.kind {
        attempt.challenges.nonceCounts[digest.nonce] = nonceCount
        // Bound to this request's URI and nonce count (RFC 7616 §3.4): for this request alone. A
        // redirect (or a continuation) from it is challenged afresh and answered for itself, where
        // carried on it would name the wrong URI (a server answers 400) or repeat a count.
        return .some((hop, body, answer: value))
      }
      // Basic holds for the whole protection space: a same-origin redirect carries it, as it
      // carries the caller's own `Authorization`.
      hop.setValue(value, forHTTPHeaderField: "Authorization")
      return .some((hop, body, answer: nil))
    }
    switch next {
    case nil:
      askAboutRefusal(refusal)
    case .some(nil):
      return
    case .some(.some(let (hop, body, answer))):
      sendHop(hop, body: body, answer: answer)
    }
  }
}
