import Foundation

/// The URLSession callbacks of the current task, and the stubbed equivalent for test blocks.
extension SessionFetcher: SessionTaskHandler {
  /// The engine started the exchange only now (its task waited in the engine's queue): the idle
  /// timeout counts from here.
  package func taskDidStart(_ task: any EngineTask) {
    storage.withLock { storage in
      guard accepts(task, storage) else { return }
      let now = storage.clock.now
      storage.lifecycle.current.lastActivity = now
      storage.run.timing.requestStartDate = now
    }
  }

  /// Whether an event of `task` (nil: a test block's answer) belongs to the current attempt. Checked
  /// under the same lock as the event's effect: a task that a timeout or a pause has let go of may
  /// still be reporting, and none of its bytes may reach the next attempt's part file.
  func accepts(_ task: (any EngineTask)?, _ storage: FetcherStorage) -> Bool {
    storage.lifecycle.accepts(task)
  }

  package func task(_ task: any EngineTask, didReceiveHead head: ResponseHead) {
    receive(head: head, from: task)
  }

  package func task(_ task: any EngineTask, didReceive data: Data) {
    receive(data: data, from: task)
  }

  package func task(
    _ task: any EngineTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
    totalBytesExpectedToSend: Int64
  ) {
    let progress = storage.withLock { storage in
      storage.bodyBytesSent(bytesSent, total: totalBytesSent, expected: totalBytesExpectedToSend, from: task)
    }
    guard let progress else { return }
    let expected = progress.expected
    if let block = progress.block {
      deliver(on: progress.queue) { block(bytesSent, totalBytesSent, expected) }
    }
    for monitor in allMonitors() {
      monitor.fetcher(
        self, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent, totalBytesExpectedToSend: expected)
    }
  }

  package func task(_ task: any EngineTask, willRedirect response: HTTPURLResponse, to request: URLRequest)
    -> URLRequest?
  {
    // Every redirect is refused here and re-issued by the fetcher once the 3xx completes: one path
    // applies the method/body rules (307/308 lose the body on Linux), credential stripping, cookies,
    // the https → http rule, the redirect limit and `willRedirectBlock`.
    // The target is the response's own Location: FoundationNetworking's request for a `data:` or
    // `file:` Location keeps the scheme, host and port of the response and takes only the path
    // (`file:///etc/x` from http://h:1 becomes http://h:1/etc/x), a request nobody meant.
    storage.withLock { storage in
      guard accepts(task, storage) else { return }
      storage.lifecycle.current.redirectTarget = RedirectPolicy.location(of: response) ?? request.url
    }
    return nil
  }

  package func task(_ task: any EngineTask, didReceive challenge: URLAuthenticationChallenge)
    -> (URLSession.AuthChallengeDisposition, URLCredential?)
  {
    if SessionFetcher.isTransportSecurityChallenge(challenge) {
      return (.performDefaultHandling, nil)
    }
    return storage.withLock { storage in
      guard accepts(task, storage) else { return (.cancelAuthenticationChallenge, nil) }
      let space = challenge.protectionSpace
      // A server's challenge is the fetcher's to answer, the same on every engine (the engines
      // answer Basic only, FoundationNetworking only some of them): the 401 ends the hop, and
      // `answerChallenge` sends it again with the answer (see `SessionFetcher+Challenges.swift`).
      if !space.isProxy() {
        storage.lifecycle.current.challengeCancelled = true
        return (.cancelAuthenticationChallenge, nil)
      }
      if let credential = storage.config.proxyCredential, challenge.previousFailureCount == 0 {
        return (.useCredential, credential)
      }
      // No usable credential: cancel, and report the 407 as a status (default handling would
      // hang forever on Swift 6.3.1, corelibs #5456).
      storage.lifecycle.current.challengeCancelled = true
      return (.cancelAuthenticationChallenge, nil)
    }
  }

  package func taskNeedsNewBodyStream(_ task: any EngineTask) -> InputStream? {
    let provider: BodyStreamProvider? = storage.withLock { storage in
      guard accepts(task, storage), case .stream(let provider)? = storage.plan?.body else { return nil }
      return provider
    }
    guard let stream = try? provider?() else { return nil }
    return observedBodyStream(stream)
  }

  package func task(_ task: any EngineTask, didCompleteWithError error: Error?) {
    let current = storage.withLock { storage -> Bool in
      guard storage.lifecycle.taskCompleted(task) else { return false }
      if let metrics = task.transferMetrics { storage.lifecycle.current.transferMetrics = metrics }
      if storage.lifecycle.current.responseHead == nil, let response = task.response {
        // A challenge cancelled before the response head was handed over.
        storage.lifecycle.current.response = response
      }
      return true
    }
    guard current else { return }
    completeHop(error: error)
  }

  // MARK: - Stubbed responses

  /// Runs a test block's answer through the same path as a network response.
  func simulate(response: HTTPURLResponse?, data: Data?, error: (any Error)?) {
    guard storage.withLock({ $0.lifecycle.phase == .running }) else { return }
    if let response {
      receive(head: ResponseHead(response), from: nil)
    }
    if let data, !data.isEmpty {
      let count = storage.withLock { $0.config.testBlockAccumulateDataChunkCount }
      for piece in TestBlockChunks.split(data, into: count) {
        receive(data: piece, from: nil)
      }
    }
    completeHop(error: error)
  }
}

/// Body bytes the exchange in flight sent, and the `sendProgressBlock` call for them, decided under
/// the fetcher's lock by `FetcherStorage.bodyBytesSent(_:total:expected:from:)`.
struct SendProgressAction {
  /// The fetch's callback queue.
  var queue: DispatchQueue
  /// The fetch's `sendProgressBlock`, if it has one.
  var block: (@Sendable (Int64, Int64, Int64) -> Void)?
  /// The body's length as the block is told it (-1: unknown).
  var expected: Int64
}

extension FetcherStorage {
  /// `task` sent `count` more bytes of the request body, `total` in all, of `expected` (as the
  /// engine knows it: 0 or less when it does not): counts them, publishes the progress, and says
  /// which block to tell, if any; nil when `task` is not the exchange in flight.
  mutating func bodyBytesSent(_ count: Int64, total: Int64, expected: Int64, from task: any EngineTask)
    -> SendProgressAction?
  {
    guard lifecycle.accepts(task), let plan else { return nil }
    let exchange = lifecycle.current
    exchange.lastActivity = plan.clock.now
    run.timing.bytesSent += count
    exchange.measure.bytesSent += count
    // A stream body reports 0 expected bytes on Linux: use the declared length, else unknown.
    let expected = expected > 0 ? expected : (plan.bodyLength ?? -1)
    let progress = TransferProgress(
      direction: .upload, completedBytes: total, expectedBytes: expected >= 0 ? expected : nil)
    progress.publish(to: config.progressContinuations)
    return SendProgressAction(
      queue: plan.callbackQueue, block: config.sendProgressBlock, expected: expected)
  }
}

extension SessionFetcher {
  /// Whether a server challenge comes from `url`'s origin (scheme, host and port, default ports
  /// filled in), so that ``credential`` is never given to another origin after a redirect.
  static func protectionSpace(_ space: URLProtectionSpace, isOriginOf url: URL) -> Bool {
    guard let host = url.host?.lowercased(), let scheme = url.scheme?.lowercased() else { return false }
    let defaultPort = scheme == "https" ? 443 : (scheme == "http" ? 80 : 0)
    let port = url.port ?? defaultPort
    let spacePort = space.port > 0 ? space.port : defaultPort
    let spaceHost = space.host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
    // Some platforms name the protocol with NSURLProtectionSpaceHTTP(S) constants; compare plain names only.
    if let spaceScheme = space.protocol?.lowercased(), spaceScheme == "http" || spaceScheme == "https",
      spaceScheme != scheme
    {
      return false
    }
    return spaceHost == host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")) && spacePort == port
  }

  /// Server-trust and client-certificate challenges belong to TLS, not to HTTP authentication
  /// (Apple platforms only; FoundationNetworking never sends them).
  static func isTransportSecurityChallenge(_ challenge: URLAuthenticationChallenge) -> Bool {
    #if canImport(FoundationNetworking)
      return false
    #else
      let method = challenge.protectionSpace.authenticationMethod
      return method == NSURLAuthenticationMethodServerTrust
        || method == NSURLAuthenticationMethodClientCertificate
    #endif
  }
}
