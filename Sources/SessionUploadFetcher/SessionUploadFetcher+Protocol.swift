import FetcherService
import Foundation
import SessionFetcher

extension SessionUploadFetcher {
  // MARK: - Begin

  /// Begins the upload; `completionHandler` runs once on ``callbackQueue`` with the body of the
  /// final answer (the finalizing chunk's, or a query's that found the upload final) or the error.
  ///
  /// An upload begins once. If ``stopFetching()`` ran first, nothing starts (the completion runs
  /// with `SessionFetcherError.cancelled` only when ``stopFetchingTriggersCompletionHandler`` is set).
  public func beginFetch(completionHandler: @escaping FetcherCompletionHandler) {
    begin(completion: completionHandler, forceCompletionOnStop: false)
  }

  /// Begins the upload and returns the body of the final answer.
  ///
  /// Cancelling the awaiting `Task` stops the upload (sending `cancel` when the upload URL is
  /// known) and throws `SessionFetcherError.cancelled`, as does ``stopFetching()``.
  public func beginFetch() async throws -> Data {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
        begin(completion: continuation.fetchCompletion, forceCompletionOnStop: true)
        if Task.isCancelled { stopFetching() }
      }
    } onCancel: {
      stopFetching()
    }
  }

  private func begin(completion: @escaping FetcherCompletionHandler, forceCompletionOnStop: Bool) {
    // The source's length is measured before the lock (a file's size, a handle's end are file
    // system calls); only an upload that has not begun is measured.
    let source = state.withLock { $0.lifecycle.isIdle ? $0.source : nil }
    var measuringError: (any Error)?
    let length: UploadLifecycle.SourceLength
    if let source {
      do {
        length = .measured(try source.totalLength())
      } catch {
        measuringError = error
        length = .unmeasurable
      }
    } else {
      length = .missing
    }
    let (begun, delivery, notifyStopped) = state.withLock { state in
      let begun = state.lifecycle.begin(
        source: length, requestedChunkSize: state.chunkSize, wholeFileByURL: state.source?.isFileURL ?? false)
      if case .proceed = begun {
        state.deliveryQueue = SerialCallbackQueue.make(targeting: state.callbackQueue)
        state.completion = completion
        state.forceCompletionOnStop = forceCompletionOnStop
        state.retainedSelf = self
      }
      return (begun, Delivery(state), forceCompletionOnStop || state.stopFetchingTriggersCompletionHandler)
    }
    switch begun {
    case .proceed(let action):
      if case .finish = action {
        perform(action, delivery, error: measuringError)
      } else {
        workQueue.async { self.perform(action, delivery) }
      }
    case .stoppedBeforeBegin:
      if notifyStopped { delivery.queue.async { completion(nil, SessionFetcherError.cancelled) } }
    case .alreadyBegun:
      delivery.queue.async {
        completion(nil, SessionFetcherError.invalidConfiguration("an upload fetcher can begin only once"))
      }
    }
  }

  // MARK: - Events and actions

  /// What performing an action needs from the state, read under the lock with the event.
  struct Delivery: Sendable {
    var queue: DispatchQueue
    var progressBlock: (@Sendable (Int64, Int64, Int64) -> Void)?
    var retryBlock: SessionFetcher.RetryBlock?

    init(_ state: UploadState) {
      queue = state.queue
      progressBlock = state.sendProgressBlock
      retryBlock = state.retryBlock
    }
  }

  /// Applies an event to the lifecycle under the lock.
  private func apply(_ event: (inout UploadState) -> UploadLifecycle.Action) -> (
    UploadLifecycle.Action, Delivery
  ) {
    state.withLock { state in (event(&state), Delivery(state)) }
  }

  /// Performs what the lifecycle decided, outside the lock. `data` and `error` are the event's (a
  /// command's body and error, a source's error); `body` is the chunk just read.
  private func perform(
    _ action: UploadLifecycle.Action, _ delivery: Delivery, data: Data? = nil, error: (any Error)? = nil,
    body: UploadSource.ChunkBody? = nil
  ) {
    switch action {
    case .none:
      break
    case .send(let plan, let token):
      send(plan, token: token, body: body)
    case .read(let read, let progress, let announcingLocation):
      if let progress { deliver(progress, delivery) }
      if announcingLocation { post(.sessionUploadFetcherLocationObtained, on: delivery.queue) }
      readChunk(read)
    case .finish(let outcome, let progress):
      if let progress { deliver(progress, delivery) }
      finish(outcome, data: data, error: error, on: delivery.queue)
    case .askRetryBlock(let token, let suggestion):
      askRetryBlock(token: token, suggestion: suggestion, delivery, data: data, error: error)
    case .startRetryWait(let interval, let token, let isFirst):
      post(.sessionFetcherRetryDelayStarted, on: delivery.queue)
      if isFirst { post(.sessionUploadFetcherInitialBackoffStarted, on: delivery.queue) }
      // Armed after the notifications (a short delay cannot end before they are posted), and kept
      // only while this wait is still the upload's.
      let delay = RetryDelay(seconds: interval, on: SystemFetchClock.shared) { [weak self] in
        guard let self else { return }
        self.workQueue.async {
          let (action, delivery) = self.apply { $0.lifecycle.retryDelayEnded(token: token) }
          self.perform(action, delivery)
        }
      }
      let (armed, _) = apply { $0.lifecycle.retryWaitArmed(token: token, delay: delay) }
      perform(armed, delivery)
    case .abandonRetryWait(let delay):
      delay.cancel(on: SystemFetchClock.shared)
      post(.sessionFetcherRetryDelayStopped, on: delivery.queue)
    case .endRetryWait(let plan, let token):
      post(.sessionFetcherRetryDelayStopped, on: delivery.queue)
      send(plan, token: token, body: nil)
    case .pause(let abandoned), .stop(let abandoned, _):
      if let delay = abandoned.retryDelay {
        delay.cancel(on: SystemFetchClock.shared)
        post(.sessionFetcherRetryDelayStopped, on: delivery.queue)
      }
      abandoned.command?.fetcher.stopFetching()
    }
  }

  // MARK: - Commands

  /// Makes the fetcher of `plan` and begins it, unless the upload left step `token` meanwhile.
  private func send(_ plan: UploadLifecycle.CommandPlan, token: Int, body: UploadSource.ChunkBody?) {
    let request: URLRequest
    var chunkOffset: Int64?
    switch plan {
    case .start(let totalLength):
      request = state.withLock { state in
        var request = state.request
        if (request.httpMethod ?? "GET").uppercased() == "GET" { request.httpMethod = "POST" }
        request.setValue("resumable", forHTTPHeaderField: UploadHeader.protocolName)
        request.setValue(UploadCommand.start.rawValue, forHTTPHeaderField: UploadHeader.command)
        request.setValue(state.mimeType, forHTTPHeaderField: UploadHeader.contentType)
        request.setValue(String(totalLength ?? -1), forHTTPHeaderField: UploadHeader.contentLength)
        return request
      }
    case .query(let location):
      request = uploadURLRequest(.query, to: location)
    case .chunk(let location, let offset, _, let command):
      var chunkRequest = uploadURLRequest(command, to: location)
      chunkRequest.setValue(String(offset), forHTTPHeaderField: UploadHeader.offset)
      if let totalLength = state.withLock({ $0.lifecycle.totalLength }) {
        // As the original: the whole upload's length with each chunk, when known.
        chunkRequest.setValue(String(totalLength), forHTTPHeaderField: UploadHeader.contentLength)
      }
      request = chunkRequest
      chunkOffset = offset
    }
    let fetcher = makeCommandFetcher(plan.command, request: request)
    if case .start = plan, let agent = fetcher.request?.value(forHTTPHeaderField: "User-Agent"),
      !agent.contains(Self.userAgentMarker)
    {
      // Read from the fetcher: the service adds its User-Agent when it makes the fetcher.
      fetcher.setRequestValue(agent + " " + Self.userAgentMarker, forHTTPHeaderField: "User-Agent")
    }
    if let chunkOffset, case .chunk(_, _, let length, _) = plan {
      fetcher.comment = commandComment("\(chunkOffset)-\(max(0, chunkOffset + length - 1))")
    }
    switch body {
    case .data(let data)?: fetcher.bodyData = data
    case .file(let url)?: fetcher.bodyFileURL = url
    case nil: break
    }
    let (hasProgress, willBegin) = state.withLock {
      ($0.sendProgressBlock != nil, $0.willBeginCommandFetcher)
    }
    if let chunkOffset, body != nil, hasProgress {
      fetcher.sendProgressBlock = { [weak self] _, totalSent, _ in
        self?.progressSent(total: chunkOffset + totalSent)
      }
    }
    LockAudit.userBlock("willBeginCommandFetcher")
    willBegin?(fetcher)
    let made = state.withLock { state in
      guard state.lifecycle.commandMade(fetcher, token: token) else { return false }
      state.latestFetcher = fetcher
      if chunkOffset != nil { state.lastChunkRequest = fetcher.request }
      return true
    }
    guard made else { return }
    fetcher.beginFetch { data, error in self.commandEnded(fetcher, data: data, error: error) }
  }

  /// A command fetcher ended (on the work queue).
  private func commandEnded(_ fetcher: SessionFetcher, data: Data?, error: (any Error)?) {
    let response = fetcher.response as? HTTPURLResponse
    let (action, delivery) = apply { state in
      if state.lifecycle.currentFetcher === fetcher, let response { state.response = response }
      return state.lifecycle.commandEnded(
        fetcher, answer: error.map { UploadLifecycle.Answer.failure($0) } ?? .success(response),
        reportsProgress: state.sendProgressBlock != nil,
        retrying: UploadLifecycle.RetrySettings(
          isEnabled: state.isRetryEnabled, minInterval: state.minRetryInterval, factor: state.retryFactor,
          maxInterval: state.maxRetryInterval, hasRetryBlock: state.retryBlock != nil))
    }
    perform(action, delivery, data: data, error: error)
  }

  /// A request to the upload URL: `PUT`, with the original request's headers except credentials,
  /// cookies, the body's and the protocol's own.
  private func uploadURLRequest(_ command: UploadCommand, to location: URL) -> URLRequest {
    state.withLock { state in
      var request = URLRequest(url: location)
      request.httpMethod = "PUT"
      request.timeoutInterval = state.request.timeoutInterval
      let excluded = ["authorization", "content-type", "content-length", "cookie"]
      for (name, value) in state.request.allHTTPHeaderFields ?? [:] {
        let lowered = name.lowercased()
        if excluded.contains(lowered) || lowered.hasPrefix("x-goog-upload-") { continue }
        request.setValue(value, forHTTPHeaderField: name)
      }
      request.setValue("resumable", forHTTPHeaderField: UploadHeader.protocolName)
      request.setValue(command.rawValue, forHTTPHeaderField: UploadHeader.command)
      return request
    }
  }

  /// What the original appends to the `start` request's User-Agent.
  static let userAgentMarker = "(GTMSUF/1)"

  /// A command fetcher: made by the service when there is one, never retrying by itself, calling
  /// back on the work queue.
  private func makeCommandFetcher(_ command: UploadCommand, request: URLRequest) -> SessionFetcher {
    let (service, schemes, localhost) = state.withLock {
      ($0.service, $0.allowedInsecureSchemes, $0.allowLocalhostRequest)
    }
    let fetcher = service?.fetcher(request: request) ?? SessionFetcher(request: request)
    fetcher.setParentUploadFetcher(self)
    fetcher.comment = commandComment(command == .start ? "start" : command.rawValue)
    fetcher.callbackQueue = workQueue
    fetcher.isRetryEnabled = false
    fetcher.stopFetchingTriggersCompletionHandler = false
    fetcher.allowedInsecureSchemes = schemes
    fetcher.allowLocalhostRequest = localhost
    if command != .start {
      // The upload URL is the credential: no authorization on it.
      fetcher.authorizer = nil
    }
    return fetcher
  }

  /// A command fetcher's comment: the upload's (or "upload") and what the command does.
  private func commandComment(_ what: String) -> String {
    "\(state.withLock { $0.comment } ?? "upload") (\(what))"
  }

  static func protocolError(_ data: Data?) -> SessionFetcherError {
    .status(code: 501, data: (data?.isEmpty ?? true) ? nil : data)
  }

  // MARK: - Chunks and progress

  /// Reads a chunk from the source, then hands it to the lifecycle on the work queue.
  private func readChunk(_ read: UploadLifecycle.ChunkRead) {
    guard let source = state.withLock({ $0.source }) else { return }
    source.readChunk(offset: read.offset, length: read.length, totalLength: read.totalLength) { result in
      self.workQueue.async {
        switch result {
        case .failure(let error):
          let (action, delivery) = self.apply { $0.lifecycle.chunkRead(token: read.token, result: .failed) }
          self.perform(action, delivery, error: error)
        case .success(let chunk):
          let (action, delivery) = self.apply {
            $0.lifecycle.chunkRead(
              token: read.token,
              result: .read(length: chunk.body.length, reportedFullLength: chunk.reportedFullLength))
          }
          self.perform(action, delivery, body: chunk.body)
        }
      }
    }
  }

  /// A command fetcher reported `total` bytes of the upload sent.
  private func progressSent(total: Int64) {
    let (progress, delivery) = state.withLock { state -> (UploadLifecycle.Progress?, Delivery) in
      guard state.sendProgressBlock != nil else { return (nil, Delivery(state)) }
      return (state.lifecycle.progressSent(total: total), Delivery(state))
    }
    if let progress { deliver(progress, delivery) }
  }

  /// Reports progress to the send progress block: totals only grow (see
  /// ``UploadLifecycle/progressSent(total:)``), and the bytes-sent argument is the growth since the
  /// previous report.
  ///
  /// Queued on the callback queue before the completion, so a report made while the last chunk was
  /// on the wire still arrives (before the completion) even though the upload has finished by the
  /// time it runs; only ``stopFetching()`` silences reports already queued.
  private func deliver(_ progress: UploadLifecycle.Progress, _ delivery: Delivery) {
    guard let block = delivery.progressBlock else { return }
    delivery.queue.async {
      guard !self.state.withLock({ $0.lifecycle.isStopped }) else { return }
      LockAudit.userBlock("the upload's sendProgressBlock")
      block(progress.sent, progress.total, progress.expected)
    }
  }

  // MARK: - Retries

  /// Asks the retry block whether to retry the failure of step `token`.
  private func askRetryBlock(
    token: Int, suggestion: Bool, _ delivery: Delivery, data: Data?, error: (any Error)?
  ) {
    guard let block = delivery.retryBlock else { return }
    delivery.queue.async {
      LockAudit.userBlock("the upload's retryBlock")
      block(suggestion, error) { shouldRetry in
        self.workQueue.async {
          let (action, delivery) = self.apply {
            $0.lifecycle.retryDecided(token: token, shouldRetry: shouldRetry)
          }
          self.perform(action, delivery, data: data, error: error)
        }
      }
    }
  }

  /// Posts `name`, with this upload fetcher as the object, on `queue`.
  private func post(_ name: Notification.Name, on queue: DispatchQueue) {
    queue.async { NotificationCenter.default.post(name: name, object: self) }
  }

  // MARK: - Pause, resume, stop, finish

  /// Pauses the upload: the command on the wire is abandoned (nothing is cancelled on the server).
  /// ``resumeFetching()`` asks the server where it stands and goes on from there.
  ///
  /// A running upload keeps itself alive; a paused one does not: an upload let go of while paused
  /// is freed, with the chunk it holds (the server keeps what it received, and a new fetcher can
  /// resume the upload by its ``uploadLocationURL``).
  public func pauseFetching() {
    let (action, delivery) = apply { state in
      let action = state.lifecycle.pause()
      // Not the last reference: the caller holds the upload for the call.
      if case .pause = action { state.retainedSelf = nil }
      return action
    }
    perform(action, delivery)
  }

  /// Resumes a paused upload with a `query` (or with `start` when the upload URL is not known yet).
  public func resumeFetching() {
    let (action, delivery) = apply { state in
      let action = state.lifecycle.resume()
      // Running again: the upload keeps itself alive until it ends (see `pauseFetching()`).
      if action != .none { state.retainedSelf = self }
      return action
    }
    guard action != .none else { return }
    workQueue.async { self.perform(action, delivery) }
  }

  /// Stops the upload: abandons the command on the wire and, when the upload URL is known, sends
  /// `cancel` to the server; ``cancellationHandler`` then runs with that command's result (with
  /// nil, nil, nil when no cancel was sent). The completion runs only when
  /// ``stopFetchingTriggersCompletionHandler`` is set (with `SessionFetcherError.cancelled`).
  /// Safe from any thread, any number of times.
  public func stopFetching() {
    let (action, delivery, completion, handler) = state.withLock { state in
      let action = state.lifecycle.stop()
      let notify = state.stopFetchingTriggersCompletionHandler || state.forceCompletionOnStop
      return (action, Delivery(state), notify ? state.completion : nil, state.cancellationHandler)
    }
    guard case .stop(_, let cancelAt) = action else { return }
    perform(action, delivery)
    let queue = delivery.queue
    if let completion {
      queue.async {
        LockAudit.userBlock("the upload's completion handler")
        completion(nil, SessionFetcherError.cancelled)
      }
    }
    guard let cancelAt else {
      queue.async {
        LockAudit.userBlock("cancellationHandler")
        handler?(nil, nil, nil)
        self.release()
      }
      return
    }
    let cancelFetcher = makeCommandFetcher(.cancel, request: uploadURLRequest(.cancel, to: cancelAt))
    state.withLock { $0.latestFetcher = nil }
    cancelFetcher.beginFetch { data, error in
      queue.async {
        LockAudit.userBlock("cancellationHandler")
        handler?(cancelFetcher, data, error)
        self.release()
      }
    }
  }

  /// Delivers the upload's result on the callback queue: `data` and `error` are the ending event's.
  private func finish(
    _ outcome: UploadLifecycle.Outcome, data: Data?, error: (any Error)?, on queue: DispatchQueue
  ) {
    let result: (Data?, (any Error)?)
    switch outcome {
    case .completed:
      result = (data, nil)
    case .commandFailed, .sourceFailed:
      result = (data, error)
    case .protocolError:
      result = (data, Self.protocolError(data))
    case .invalidProtocolValue(let header, let value):
      result = (data, SessionUploadFetcherError.invalidProtocolValue(header: header, value: value))
    case .invalidUploadLocation(let location):
      result = (data, SessionUploadFetcherError.invalidUploadLocation(location.absoluteString))
    case .retryLimitReached:
      result = (
        nil,
        SessionUploadFetcherError.retryLimitReached(
          underlying: error.map { String(describing: $0) } ?? "")
      )
    case .noSource:
      result = (
        nil, SessionFetcherError.invalidConfiguration("set uploadData, uploadFileURL or a data provider")
      )
    }
    let completion = state.withLock { $0.completion }
    queue.async {
      LockAudit.userBlock("the upload's completion handler")
      completion?(result.0, result.1)
      self.release()
    }
  }

  private func release() {
    state.withLock { state in
      state.releaseBlocks()
      state.retainedSelf = nil
    }
  }
}
