import Foundation

// `stopFetching()` and the blocking wait for a completion.
extension SessionFetcher {
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
    let (resumeDataBlock, token) = storage.withLock {
      ($0.config.resumeDataBlock, $0.run.downloadResume.token)
    }
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
    // Nil before begin: there is nothing to wait for.
    let waiters = storage.withLock { storage -> NSCondition? in
      guard let run = storage.lifecycle.begunRun else { return nil }
      if let existing = run.completionWaiters { return existing }
      let condition = NSCondition()
      run.completionWaiters = condition
      return condition
    }
    guard let waiters else { return true }
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
}

extension FetcherStorage {
  /// `stopFetching()` at `now` (`forceCompletion`: the caller needs a completion with `.cancelled`
  /// whatever ``SessionFetcher/stopFetchingTriggersCompletionHandler`` says). Suppresses the
  /// callbacks already queued; `transition` is nil when the fetch had ended or was stopped already
  /// (the progress streams are finished all the same).
  mutating func stopped(forceCompletion: Bool, at now: Date) -> FetchEndAction<FetcherLifecycle.Stop?> {
    let queue = plan?.callbackQueue ?? config.callbackQueue
    let action = lifecycle.stop()
    // Every state after a stop has a run: one before begin made it.
    let run = lifecycle.run
    if forceCompletion { run.forceCompletionOnStop = true }
    guard case .stop(let stop) = action else {
      return FetchEndAction(
        transition: nil, queue: queue, completion: nil, parser: nil, ownSession: nil,
        partFiles: PartFileCleanup(), progress: [], spool: nil)
    }
    if stop.from == .idle { startRun(run) }
    run.timing.endDate = now
    run.finalError = SessionFetcherError.cancelled
    SessionFetcher.disarmTimeout(&self)
    stop.retryDelay?.cancel(on: clock)
    let partFiles = DownloadResume.fetchEnded(&self, succeeded: false)
    let notify = config.stopFetchingTriggersCompletionHandler || run.forceCompletionOnStop
    return FetchEndAction(
      transition: stop, queue: queue, completion: stop.mayCompleteAsCancelled && notify ? completion : nil,
      parser: nil, ownSession: plan?.ownsSession == true ? plan?.session : nil, partFiles: partFiles,
      progress: takeProgressContinuations(), spool: takeBodySpoolFile())
  }
}
