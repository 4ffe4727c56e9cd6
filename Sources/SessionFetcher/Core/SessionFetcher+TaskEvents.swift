import Foundation

/// The URLSession callbacks of the current task, and the stubbed equivalent for test blocks.
extension SessionFetcher: SessionTaskHandler {
  /// The engine started the exchange only now (its task waited in the engine's queue): the idle
  /// timeout counts from here.
  package func taskDidStart(_ task: any EngineTask) {
    storage.withLock { storage in
      guard accepts(task, storage) else { return }
      let now = Date()
      storage.lifecycle.current.lastActivity = now
      storage.timing.requestStartDate = now
    }
  }

  /// Whether an event of `task` (nil: a test block's answer) belongs to the current attempt. Checked
  /// under the same lock as the event's effect: a task that a timeout or a pause has let go of may
  /// still be reporting, and none of its bytes may reach the next attempt's part file.
  private func accepts(_ task: (any EngineTask)?, _ storage: FetcherStorage) -> Bool {
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

  // MARK: - Response and body

  /// The response head of the current task (or a test block's). Reads the head, not its
  /// `URLResponse`, for the fetcher's own decisions: that is made only for those who ask for it (a
  /// stream consumer, a monitor, `didReceiveResponseBlock`, a download's part file, a redirect).
  func receive(head: ResponseHead, from task: (any EngineTask)?) {
    let statusCode = head.statusCode
    // FoundationNetworking hands interim 1xx responses (a fake 100 for streamed uploads) to the
    // delegate; a 101 is looked at below (switching protocols is never asked for).
    if let statusCode, statusCode < 200, statusCode != 101 { return }
    let decision: HeadDecision? = storage.withLock { storage in
      guard accepts(task, storage), let plan = storage.plan else { return nil }
      var decision = HeadDecision()
      let now = Date()
      storage.lifecycle.current.lastActivity = now
      if let statusCode,
        let error = ResponseSanity.error(status: statusCode, request: storage.lifecycle.current.request)
      {
        storage.lifecycle.current.responseHead = head
        decision.next = .fail(fail(&storage, with: error))
        return decision
      }
      if let statusCode, statusCode < 200 { return nil }
      if storage.stream.isContinuation, !StreamWindows.downloadRestarts(head.response, storage: &storage) {
        let response = head.response
        // A paused stream (or the next window of a download) goes on from the head it has.
        storage.stream.isContinuation = false
        storage.lifecycle.current.response = storage.stream.head ?? response
        storage.lifecycle.current.responseBodyLength = storage.stream.deliveredBytes
        storage.lifecycle.current.expectedContentLength = storage.stream.head?.expectedContentLength ?? -1
        storage.lifecycle.current.sink = storage.stream.isDownload ? .file : .stream
        if let error = StreamPausing.continuationError(response, offset: storage.stream.deliveredBytes)
          ?? StreamWindows.continuationError(response, storage: storage)
        {
          decision.next = .fail(fail(&storage, with: error))
        }
        decision.cookies = (plan.cookieStorage, response.url ?? storage.lifecycle.current.request?.url)
        return decision
      }
      // The first Range window of a stream: the fetcher and the consumer see the whole resource.
      var wholeResource: URLResponse?
      let window: StreamWindows.FirstResponse =
        storage.stream.windowLength == nil
        ? .asIs : StreamWindows.firstResponse(head.response, storage: &storage)
      switch window {
      case .asIs:
        break
      case .whole(let head):
        wholeResource = head
      case .refetch:
        let hop = storage.lifecycle.current.hopRequest
        let task = storage.lifecycle.cancelTask(.pausedForBackpressure).task
        if let hop { decision.next = .refetch(task: task, hop: hop) }
        decision.cookies = (plan.cookieStorage, head.url ?? storage.lifecycle.current.request?.url)
        return decision
      }
      let head = wholeResource.map(ResponseHead.init) ?? head
      if storage.timing.firstResponseDate == nil { storage.timing.firstResponseDate = now }
      if storage.lifecycle.current.measure.responseDate == nil {
        storage.lifecycle.current.measure.responseDate = now
      }
      storage.lifecycle.current.responseHead = head
      storage.lifecycle.current.responseData = Data()
      storage.lifecycle.current.responseBodyLength = 0
      // The Content-Length of an encoded body is not the length of the decoded bytes counted here.
      let isEncoded = ContentDecoding.isEncoded(head)
      let expectedContentLength = head.expectedContentLength
      storage.lifecycle.current.expectedContentLength = isEncoded ? -1 : expectedContentLength
      let status = head.statusCode ?? 0
      var sinkError: Error?
      var streamConsumer: (any FetcherStreamConsumer)?
      if storage.lifecycle.current.redirectTarget != nil, RedirectPolicy.isRedirect(status) {
        storage.lifecycle.current.sink = .redirect
      } else if (200..<300).contains(status) || head.statusCode == nil {
        if storage.stream.isStreaming {
          let response = head.response
          storage.lifecycle.current.sink = .stream
          storage.stream.head = response
          streamConsumer = storage.stream.consumer?.consumer
        } else if plan.accumulates {
          storage.lifecycle.current.sink = .accumulate
          if storage.accumulatedSinceResponse, let block = storage.config.accumulateDataBlock {
            decision.restartAccumulation = (plan.callbackQueue, block)
          }
          storage.accumulatedSinceResponse = false
        } else if let destination = plan.destination {
          storage.lifecycle.current.sink = .file
          let choice = DownloadResume.choosePartFile(
            for: head.response, destination: destination, storage: &storage)
          decision.partFile = choice
          if let failure = choice.failure {
            sinkError = SessionFetcherError.downloadFailed(description: String(describing: failure))
          } else if wholeResource != nil {
            // The first of the download's windows: later ones continue from this head.
            storage.stream.head = head.response
            if storage.downloadResume.validator == nil, let validator = storage.stream.validator {
              storage.downloadResume.validator = DownloadValidator(ifRange: validator)
            }
          }
        } else {
          storage.lifecycle.current.sink = .memory
        }
      } else {
        storage.lifecycle.current.sink = .memory
      }
      if let limit = plan.maximumInMemoryBodyLength,
        storage.lifecycle.current.sink == .memory || storage.lifecycle.current.sink == .redirect,
        !isEncoded, expectedContentLength > limit, status != 204, status != 304,
        storage.lifecycle.current.request?.httpMethod?.uppercased() != "HEAD"
      {
        // Refuse before the first byte: the announced body would not fit.
        sinkError = SessionFetcherError.responseTooLarge(limit: limit)
      }
      if let sinkError {
        decision.next = .fail(fail(&storage, with: sinkError))
      } else if let block = storage.config.didReceiveResponseBlock,
        storage.lifecycle.current.sink != .redirect,
        !(status == 401 && plan.testBlock == nil
          && head.httpResponse.flatMap(ServerChallenge.init(response:)) != nil)
      {
        // The final head (a 401 with a challenge waits for `answerChallenge`): its body waits for
        // the block's decision.
        var held = ResponseGate(hop: storage.hopCount)
        held.streamConsumer = streamConsumer
        storage.lifecycle.current.responseGate = held
        decision.next = .askAboutResponse(hop: storage.hopCount, block: block, head: head.response)
      } else if let streamConsumer {
        // The head as the fetch sees it: a stream's first Range window describes the whole resource.
        decision.next = .deliverToStream(streamConsumer, head: head.response)
      }
      decision.cookies = (plan.cookieStorage, head.url ?? storage.lifecycle.current.request?.url)
      return decision
    }
    guard let decision else { return }
    // Most responses set no cookie: the head answers that without making the response.
    if head.statusCode != nil, let cookieStorage = decision.cookies.storage, let url = decision.cookies.url,
      head.value(forHTTPHeaderField: "Set-Cookie") != nil,
      let http = head.httpResponse
    {
      cookieStorage.handleResponse(http, for: url)
    }
    if let (queue, block) = decision.restartAccumulation {
      deliver(on: queue) { block(nil) }
    }
    let monitors = allMonitors()
    if !monitors.isEmpty {
      let response = head.response
      for monitor in monitors { monitor.fetcher(self, didReceiveResponse: response) }
    }
    if let choice = decision.partFile, !preparePartFile(choice, from: task) { return }
    switch decision.next {
    case .nothing:
      break
    case .refetch(let task, let hop):
      // The server's answer to the first Range window cannot be streamed in windows: ask again whole.
      Self.letGo(task)
      sendHop(hop, body: .none)
    case .fail(let failure):
      endAttempt(failure)
    case .askAboutResponse(let hop, let block, let response):
      askAboutResponse(response, hop: hop, block: block)
    case .deliverToStream(let consumer, let response):
      consumer.fetcher(self, didReceiveStreamResponse: response)
    }
  }

  /// What ``receive(head:from:)`` decided under the lock, for after it.
  private struct HeadDecision {
    /// The jar and the URL the head's cookies are for (no jar: none kept).
    var cookies: (storage: SessionCookieStorage?, url: URL?) = (nil, nil)
    /// The accumulate block is told to start over (a new 2xx after bytes it was given).
    var restartAccumulation: (DispatchQueue, @Sendable (Data?) -> Void)?
    /// The part file to create, open or empty (see `PartFileChoice`).
    var partFile: PartFileChoice?
    var next = Next.nothing

    /// The one step that follows.
    enum Next {
      case nothing
      /// The first Range window's answer cannot be streamed in windows: let go of the task and
      /// send the hop again whole.
      case refetch(task: (any EngineTask)?, hop: URLRequest)
      /// The fetcher failed the exchange (see `fail`).
      case fail(FailedAttempt)
      /// The head waits for ``SessionFetcher/didReceiveResponseBlock``.
      case askAboutResponse(hop: UInt64, block: DidReceiveResponseBlock, head: URLResponse)
      /// Hand the head to the stream consumer.
      case deliverToStream(any FetcherStreamConsumer, head: URLResponse)
    }
  }

  func receive(data: Data, from task: (any EngineTask)?, bypassingGate: Bool = false) {
    let delivery = storage.withLock { storage in
      storage.bodyChunkArrived(data, from: task, bypassingGate: bypassingGate, at: Date())
    }
    let handOff: ChunkHandOff
    switch delivery {
    case .drop, .held:
      return
    case .fail(let failure):
      endAttempt(failure)
      return
    case .deliver(let decided):
      handOff = decided
    }
    let count = Int64(data.count)
    switch handOff.target {
    case .none:
      break
    case .file(let partFile):
      if !write(data, to: partFile, from: task) { return }
    case .accumulate(let block):
      deliver(on: handOff.queue) { block(data) }
    case .stream(let consumer):
      if consumer.fetcher(self, didReceiveStreamData: data) { pauseStreamTransfer(for: consumer) }
    }
    if let received = handOff.received {
      let total = handOff.total
      deliver(on: handOff.queue) { received(count, total) }
    }
    if let download = handOff.download {
      let (total, expected) = (handOff.total, handOff.expected)
      deliver(on: handOff.queue) { download(count, total, expected) }
    }
    for monitor in allMonitors() { monitor.fetcher(self, didReceiveData: data) }
  }

  /// Creates or opens the response's part file, or empties it, after the lock that chose it (see
  /// `PartFileChoice`), before any chunk of the response arrives. Returns false when that failed:
  /// the attempt fails, unless a stop or a timeout already let go of the file meanwhile.
  private func preparePartFile(_ choice: PartFileChoice, from task: (any EngineTask)?) -> Bool {
    guard let (partFile, error) = choice.prepare() else { return true }
    let failedToOpen: Bool
    if case .open = choice.preparation { failedToOpen = true } else { failedToOpen = false }
    let failure = failAttempt(with: partFile, from: task, error: error) { storage in
      // A file that could not be opened is as if never chosen (`open()` ended it): a kept file is
      // neither parked again nor deleted. One that could not be emptied stays the attempt's, for
      // the end of the attempt to delete. Either way the head waits for no decision.
      if failedToOpen { storage.partFile = nil }
      storage.lifecycle.current.responseGate = nil
    }
    if let failure { endAttempt(failure) }
    return false
  }

  /// Writes a chunk to the part file, after the lock that accounted for it. Returns false when the
  /// write failed: the attempt fails, unless a stop or a timeout already let go of the file.
  private func write(_ data: Data, to partFile: PartFile, from task: (any EngineTask)?) -> Bool {
    do {
      try partFile.write(data)
      return true
    } catch {
      if let failure = failAttempt(with: partFile, from: task, error: error) { endAttempt(failure) }
      return false
    }
  }

  /// Fails the attempt for a part file whose disk work failed, if it is still the attempt's (a
  /// stop, a timeout or another failure may have let go of it while the work ran).
  private func failAttempt(
    with partFile: PartFile, from task: (any EngineTask)?, error: any Error,
    letGo: (inout FetcherStorage) -> Void = { _ in }
  ) -> FailedAttempt? {
    storage.withLock { storage in
      guard accepts(task, storage), storage.partFile === partFile else { return nil }
      if case .failed? = storage.lifecycle.current.cancelReason { return nil }
      letGo(&storage)
      return fail(&storage, with: SessionFetcherError.downloadFailed(description: String(describing: error)))
    }
  }

  /// Fails the attempt because the fetcher cannot go on with it (a download that cannot be written,
  /// a body past the in-memory limit, a continuation that does not continue), under the lock that
  /// decided it: the failure is recorded and the task let go of there, so that neither a timeout
  /// nor a later event of the task can take its place. ``endAttempt(_:)`` follows, after the lock.
  private func fail(_ storage: inout FetcherStorage, with error: any Error) -> FailedAttempt {
    storage.failExchange(with: error)
  }

  /// Ends an attempt ``fail(_:with:)`` failed: at once, as a timeout does. A test block's answer
  /// (no task) ends by itself, in `simulate`.
  private func endAttempt(_ failure: FailedAttempt) {
    guard let task = failure.task else { return }
    completeHop(error: nil)
    Self.letGo(task)
  }
}

/// An attempt the fetcher failed itself (see `FetcherStorage.failExchange(with:)`): the task it
/// let go of, if any.
struct FailedAttempt {
  var task: (any EngineTask)?
}

/// What the fetcher does with a chunk of the response body: decided under its lock by
/// `FetcherStorage.bodyChunkArrived(_:from:bypassingGate:at:)`, performed after it by
/// `SessionFetcher.receive(data:from:bypassingGate:)`.
enum ChunkDelivery {
  /// Not the exchange in flight's (a task let go of, a late chunk of a paused or failed exchange),
  /// or no fetch: nothing.
  case drop
  /// Held back with the head for ``SessionFetcher/didReceiveResponseBlock``: nothing until it
  /// decides.
  case held
  /// The body passed the in-memory limit: the exchange is failed and its task taken; end the attempt.
  case fail(FailedAttempt)
  /// Counted: hand it to its target, then to the progress blocks.
  case deliver(ChunkHandOff)
}

/// Where a counted chunk goes, and who is told (see ``ChunkDelivery/deliver(_:)``).
struct ChunkHandOff {
  /// Where the chunk goes once counted.
  enum Target {
    /// Kept in memory already (or a file sink with no part file): nowhere else.
    case none
    /// Written to the download's part file, on the engine's thread.
    case file(PartFile)
    /// Handed to the accumulate block, on the callback queue.
    case accumulate(@Sendable (Data?) -> Void)
    /// Handed to the stream consumer, on the engine's thread.
    case stream(any FetcherStreamConsumer)
  }

  /// The fetch's callback queue.
  var queue: DispatchQueue
  var target: Target
  /// `receivedProgressBlock`: (bytes of this chunk, total).
  var received: (@Sendable (Int64, Int64) -> Void)?
  /// `downloadProgressBlock` of a download: (bytes of this chunk, total, expected).
  var download: (@Sendable (Int64, Int64, Int64) -> Void)?
  /// The body's length so far.
  var total: Int64
  /// Its announced length (-1: unknown, or passed).
  var expected: Int64
}

/// Body bytes the exchange in flight sent, and the `sendProgressBlock` call for them, decided under
/// the fetcher's lock by `FetcherStorage.bodyBytesSent(_:total:expected:from:)`.
struct SendProgressDelivery {
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
    -> SendProgressDelivery?
  {
    guard lifecycle.accepts(task), let plan else { return nil }
    let exchange = lifecycle.current
    exchange.lastActivity = Date()
    timing.bytesSent += count
    exchange.measure.bytesSent += count
    // A stream body reports 0 expected bytes on Linux: use the declared length, else unknown.
    let expected = expected > 0 ? expected : (plan.bodyLength ?? -1)
    publish(
      TransferProgress(
        direction: .upload, completedBytes: total, expectedBytes: expected >= 0 ? expected : nil))
    return SendProgressDelivery(
      queue: plan.callbackQueue, block: config.sendProgressBlock, expected: expected)
  }

  /// Fails the exchange in flight because the fetcher cannot go on with it: records the failure
  /// and takes its task, so that neither a timeout nor a later event of the task can take its place.
  mutating func failExchange(with error: any Error) -> FailedAttempt {
    FailedAttempt(task: lifecycle.cancelTask(.failed(error)).task)
  }

  /// A chunk of the response body arrived from `task` (nil: a test block's answer) at `now`:
  /// holds it back while the head waits for a decision (unless `bypassingGate`: the decision's own
  /// replay of what was held), else counts it and says where it goes. The chunk's I/O (the part
  /// file, the consumer, the blocks) is the caller's, after the lock.
  mutating func bodyChunkArrived(
    _ data: Data, from task: (any EngineTask)?, bypassingGate: Bool, at now: Date
  ) -> ChunkDelivery {
    guard lifecycle.accepts(task), let plan else { return .drop }
    let exchange = lifecycle.current
    if !bypassingGate, exchange.responseGate != nil {
      exchange.responseGate?.held.append(data)
      exchange.lastActivity = now
      return .held
    }
    let sink: ResponseSink
    let total: Int64
    let expected: Int64
    switch exchange.chunkReceived(data, at: now, inMemoryLimit: plan.maximumInMemoryBodyLength) {
    case .drop:
      // Bytes still arriving from a task cancelled for a pause come again with the continuation;
      // the rest of a test block's answer after the fetcher failed it (past the in-memory limit,
      // or an unwritable download) is dropped. A real task is let go of at once (`failExchange`).
      return .drop
    case .tooLarge(let limit):
      countReceived(data.count, at: now)
      return .fail(failExchange(with: SessionFetcherError.responseTooLarge(limit: limit)))
    case .deliver(let chunkSink, let chunkTotal, let chunkExpected):
      (sink, total, expected) = (chunkSink, chunkTotal, chunkExpected)
    }
    countReceived(data.count, at: now)
    let count = Int64(data.count)
    var target = ChunkHandOff.Target.none
    var download: (@Sendable (Int64, Int64, Int64) -> Void)?
    switch sink {
    case .memory, .redirect:
      break
    case .accumulate:
      accumulatedSinceResponse = true
      if let block = config.accumulateDataBlock { target = .accumulate(block) }
    case .file:
      // Written after the lock, on the engine's thread: the engine hands one exchange's chunks
      // over one at a time, so they reach the file in order.
      if let partFile { target = .file(partFile) }
      download = config.downloadProgressBlock
      if stream.windowLength != nil { stream.deliveredBytes += count }
    case .stream:
      stream.deliveredBytes += count
      if let consumer = stream.consumer?.consumer { target = .stream(consumer) }
    }
    publish(
      TransferProgress(
        direction: .download, completedBytes: total, expectedBytes: expected >= 0 ? expected : nil))
    return .deliver(
      ChunkHandOff(
        queue: plan.callbackQueue, target: target, received: config.receivedProgressBlock,
        download: download, total: total, expected: expected))
  }

  /// The fetch's count of received body bytes, and the time of its first.
  private mutating func countReceived(_ count: Int, at now: Date) {
    if timing.firstByteDate == nil { timing.firstByteDate = now }
    timing.bytesReceived += Int64(count)
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
