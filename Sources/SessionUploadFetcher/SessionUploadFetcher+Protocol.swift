import FetcherService
import Foundation
import SessionFetcher

/// Chunk 4xx answers resynchronized by a query in a row, without a chunk succeeding, before the
/// chunk's error is reported (a server that keeps refusing would otherwise loop forever).
private let maximumResyncsWithoutProgress = 3

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
    enum Next {
      case start
      case query
      case fail(any Error)
      case reject(DispatchQueue, any Error)
      case none
    }
    // The source's length is measured before the lock (a file's size, a handle's end are file
    // system calls); only an upload that has not begun is measured.
    let measured: Result<Int64?, any Error>? = state.withLock { $0.phase == .idle ? $0.source : nil }
      .map { source in Result { try source.totalLength() } }
    let next: Next = state.withLock { state in
      switch state.phase {
      case .idle:
        break
      case .stopped:
        let notify = forceCompletionOnStop || state.stopFetchingTriggersCompletionHandler
        return notify ? .reject(state.queue, SessionFetcherError.cancelled) : .none
      default:
        return .reject(
          state.queue,
          SessionFetcherError.invalidConfiguration("an upload fetcher can begin only once"))
      }
      state.phase = .running
      state.deliveryQueue = SerialCallbackQueue.make(targeting: state.callbackQueue)
      state.completion = completion
      state.forceCompletionOnStop = forceCompletionOnStop
      state.retainedSelf = self
      guard let source = state.source, let measured else {
        return .fail(
          SessionFetcherError.invalidConfiguration("set uploadData, uploadFileURL or a data provider"))
      }
      do {
        state.totalLength = try measured.get()
      } catch {
        return .fail(error)
      }
      if let location = state.location, !UploadLocation.isAcceptable(location) {
        return .fail(SessionUploadFetcherError.invalidUploadLocation(location.absoluteString))
      }
      state.planner = ChunkPlanner(
        requestedChunkSize: state.chunkSize, totalLength: state.totalLength, granularity: nil,
        wholeFileByURL: source.isFileURL)
      return state.location == nil ? .start : .query
    }
    switch next {
    case .start:
      workQueue.async { self.sendStart() }
    case .query:
      workQueue.async { self.sendQuery() }
    case .fail(let error):
      finish(data: nil, error: error)
    case .reject(let queue, let error):
      queue.async { completion(nil, error) }
    case .none:
      break
    }
  }

  // MARK: - Commands

  /// The `start` command: the request, with the protocol's headers; its answer gives the upload URL.
  private func sendStart() {
    let request: URLRequest = state.withLock { state in
      var request = state.request
      if (request.httpMethod ?? "GET").uppercased() == "GET" { request.httpMethod = "POST" }
      request.setValue("resumable", forHTTPHeaderField: UploadHeader.protocolName)
      request.setValue(UploadCommand.start.rawValue, forHTTPHeaderField: UploadHeader.command)
      request.setValue(state.mimeType, forHTTPHeaderField: UploadHeader.contentType)
      request.setValue(String(state.totalLength ?? -1), forHTTPHeaderField: UploadHeader.contentLength)
      return request
    }
    send(.start, request: request, body: nil, chunkOffset: 0) { fetcher, data in
      guard
        case .uploadFrom(_, let location?, let granularity) = UploadResponse.start(self.response(of: fetcher))
      else {
        self.finish(data: data, error: Self.protocolError(data))
        return
      }
      guard UploadLocation.isAcceptable(location) else {
        self.finish(
          data: data, error: SessionUploadFetcherError.invalidUploadLocation(location.absoluteString))
        return
      }
      let queue: DispatchQueue = self.state.withLock { state in
        state.location = location
        state.offset = 0
        state.planner = ChunkPlanner(
          requestedChunkSize: state.chunkSize, totalLength: state.totalLength, granularity: granularity,
          wholeFileByURL: state.source?.isFileURL ?? false)
        return state.queue
      }
      queue.async {
        NotificationCenter.default.post(name: .sessionUploadFetcherLocationObtained, object: self)
      }
      self.uploadNextChunk()
    }
  }

  /// Reads the next chunk at the offset the server holds, then sends it.
  private func uploadNextChunk() {
    let plan: (step: Int, offset: Int64, length: Int64, isFinal: Bool, source: UploadSource, total: Int64?)? =
      state.withLock { state in
        guard state.phase == .running, let planner = state.planner, let source = state.source else {
          return nil
        }
        state.step += 1
        let chunk = planner.chunk(at: state.offset)
        return (state.step, state.offset, chunk.length, chunk.isFinal, source, state.totalLength)
      }
    guard let plan else { return }
    plan.source.readChunk(offset: plan.offset, length: plan.length, totalLength: plan.total) { result in
      self.workQueue.async {
        guard self.state.withLock({ $0.phase == .running && $0.step == plan.step }) else { return }
        switch result {
        case .failure(let error):
          self.finish(data: nil, error: error)
        case .success(let chunk):
          let body = chunk.body
          let length = body.length
          var isFinal = plan.isFinal || (plan.total == nil && length < plan.length)
          if let fullLength = chunk.reportedFullLength {
            // The provider told the length at last: plan the rest of the upload to it.
            self.state.withLock { state in
              guard state.totalLength == nil else { return }
              state.totalLength = fullLength
              state.planner?.totalLength = fullLength
            }
            isFinal = plan.offset + length >= fullLength
          }
          self.sendChunk(
            at: plan.offset, body: body, command: ChunkPlanner.command(length: length, isFinal: isFinal))
        }
      }
    }
  }

  private func sendChunk(at offset: Int64, body: UploadSource.ChunkBody, command: UploadCommand) {
    guard var request = uploadURLRequest(command) else { return }
    request.setValue(String(offset), forHTTPHeaderField: UploadHeader.offset)
    let length = body.length
    send(command, request: request, body: body, chunkOffset: offset) { fetcher, data in
      let decision = UploadResponse.chunk(
        self.response(of: fetcher), offset: offset, length: length, wasFinal: command != .upload)
      // What the server holds counts as sent even when the transport skipped its last progress
      // callback for the chunk.
      switch decision {
      case .done:
        self.reportProgress(total: offset + length)
        self.finish(data: data, error: nil)
      case .uploadFrom(let next, _, _):
        self.reportProgress(total: next)
        self.state.withLock { state in
          state.offset = next
          state.resyncsWithoutProgress = 0
        }
        self.uploadNextChunk()
      default:
        self.finish(data: data, error: Self.protocolError(data))
      }
    }
  }

  /// The `query` command: where does the server stand? Then resume there.
  private func sendQuery() {
    guard let request = uploadURLRequest(.query) else { return }
    send(.query, request: request, body: nil, chunkOffset: 0) { fetcher, data in
      switch UploadResponse.query(self.response(of: fetcher)) {
      case .done:
        self.finish(data: data, error: nil)
      case .uploadFrom(let offset, _, _):
        self.state.withLock { $0.offset = offset }
        self.uploadNextChunk()
      default:
        self.finish(data: data, error: Self.protocolError(data))
      }
    }
  }

  /// A request to the upload URL: `PUT`, with the original request's headers except credentials,
  /// cookies, the body's and the protocol's own.
  private func uploadURLRequest(_ command: UploadCommand) -> URLRequest? {
    state.withLock { state in
      guard let location = state.location else { return nil }
      var request = URLRequest(url: location)
      request.httpMethod = "PUT"
      request.timeoutInterval = state.request.timeoutInterval
      let excluded = ["authorization", "content-type", "content-length", "cookie"]
      for (name, value) in state.request.allHTTPHeaderFields ?? [:] {
        let lowered = name.lowercased()
        if excluded.contains(lowered) || lowered.hasPrefix("x-goog-upload-") { continue }
        request.setValue(value, forHTTPHeaderField: name)
      }
      request.setValue(command.rawValue, forHTTPHeaderField: UploadHeader.command)
      return request
    }
  }

  /// A command fetcher: made by the service when there is one, never retrying by itself, calling
  /// back on the work queue.
  private func makeCommandFetcher(_ command: UploadCommand, request: URLRequest) -> SessionFetcher {
    let (service, schemes, localhost) = state.withLock {
      ($0.service, $0.allowedInsecureSchemes, $0.allowLocalhostRequest)
    }
    let fetcher = service?.fetcher(request: request) ?? SessionFetcher(request: request)
    fetcher.setParentUploadFetcher(self)
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

  /// Sends one command as the current step; `success` runs on the work queue with the fetcher and
  /// body of a 2xx answer. Failures go to `commandFailed`.
  private func send(
    _ command: UploadCommand, request: URLRequest, body: UploadSource.ChunkBody?, chunkOffset: Int64,
    success: @escaping @Sendable (SessionFetcher, Data?) -> Void
  ) {
    let fetcher = makeCommandFetcher(command, request: request)
    switch body {
    case .data(let data)?: fetcher.bodyData = data
    case .file(let url)?: fetcher.bodyFileURL = url
    case nil: break
    }
    let (hasProgress, willBegin) = state.withLock {
      ($0.sendProgressBlock != nil, $0.willBeginCommandFetcher)
    }
    if body != nil, hasProgress {
      fetcher.sendProgressBlock = { [weak self] _, totalSent, _ in
        self?.reportProgress(total: chunkOffset + totalSent)
      }
    }
    willBegin?(fetcher)
    let step: Int? = state.withLock { state in
      guard state.phase == .running else { return nil }
      state.step += 1
      state.current = UploadState.Command(fetcher: fetcher, step: state.step)
      state.latestFetcher = fetcher
      if body != nil || command == .finalize { state.lastChunkRequest = fetcher.request }
      return state.step
    }
    guard let step else { return }
    fetcher.beginFetch { data, error in
      let isCurrent = self.state.withLock { state -> Bool in
        guard state.phase == .running, state.step == step else { return false }
        state.current = nil
        if let response = fetcher.response as? HTTPURLResponse { state.response = response }
        return true
      }
      guard isCurrent else { return }
      if let error {
        self.commandFailed(command, error: error, data: data)
      } else {
        success(fetcher, data)
      }
    }
  }

  private func response(of fetcher: SessionFetcher) -> HTTPURLResponse? {
    fetcher.response as? HTTPURLResponse
  }

  static func protocolError(_ data: Data?) -> SessionFetcherError {
    .status(code: 501, data: (data?.isEmpty ?? true) ? nil : data)
  }

  // MARK: - Failures and retries

  private func commandFailed(_ command: UploadCommand, error: any Error, data: Data?) {
    let status = (error as? SessionFetcherError)?.statusCode
    switch UploadResponse.failure(of: command, statusCode: status, error: error) {
    case .query:
      let resync = state.withLock { state -> Bool in
        state.resyncsWithoutProgress += 1
        return state.resyncsWithoutProgress <= maximumResyncsWithoutProgress
      }
      if resync {
        sendQuery()
      } else {
        finish(data: data, error: error)
      }
    case .retry:
      retryOrFail(error: error, data: data)
    default:
      finish(data: data, error: error)
    }
  }

  /// A transient failure: wait the next backoff delay, then query (or start again, before the
  /// upload URL is known), unless retrying is off, the retry block refuses, or the next delay
  /// reaches ``maxUploadRetryInterval``.
  private func retryOrFail(error: any Error, data: Data?) {
    let decision:
      (interval: TimeInterval, limit: TimeInterval, block: SessionFetcher.RetryBlock?, queue: DispatchQueue)? =
        state.withLock { state in
          guard state.isRetryEnabled else { return nil }
          let interval =
            state.lastRetryInterval == 0
            ? state.minRetryInterval : state.lastRetryInterval * state.retryFactor
          return (interval, state.maxUploadRetryInterval, state.retryBlock, state.queue)
        }
    guard let decision else {
      finish(data: data, error: error)
      return
    }
    guard decision.interval < decision.limit else {
      finish(
        data: nil, error: SessionUploadFetcherError.retryLimitReached(underlying: String(describing: error)))
      return
    }
    guard let block = decision.block else {
      waitThenResume(after: decision.interval)
      return
    }
    decision.queue.async {
      block(true, error) { shouldRetry in
        self.workQueue.async {
          if shouldRetry {
            self.waitThenResume(after: decision.interval)
          } else {
            self.finish(data: data, error: error)
          }
        }
      }
    }
  }

  private func waitThenResume(after interval: TimeInterval) {
    let scheduled = state.withLock { state -> (queue: DispatchQueue, isFirst: Bool, step: Int)? in
      guard state.phase == .running else { return nil }
      state.phase = .waitingToRetry
      state.lastRetryInterval = interval
      defer { state.backoffStarted = true }
      return (state.queue, !state.backoffStarted, state.step)
    }
    guard let scheduled else { return }
    post(.sessionFetcherRetryDelayStarted, on: scheduled.queue)
    if scheduled.isFirst { post(.sessionUploadFetcherInitialBackoffStarted, on: scheduled.queue) }
    // Armed after the notifications (a short delay cannot end before they are posted), and kept
    // only while this wait is still the upload's (a pause or stop in between lets go of it at once).
    let wait = RetryDelay(seconds: interval) { [weak self] in
      guard let self else { return }
      self.workQueue.async { self.retryDelayEnded() }
    }
    let kept = state.withLock { state in
      guard state.phase == .waitingToRetry, state.step == scheduled.step else { return false }
      state.retryDelay = wait
      return true
    }
    if !kept { wait.cancel() }
  }

  /// Posts `name`, with this upload fetcher as the object, on `queue`.
  private func post(_ name: Notification.Name, on queue: DispatchQueue) {
    queue.async { NotificationCenter.default.post(name: name, object: self) }
  }

  private func retryDelayEnded() {
    let resuming: (hasLocation: Bool, queue: DispatchQueue)? = state.withLock { state in
      guard state.phase == .waitingToRetry else { return nil }
      state.phase = .running
      state.retryDelay = nil
      state.retryCount += 1
      return (state.location != nil, state.queue)
    }
    guard let (hasLocation, queue) = resuming else { return }
    post(.sessionFetcherRetryDelayStopped, on: queue)
    if hasLocation {
      sendQuery()
    } else {
      sendStart()
    }
  }

  // MARK: - Progress

  /// Reports `total` bytes of the upload sent, if that is more than reported so far: totals only
  /// grow (a chunk resent after a failure does not move them back), and the bytes-sent argument is
  /// the growth since the previous report.
  ///
  /// Queued on the callback queue before the completion, so a report made while the last chunk was
  /// on the wire still arrives (before the completion) even though the upload has finished by the
  /// time it runs; only ``stopFetching()`` silences reports already queued.
  private func reportProgress(total: Int64) {
    typealias Delivery = (DispatchQueue, @Sendable (Int64, Int64, Int64) -> Void, Int64, Int64)
    let delivery: Delivery? = state.withLock { state in
      guard state.phase == .running, let block = state.sendProgressBlock, total > state.progressReported
      else { return nil }
      let sent = total - state.progressReported
      state.progressReported = total
      return (state.queue, block, state.totalLength ?? -1, sent)
    }
    guard let (queue, block, expected, sent) = delivery else { return }
    queue.async {
      guard self.state.withLock({ $0.phase != .stopped }) else { return }
      block(sent, total, expected)
    }
  }

  // MARK: - Pause, resume, stop, finish

  /// Pauses the upload: the command on the wire is abandoned (nothing is cancelled on the server).
  /// ``resumeFetching()`` asks the server where it stands and goes on from there.
  public func pauseFetching() {
    let (fetcher, work, queue): (SessionFetcher?, RetryDelay?, DispatchQueue) = state.withLock {
      state in
      guard state.phase == .running || state.phase == .waitingToRetry else { return (nil, nil, state.queue) }
      state.phase = .paused
      state.step += 1
      defer {
        state.current = nil
        state.retryDelay = nil
      }
      return (state.current?.fetcher, state.retryDelay, state.queue)
    }
    if let work {
      // Paused in a retry delay: the delay ends here (resuming queries at once).
      work.cancel()
      post(.sessionFetcherRetryDelayStopped, on: queue)
    }
    fetcher?.stopFetching()
  }

  /// Resumes a paused upload with a `query` (or with `start` when the upload URL is not known yet).
  public func resumeFetching() {
    let hasLocation: Bool? = state.withLock { state in
      guard state.phase == .paused else { return nil }
      state.phase = .running
      return state.location != nil
    }
    guard let hasLocation else { return }
    workQueue.async {
      if hasLocation {
        self.sendQuery()
      } else {
        self.sendStart()
      }
    }
  }

  /// Stops the upload: abandons the command on the wire and, when the upload URL is known, sends
  /// `cancel` to the server; ``cancellationHandler`` then runs with that command's result (with
  /// nil, nil, nil when no cancel was sent). The completion runs only when
  /// ``stopFetchingTriggersCompletionHandler`` is set (with `SessionFetcherError.cancelled`).
  /// Safe from any thread, any number of times.
  public func stopFetching() {
    let stopping:
      (
        fetcher: SessionFetcher?, work: RetryDelay?, hasLocation: Bool, queue: DispatchQueue,
        completion: FetcherCompletionHandler?, handler: CancellationHandler?
      )? = state.withLock { state in
        switch state.phase {
        case .idle:
          state.phase = .stopped
          return nil
        case .finished, .stopped:
          return nil
        case .running, .waitingToRetry, .paused:
          break
        }
        state.phase = .stopped
        state.step += 1
        let notify = state.stopFetchingTriggersCompletionHandler || state.forceCompletionOnStop
        defer {
          state.current = nil
          state.retryDelay = nil
        }
        return (
          state.current?.fetcher, state.retryDelay, state.location != nil, state.queue,
          notify ? state.completion : nil, state.cancellationHandler
        )
      }
    guard let stopping else { return }
    let queue = stopping.queue
    if let work = stopping.work {
      work.cancel()
      post(.sessionFetcherRetryDelayStopped, on: queue)
    }
    stopping.fetcher?.stopFetching()
    let handler = stopping.handler
    if let completion = stopping.completion {
      queue.async { completion(nil, SessionFetcherError.cancelled) }
    }
    guard stopping.hasLocation, let request = uploadURLRequest(.cancel) else {
      queue.async {
        handler?(nil, nil, nil)
        self.release()
      }
      return
    }
    let cancelFetcher = makeCommandFetcher(.cancel, request: request)
    state.withLock { $0.latestFetcher = nil }
    cancelFetcher.beginFetch { data, error in
      queue.async {
        handler?(cancelFetcher, data, error)
        self.release()
      }
    }
  }

  /// Ends the upload and delivers its result on the callback queue.
  private func finish(data: Data?, error: (any Error)?) {
    let ending: (FetcherCompletionHandler?, DispatchQueue, RetryDelay?)? = state.withLock { state in
      guard state.phase.isFetching else { return nil }
      state.phase = .finished
      state.step += 1
      state.current = nil
      defer { state.retryDelay = nil }
      return (state.completion, state.queue, state.retryDelay)
    }
    guard let (completion, queue, work) = ending else { return }
    if let work {
      work.cancel()
      post(.sessionFetcherRetryDelayStopped, on: queue)
    }
    queue.async {
      completion?(data, error)
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
