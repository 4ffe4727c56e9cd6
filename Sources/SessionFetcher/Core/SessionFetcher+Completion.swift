import Foundation

extension SessionFetcher {
  /// The result of one attempt, before the retry decision.
  struct AttemptFailure {
    var error: any Error
    var response: HTTPURLResponse?
    var data: Data?

    /// The HTTP status the attempt failed with: that of a `.status` error (a final response, a
    /// refused redirect, a stream window answered with an error), nil for any other failure.
    var statusCode: Int? { (error as? SessionFetcherError)?.statusCode }
  }

  // MARK: - End of a hop

  /// The current request ended (network or stub): follow a redirect, succeed, or fail the attempt.
  func completeHop(error transportError: (any Error)?) {
    enum Outcome {
      case ignore
      case redirect(HTTPURLResponse, URL, Data)
      case success(ResponseHead?)
      case failure(AttemptFailure)
      case nextWindow((any FetcherStreamConsumer)?)
      case nextFileWindow
      case challenge(ServerChallenge, HTTPURLResponse, Data)
    }
    var metrics: MetricsDelivery?
    let outcome: Outcome = storage.withLock { storage in
      guard storage.lifecycle.phase == .running else { return .ignore }
      if ResponseGate.holdEnd(of: &storage, error: transportError) { return .ignore }
      Self.disarmTimeout(&storage)
      metrics = exchangeEnded(&storage, error: transportError)
      // The head, not its response: a successful 2xx makes no `HTTPURLResponse` here.
      let head = storage.lifecycle.current.responseHead
      let status = head?.statusCode
      let body = storage.lifecycle.current.responseData
      switch storage.lifecycle.current.cancelReason {
      case .stopped?, .pausedForBackpressure?:
        return .ignore
      case .timedOut?:
        return .failure(
          AttemptFailure(
            error: SessionFetcher.timedOutError(url: storage.lifecycle.current.request?.url),
            response: head?.httpResponse))
      case .failed(let error)?:
        return .failure(AttemptFailure(error: error, response: head?.httpResponse))
      case nil:
        break
      }
      // `ServerChallenge` takes only a 401.
      if status == 401, let http = head?.httpResponse, storage.plan?.testBlock == nil,
        transportError == nil || storage.lifecycle.current.challengeCancelled,
        let challenge = ServerChallenge(response: http)
      {
        return .challenge(challenge, http, body)
      }
      if storage.lifecycle.current.challengeCancelled, status == 401 || status == 407,
        let http = head?.httpResponse
      {
        let data = body.isEmpty ? nil : body
        return .failure(
          AttemptFailure(
            error: SessionFetcherError.status(code: http.statusCode, data: data),
            response: http, data: data))
      }
      if let transportError {
        // URLSession's own timer (a backstop, should the fetcher's be held up) reads as the
        // fetcher's would: on Linux its error comes without a description or the URL.
        let urlError = transportError as? URLError
        let bareTimeout = urlError?.code == .timedOut && urlError?.failingURL == nil
        let url = storage.lifecycle.current.request?.url
        var error =
          bareTimeout
          ? SessionFetcher.timedOutError(url: url)
          : ContentDecoding.error(transportError, response: head?.response)
        if urlError?.code == .requestBodyStreamExhausted, storage.plan?.exactStreamLength != nil,
          let urlError
        {
          // A body of exact length that was not (see `BodySpool`): the same error on both engines.
          error = SessionFetcherError.bodyUnavailable(description: urlError.localizedDescription)
        }
        return .failure(AttemptFailure(error: error, response: head?.httpResponse))
      }
      switch StreamWindows.hopEnded(&storage) {
      case .finished: break
      case .more(let consumer): return .nextWindow(consumer)
      case .nextFileWindow: return .nextFileWindow
      case .stalled(let error): return .failure(AttemptFailure(error: error, response: head?.httpResponse))
      }
      if let status, let target = storage.lifecycle.current.redirectTarget, RedirectPolicy.isRedirect(status),
        let http = head?.httpResponse
      {
        return .redirect(http, target, body)
      }
      return .success(head)
    }
    metrics?.deliver(self)
    switch outcome {
    case .ignore:
      return
    case .challenge(let challenge, let response, let body):
      answerChallenge(challenge, response: response, body: body)
    case .redirect(let response, let target, let body):
      followRedirect(response: response, target: target, body: body)
    case .failure(let failure):
      attemptFailed(failure)
    case .success(let head):
      completeResponse(head)
    case .nextWindow(let consumer):
      // The next Range window now, or once the consumer has drained its buffer.
      if consumer?.fetcherShouldRequestNextWindow(self) == true { resumeStreamTransfer() }
    case .nextFileWindow:
      resumeStreamTransfer()
    }
  }

  /// The error of an attempt that timed out.
  static func timedOutError(url: URL?) -> URLError {
    var info: [String: Any] = [NSLocalizedDescriptionKey: "The request timed out."]
    if let url { info[NSURLErrorFailingURLErrorKey] = url }
    return URLError(.timedOut, userInfo: info)
  }

  /// A response completed without a transport error: check the status (after the service's cache).
  private func completeResponse(_ head: ResponseHead?) {
    var data: Data? = storage.withLock { storage in
      guard let exchange = storage.lifecycle.exchange else { return nil }
      return exchange.sink == .memory || exchange.sink == .redirect ? exchange.responseData : nil
    }
    guard let head, let status = head.statusCode else {
      // Non-HTTP schemes (file:, data:) report status 0: success.
      finishSuccessfully(data: data)
      return
    }
    // The response is made only for a failure (or taken from the service's replacement).
    var replacement: HTTPURLResponse?
    if let hooks = serviceHooks, let replaced = hooks.fetcher(self, finalResponse: head, data: data) {
      replacement = replaced.response
      data = replaced.data
      storage.withLock { storage in
        // Only into the exchange in flight: a fetch stopped meanwhile reports what it had.
        guard storage.lifecycle.phase == .running else { return }
        storage.lifecycle.current.response = replaced.response
        storage.lifecycle.current.responseData = replaced.data ?? Data()
        storage.lifecycle.current.responseBodyLength = Int64(replaced.data?.count ?? 0)
      }
    }
    let statusCode = replacement?.statusCode ?? status
    if (200..<300).contains(statusCode) {
      finishSuccessfully(data: data)
    } else if statusCode == 416, restartWithoutRange() {
      return
    } else {
      let body = (data?.isEmpty ?? true) ? nil : data
      attemptFailed(
        AttemptFailure(
          error: SessionFetcherError.status(code: statusCode, data: body),
          response: replacement ?? head.httpResponse, data: body))
    }
  }

  /// A 416 answer to the `Range` that continued a kept part file (the resource shrank, or the part
  /// already held all of it): the part file is dropped and the request sent again without a range,
  /// once, as a 200 to `If-Range` would have restarted it.
  private func restartWithoutRange() -> Bool {
    guard let restart = storage.withLock({ $0.restartWithoutRange() }) else { return false }
    PartFile.remove(restart.partFile)
    sendHop(restart.hop, body: .none)
    return true
  }

  private func finishSuccessfully(data: Data?) {
    let sink = storage.withLock { $0.lifecycle.exchange?.sink ?? .memory }
    switch sink {
    case .file:
      // Taken under the lock, renamed after it: a stop from now on finds no part file to delete,
      // and the rename puts either nothing or the whole body at the destination.
      let partFile = storage.withLock { storage in
        defer { storage.partFile = nil }
        return storage.partFile
      }
      var commitError: (any Error)?
      do {
        try partFile?.commit()
      } catch {
        commitError = error
      }
      finish(data: nil, error: commitError)
    case .accumulate, .stream:
      finish(data: nil, error: nil)
    case .memory, .redirect:
      finish(data: data ?? Data(), error: nil)
    }
  }

  // MARK: - Redirects

  private func followRedirect(response: HTTPURLResponse, target: URL, body: Data) {
    let context:
      (
        hop: URLRequest, insecure: [String], localhost: Bool, limit: RedirectLimit, queue: DispatchQueue,
        block: WillRedirectBlock?, body: BodySource
      )? = storage.withLock { storage in
        guard let exchange = storage.lifecycle.exchange, let hop = exchange.hopRequest,
          let plan = storage.plan
        else {
          return nil
        }
        let limit = RedirectPolicy.limit(
          followed: storage.attemptRedirects, maximum: storage.config.maximumRedirects)
        if limit == .follow {
          storage.attemptRedirects += 1
          storage.timing.redirectCount += 1
        }
        return (
          hop, storage.config.allowedInsecureSchemes, storage.config.allowLocalhostRequest,
          limit, plan.callbackQueue, storage.config.willRedirectBlock,
          exchange.keepsBody ? plan.body : .none
        )
      }
    guard let context else { return }
    let refusal = SessionFetcherError.status(code: response.statusCode, data: body.isEmpty ? nil : body)
    switch context.limit {
    case .follow:
      break
    case .final:
      // No redirect may be followed at all: the 3xx is the answer, the final response head that
      // `didReceiveResponseBlock` decides about.
      askAboutRefusal(AttemptFailure(error: refusal, response: response, data: body))
      return
    case .tooMany:
      attemptFailed(
        AttemptFailure(error: Self.tooManyRedirectsError(url: response.url), response: response))
      return
    }
    switch RedirectPolicy.nextHop(
      from: context.hop, response: response, target: target, allowedInsecureSchemes: context.insecure,
      allowLocalhostRequest: context.localhost)
    {
    case .failure(.insecure(let url)):
      finish(data: nil, error: SessionFetcherError.insecureRequest(url))
    case .failure(.noLocation):
      askAboutRefusal(AttemptFailure(error: refusal, response: response, data: body))
    case .success(let hop):
      let nextBody = hop.keepsBody ? context.body : .none
      guard let block = context.block else {
        proceedWithRedirect(from: response, to: hop.request, body: nextBody)
        return
      }
      deliver(on: context.queue) {
        LockAudit.userBlock("willRedirectBlock")
        block(response, hop.request) { chosen in
          guard let chosen else {
            // Declined: the 3xx is the final response.
            self.askAboutRefusal(AttemptFailure(error: refusal, response: response, data: body))
            return
          }
          // The block may point anywhere: the insecure-scheme gate still applies.
          if let url = chosen.url, !self.isAllowedRedirect(url) {
            self.finish(data: nil, error: SessionFetcherError.insecureRequest(url))
            return
          }
          self.proceedWithRedirect(from: response, to: chosen, body: nextBody)
        }
      }
    }
  }

  /// `URLError(.httpTooManyRedirects)` as Apple platforms give it, with the failing URL.
  static func tooManyRedirectsError(url: URL?) -> URLError {
    var info: [String: Any] = [NSLocalizedDescriptionKey: "too many HTTP redirects"]
    if let url { info[NSURLErrorFailingURLErrorKey] = url }
    return URLError(.httpTooManyRedirects, userInfo: info)
  }

  /// Whether a redirect may lead to `url` (see ``SecurityPolicy/allowsRedirect(to:allowedInsecureSchemes:allowLocalhostRequest:)``).
  private func isAllowedRedirect(_ url: URL) -> Bool {
    let (schemes, localhost) = storage.withLock {
      ($0.config.allowedInsecureSchemes, $0.config.allowLocalhostRequest)
    }
    return SecurityPolicy.allowsRedirect(
      to: url, allowedInsecureSchemes: schemes, allowLocalhostRequest: localhost)
  }

  private func proceedWithRedirect(from response: HTTPURLResponse, to request: URLRequest, body: BodySource) {
    guard storage.withLock({ $0.lifecycle.phase == .running }) else { return }
    for monitor in allMonitors() { monitor.fetcher(self, willRedirectFrom: response, to: request) }
    sendHop(request, body: body)
  }

  // MARK: - Failures and retries

  /// An attempt failed before reaching the server (body unavailable, session gone).
  func attemptFailed(error: any Error) {
    attemptFailed(AttemptFailure(error: error))
  }

  func attemptFailed(_ failure: AttemptFailure) {
    let context:
      (
        method: String, partial: Bool, enabled: Bool, authorizer: (any FetcherAuthorizer)?,
        refreshed: Bool, queue: DispatchQueue, block: RetryBlock?, elapsed: TimeInterval,
        backoff: RetryBackoff, streamStarted: Bool, retriesLeft: Bool
      )? = storage.withLock { storage in
        guard storage.lifecycle.isFetching, let plan = storage.plan else { return nil }
        if storage.backoff == nil {
          storage.backoff = RetryBackoff(
            minInterval: storage.config.effectiveMinRetryInterval,
            maxInterval: storage.config.effectiveMaxRetryInterval, factor: storage.config.retryFactor)
        }
        return (
          (plan.baseRequest.httpMethod ?? "GET").uppercased(),
          storage.lifecycle.exchange?.receivedPartialBody ?? false,
          storage.config.isRetryEnabled, plan.authorization?.authorizer, storage.didRefreshAuthorization,
          plan.callbackQueue, storage.config.retryBlock,
          Date().timeIntervalSince(storage.timing.startDate ?? Date()), storage.backoff!,
          !StreamWindows.allowsRetry(after: failure.error, storage: storage),
          storage.config.maxRetryCount.map { storage.timing.retryCount < $0 } ?? true
        )
      }
    guard let context else { return }
    discardPartFile()

    if failure.statusCode == 401, let authorizer = context.authorizer, !context.refreshed {
      storage.withLock { $0.didRefreshAuthorization = true }
      Task {
        LockAudit.userBlock("the authorizer's primeForRefresh")
        if await authorizer.primeForRefresh() {
          self.retryNow()
        } else {
          self.finishFailed(failure)
        }
      }
      return
    }
    // A stream consumer already holds part of the body: a new attempt would deliver it twice
    // (unless it asks for a fresh Range window after it, see `StreamWindows`).
    guard context.enabled, !context.streamStarted, context.retriesLeft else {
      finishFailed(failure)
      return
    }
    var serverDelay: TimeInterval?
    if let status = failure.statusCode, RetryPolicy.retryAfterStatuses.contains(status),
      let value = failure.response?.value(forHTTPHeaderField: "Retry-After")
    {
      serverDelay = RetryPolicy.retryAfterDelay(value)
      // A server asking for more than the longest delay we accept ends the retries.
      if let serverDelay, serverDelay > context.backoff.maxInterval {
        finishFailed(failure)
        return
      }
    }
    // The server may lengthen the backoff's delay, never shorten it.
    let (delay, hasRetryAfter) = context.backoff.delay(serverDelay: serverDelay)
    guard context.backoff.allowsRetry(elapsedSinceFirstAttempt: context.elapsed, hasRetryAfter: hasRetryAfter)
    else {
      finishFailed(failure)
      return
    }
    let retryDelay = delay
    let suggested = RetryPolicy.isRetryable(
      statusCode: failure.statusCode, error: failure.error, method: context.method,
      receivedPartialBody: context.partial)
    guard let block = context.block else {
      if suggested {
        retry(after: retryDelay, failure: failure)
      } else {
        finishFailed(failure)
      }
      return
    }
    deliver(on: context.queue) {
      LockAudit.userBlock("retryBlock")
      block(suggested, failure.error) { shouldRetry in
        if shouldRetry {
          self.retry(after: retryDelay, failure: failure)
        } else {
          self.finishFailed(failure)
        }
      }
    }
  }

  /// Deletes the attempt's part file, or keeps it for the next attempt to continue with a range
  /// request when the server takes ranges (see `DownloadResume`).
  private func discardPartFile() {
    let cleanup = storage.withLock { storage in
      StreamWindows.endDownloadWindows(&storage)
      return DownloadResume.park(&storage)
    }
    cleanup.perform()
  }

  private func finishFailed(_ failure: AttemptFailure) {
    finish(data: failure.data, error: failure.error)
  }

  /// Ends the attempt and waits `delay` before the next one.
  private func retry(after delay: TimeInterval, failure: AttemptFailure) {
    guard let ended = storage.withLock({ $0.attemptEndedForRetry(after: delay) }) else { return }
    let (postStopped, queue, retryCount) = (ended.postStopped, ended.queue, ended.retryCount)
    for monitor in allMonitors() { monitor.fetcher(self, willRetryAfter: delay, error: failure.error) }
    if postStopped { post(.sessionFetcherStopped, on: queue) }
    post(.sessionFetcherRetryDelayStarted, on: queue)
    serviceHooks?.fetcher(self, isWaitingToRetry: true)
    // Armed after the notifications, so that a short delay cannot end before they are posted; kept
    // only if this is still the wait it was armed for (a stop, or a delay that already ended, in
    // between: let go of at once).
    let wait = RetryDelay(seconds: delay) { [weak self] in self?.retryDelayEnded() }
    let kept = storage.withLock { storage in
      guard storage.lifecycle.phase == .waitingToRetry, storage.timing.retryCount == retryCount else {
        return false
      }
      storage.retryDelay = wait
      return true
    }
    if !kept { wait.cancel() }
  }

  private func retryDelayEnded() {
    let queue: DispatchQueue? = storage.withLock { storage in
      guard storage.lifecycle.retryDelayEnded() == .startAttempt, let plan = storage.plan else { return nil }
      storage.retryDelay = nil
      storage.timing.retryCount += 1
      return plan.callbackQueue
    }
    guard let queue else { return }
    post(.sessionFetcherRetryDelayStopped, on: queue)
    serviceHooks?.fetcher(self, isWaitingToRetry: false)
    startAttempt()
  }

  /// Cuts a pending retry delay short (the service's early retry after a success on the same host).
  package func retryImmediatelyIfWaiting() {
    let wait = storage.withLock { $0.lifecycle.phase == .waitingToRetry ? $0.retryDelay : nil }
    // Whoever cancels a pending wait ends it: the clock's wake, if it lost the race, never runs.
    guard let wait, wait.cancel() else { return }
    retryDelayEnded()
  }

  /// An authorization refresh: a new attempt at once, without a delay.
  private func retryNow() {
    guard let ended = storage.withLock({ $0.attemptEndedForImmediateRetry() }) else { return }
    if ended.postStopped { post(.sessionFetcherStopped, on: ended.queue) }
    startAttempt()
  }

  // MARK: - Finish

  /// Ends the fetch and delivers its result: Stopped, then the completion, then CompletionInvoked.
  func finish(data: Data?, error: (any Error)?) {
    guard let ending = storage.withLock({ $0.fetchEnded(data: data, error: error, at: Date()) }) else {
      return
    }
    let (transition, queue, completion) = (ending.transition, ending.queue, ending.completion)
    let parser = ending.parser
    for continuation in ending.progress { continuation.finish() }
    Self.letGo(transition.task)
    if let spool = ending.spool { try? FileManager.default.removeItem(at: spool) }
    ending.partFiles.perform()
    ending.ownSession?.finishTasksAndInvalidate()
    for monitor in allMonitors() { monitor.fetcher(self, didFinishWithData: data, error: error) }
    serviceHooks?.fetcherDidStop(self, succeeded: error == nil)
    let postEnded: @Sendable () -> Void = {
      if transition.postRetryDelayStopped { self.post(.sessionFetcherRetryDelayStopped) }
      if transition.postStopped { self.post(.sessionFetcherStopped) }
    }
    let deliverCompletion: @Sendable () -> Void = {
      let run: (FetcherCompletionHandler?, Data?, (any Error)?) = self.storage.withLock { storage in
        if storage.callbacksSuppressed {
          let cancelled =
            storage.config.stopFetchingTriggersCompletionHandler || storage.forceCompletionOnStop
          return (cancelled ? completion : nil, nil, SessionFetcherError.cancelled)
        }
        return (completion, data, error)
      }
      if let handler = run.0 { self.invokeCompletion(handler, data: run.1, error: run.2) }
      self.markCompletionDelivered()
    }
    afterDecoratorsFinish(data: data, error: error) {
      guard let parser else {
        // One hop for the notifications and the completion, which follow each other on the queue.
        queue.async {
          postEnded()
          deliverCompletion()
        }
        return
      }
      queue.async(execute: postEnded)
      // Parse-then-complete: the parse runs off the callback queue, so a slow parse never blocks it.
      DispatchQueue.global(qos: .userInitiated).async {
        parser(data)
        queue.async(execute: deliverCompletion)
      }
    }
  }

  /// Runs a completion handler (or resumes an `async` caller's continuation) and then posts
  /// ``Foundation/NSNotification/Name/sessionFetcherCompletionInvoked``: the one place either
  /// happens, so that every completion is followed by exactly one post. Call on the callback queue.
  func invokeCompletion(_ handler: FetcherCompletionHandler, data: Data?, error: (any Error)?) {
    LockAudit.userBlock("the completion handler")
    handler(data, error)
    post(.sessionFetcherCompletionInvoked) {
      // Built as the notification's own type: a `[String: Any]` would be converted per post.
      var info: [AnyHashable: Any] = [:]
      if let data { info[SessionFetcher.completionDataKey] = data }
      if let error { info[SessionFetcher.completionErrorKey] = error }
      return info
    }
  }

  private func markCompletionDelivered() {
    let waiters = storage.withLock { storage -> NSCondition? in
      storage.completionDelivered = true
      storage.releaseBlocks()
      storage.retainedSelf = nil
      return storage.completionWaiters
    }
    // Taking the condition's lock orders the broadcast after a waiter's check of the flag above.
    waiters?.lock()
    waiters?.broadcast()
    waiters?.unlock()
  }

  // MARK: - Stop

  /// Stops the fetch: cancels the request or the pending retry delay, deletes any partial download,
  /// posts Stopped if Started was posted, and runs no completion — unless
  /// ``stopFetchingTriggersCompletionHandler`` is set, then exactly one completion with
  /// ``SessionFetcherError/cancelled``. Callbacks already queued for this fetcher do not run.
  /// Safe from any thread, at any time, any number of times.
  public func stopFetching() {
    stop(forceCompletion: false)
  }

  func stop(forceCompletion: Bool) {
    let stopping = storage.withLock { $0.stopped(forceCompletion: forceCompletion, at: Date()) }
    for continuation in stopping.progress { continuation.finish() }
    guard let transition = stopping.transition else { return }
    let (queue, completion) = (stopping.queue, stopping.completion)
    let (preparation, authorization) = storage.withLock { ($0.plan?.preparation, $0.plan?.authorization) }
    preparation?.cancel()
    authorization?.stop()
    Self.letGo(transition.task, invalidating: stopping.ownSession)
    if let spool = stopping.spool { try? FileManager.default.removeItem(at: spool) }
    stopping.partFiles.perform()
    if transition.from != .idle {
      for monitor in allMonitors() {
        monitor.fetcher(self, didFinishWithData: nil, error: SessionFetcherError.cancelled)
      }
      serviceHooks?.fetcherDidStop(self, succeeded: false)
    }
    if transition.postRetryDelayStopped { post(.sessionFetcherRetryDelayStopped, on: queue) }
    if transition.postStopped { post(.sessionFetcherStopped, on: queue) }
    let (resumeDataBlock, token) = storage.withLock { ($0.config.resumeDataBlock, $0.downloadResume.token) }
    if let resumeDataBlock, let token {
      queue.async {
        LockAudit.userBlock("resumeDataBlock")
        resumeDataBlock(token)
      }
    }
    afterDecoratorsFinish(data: nil, error: SessionFetcherError.cancelled) {
      queue.async {
        if let completion {
          self.invokeCompletion(completion, data: nil, error: SessionFetcherError.cancelled)
        }
        self.markCompletionDelivered()
      }
    }
  }

  /// Blocks until the completion handler has run (or the fetch was stopped), at most `timeout`
  /// seconds. Returns false on timeout.
  ///
  /// On the main thread (a command-line tool's top-level code before its first `await`), it runs
  /// the main run loop meanwhile, so callbacks on the main queue (the default ``callbackQueue``) are
  /// delivered. Called from a block that runs on the fetch's ``callbackQueue`` itself, the
  /// completion cannot run until this returns, and it writes a warning that says so on standard
  /// error: off the main thread (top-level code after an `await`, or `@MainActor` code, with the
  /// main queue as the callback queue; a block of a serial callback queue) it returns false at once;
  /// on the main thread inside a main-queue block, where the main run loop cannot run main-queue
  /// blocks, it returns false at the timeout. In `async` code, `await` ``beginFetch()`` instead;
  /// otherwise give the fetcher a ``callbackQueue`` of its own.
  @discardableResult
  public func waitForCompletion(timeout: TimeInterval) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    let queue = storage.withLock { $0.plan?.userCallbackQueue ?? $0.config.callbackQueue }
    if Thread.isMainThread {
      // The main thread counts as the main queue even outside a main-queue block, so whether the
      // run loop can deliver main-queue callbacks shows only by trying: a block queued now runs
      // unless this call is itself inside a main-queue block.
      let waitsForMainQueue = CallbackQueueMark.isMain(queue)
      let mainQueueRuns = Locked(false)
      if waitsForMainQueue { DispatchQueue.main.async { mainQueueRuns.withLock { $0 = true } } }
      while !isCompletionDelivered {
        if Date() >= deadline {
          if waitsForMainQueue && !mainQueueRuns.withLock({ $0 }) {
            Self.warnBlockedWait(onMainQueue: true)
          }
          return isCompletionDelivered
        }
        _ = RunLoop.current.run(mode: .default, before: min(deadline, Date().addingTimeInterval(0.01)))
      }
      return true
    }
    if CallbackQueueMark.isRunning(on: queue) {
      if isCompletionDelivered { return true }
      Self.warnBlockedWait(onMainQueue: CallbackQueueMark.isMain(queue))
      return false
    }
    // Made on first wait: most fetchers are never waited on.
    let waiters = storage.withLock { storage in
      if let existing = storage.completionWaiters { return existing }
      let condition = NSCondition()
      storage.completionWaiters = condition
      return condition
    }
    waiters.lock()
    defer { waiters.unlock() }
    while !isCompletionDelivered {
      if !waiters.wait(until: deadline) { return isCompletionDelivered }
    }
    return true
  }

  /// The text ``waitForCompletion(timeout:)`` writes when it is called on the queue that must run the
  /// completion.
  package static func blockedWaitWarning(onMainQueue: Bool) -> String {
    let queue = onMainQueue ? "the main queue" : "this fetcher's callbackQueue"
    let context =
      onMainQueue ? " (from a main-queue block, @MainActor code, or top-level code after an await)" : ""
    return "SessionFetcher warning: waitForCompletion(timeout:) was called on \(queue)\(context), which "
      + "must run the completion handler, so it cannot complete while this call blocks; it returns false. "
      + "In async code, use `try await fetcher.beginFetch()`; otherwise set fetcher.callbackQueue to "
      + "another queue."
  }

  private static func warnBlockedWait(onMainQueue: Bool) {
    FileHandle.standardError.write(Data((blockedWaitWarning(onMainQueue: onMainQueue) + "\n").utf8))
  }

  private var isCompletionDelivered: Bool {
    storage.withLock { $0.completionDelivered || $0.lifecycle.phase == .idle }
  }

  // MARK: - Delivery

  /// Runs a user callback on `queue` unless the fetcher was stopped, or its completion ran, before
  /// it runs.
  func deliver(on queue: DispatchQueue, _ body: @escaping @Sendable () -> Void) {
    queue.async {
      // Nothing after the completion: a timeout may end the fetch while the engine's thread is
      // between a chunk it handed over and that chunk's callbacks.
      guard !self.storage.withLock({ $0.callbacksSuppressed || $0.completionDelivered }) else { return }
      LockAudit.userBlock("a progress, data or metrics block")
      body()
    }
  }

  func post(_ name: Notification.Name, on queue: DispatchQueue) {
    // No hop at all for a fetch that posts nothing.
    guard isPostingNotifications else { return }
    queue.async { self.post(name) }
  }

  /// ``postsNotifications`` as the fetch began with it.
  private var isPostingNotifications: Bool {
    storage.withLock { $0.plan?.postsNotifications ?? $0.config.postsNotifications }
  }

  /// Posts `name` now, on the current thread (which must be the callback queue's), unless the
  /// fetch began with ``postsNotifications`` off. `userInfo` is built only for a post.
  func post(_ name: Notification.Name, userInfo: () -> [AnyHashable: Any]? = { nil }) {
    guard isPostingNotifications else { return }
    LockAudit.userBlock("an observer of \(name.rawValue)")
    NotificationCenter.default.post(name: name, object: self, userInfo: userInfo())
  }
}

/// An attempt that ended to be tried again, decided under the fetcher's lock by
/// `FetcherStorage.attemptEndedForRetry(after:)` or `.attemptEndedForImmediateRetry()`.
struct AttemptEnded {
  /// Post Stopped: the attempt's Started was posted.
  var postStopped: Bool
  /// The fetch's callback queue.
  var queue: DispatchQueue
  /// The retry count once the attempt ended (a delay's wait is kept only while it is unchanged).
  var retryCount: Int
}

/// A 416 answer to the `Range` of a kept part file: send `hop` again without a range once
/// `partFile` is deleted (see `FetcherStorage.restartWithoutRange()`).
struct RangeRestart {
  var hop: URLRequest
  var partFile: URL
}

extension FetcherStorage {
  /// The attempt failed and is tried again after `delay`: nil when it was not running (stopped
  /// meanwhile).
  mutating func attemptEndedForRetry(after delay: TimeInterval) -> AttemptEnded? {
    guard let plan, case .scheduleRetry(let postStopped) = lifecycle.attemptEndedForRetry() else {
      return nil
    }
    backoff?.recordRetry(after: delay)
    return AttemptEnded(postStopped: postStopped, queue: plan.callbackQueue, retryCount: timing.retryCount)
  }

  /// The attempt failed and is tried again at once (an authorization refresh): nil when it was not
  /// running.
  mutating func attemptEndedForImmediateRetry() -> AttemptEnded? {
    guard let plan, case .retryNow(let postStopped) = lifecycle.attemptEndedForImmediateRetry() else {
      return nil
    }
    timing.retryCount += 1
    return AttemptEnded(postStopped: postStopped, queue: plan.callbackQueue, retryCount: timing.retryCount)
  }

  /// Drops the kept part file a 416 refused, once: nil when there is none to drop (or no hop).
  mutating func restartWithoutRange() -> RangeRestart? {
    guard let hop = lifecycle.exchange?.hopRequest, let partFile = DownloadResume.dropForRestart(&self) else {
      return nil
    }
    return RangeRestart(hop: hop, partFile: partFile)
  }
}

/// What ending the fetch requires after the fetcher's lock: decided under it by
/// `FetcherStorage.fetchEnded(data:error:at:)` or `FetcherStorage.stopped(forceCompletion:at:)`.
struct FetchEnding<Transition> {
  /// The machine's answer (`FetcherLifecycle.Finish` or `.Stop`): what to post, the task to let go of.
  var transition: Transition
  /// The fetch's callback queue.
  var queue: DispatchQueue
  /// The completion to deliver (a stop's: only when it completes as cancelled).
  var completion: FetcherCompletionHandler?
  /// The parse step of a successful parse-then-complete fetch.
  var parser: SuccessParser?
  /// The session the fetch made for itself, to invalidate.
  var ownSession: FetcherSession?
  /// The part files to close, park or delete.
  var partFiles: PartFileCleanup
  /// The progress streams to finish.
  var progress: [AsyncStream<TransferProgress>.Continuation]
  /// The spooled body to delete.
  var spool: URL?
}

extension FetcherStorage {
  /// The fetch ended with `data` or `error` at `now`: records the result, disarms the timeout and
  /// the retry delay, and takes what the caller lets go of after the lock. Nil when it had ended
  /// or was stopped already.
  mutating func fetchEnded(data: Data?, error: (any Error)?, at now: Date)
    -> FetchEnding<FetcherLifecycle.Finish>?
  {
    guard case .deliver(let finish) = lifecycle.finish() else { return nil }
    let parser = error == nil ? successParser : nil
    successParser = nil
    timing.endDate = now
    finalError = error
    let sink = lifecycle.exchange?.sink ?? .memory
    if error == nil, sink == .memory || sink == .redirect {
      downloadedData = data
    } else if let data, sink == .memory {
      downloadedData = data
    }
    SessionFetcher.disarmTimeout(&self)
    retryDelay?.cancel()
    retryDelay = nil
    let partFiles = DownloadResume.fetchEnded(&self, succeeded: error == nil)
    return FetchEnding(
      transition: finish, queue: plan?.callbackQueue ?? config.callbackQueue, completion: completion,
      parser: parser, ownSession: plan?.ownsSession == true ? plan?.session : nil, partFiles: partFiles,
      progress: takeProgressContinuations(), spool: takeBodySpoolFile())
  }

  /// `stopFetching()` at `now` (`forceCompletion`: the caller needs a completion with `.cancelled`
  /// whatever ``SessionFetcher/stopFetchingTriggersCompletionHandler`` says). Suppresses the
  /// callbacks already queued; `transition` is nil when the fetch had ended or was stopped already
  /// (the progress streams are finished all the same).
  mutating func stopped(forceCompletion: Bool, at now: Date) -> FetchEnding<FetcherLifecycle.Stop?> {
    if forceCompletion { forceCompletionOnStop = true }
    callbacksSuppressed = true
    let queue = plan?.callbackQueue ?? config.callbackQueue
    guard case .stop(let stop) = lifecycle.stop() else {
      return FetchEnding(
        transition: nil, queue: queue, completion: nil, parser: nil, ownSession: nil,
        partFiles: PartFileCleanup(), progress: [], spool: nil)
    }
    timing.endDate = now
    finalError = SessionFetcherError.cancelled
    SessionFetcher.disarmTimeout(&self)
    retryDelay?.cancel()
    retryDelay = nil
    let partFiles = DownloadResume.fetchEnded(&self, succeeded: false)
    let notify = config.stopFetchingTriggersCompletionHandler || forceCompletionOnStop
    return FetchEnding(
      transition: stop, queue: queue, completion: stop.mayCompleteAsCancelled && notify ? completion : nil,
      parser: nil, ownSession: plan?.ownsSession == true ? plan?.session : nil, partFiles: partFiles,
      progress: takeProgressContinuations(), spool: takeBodySpoolFile())
  }
}
