import Foundation

// The end of a fetch with a result: notifications, the completion, and what is let go of.
extension SessionFetcher {
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
        if storage.lifecycle.isStoppedBeforeDelivery {
          let cancelled =
            storage.config.stopFetchingTriggersCompletionHandler || storage.run.forceCompletionOnStop
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

  /// Call from the block on the fetch's callback queue that delivered (or dropped) its completion:
  /// that queue may go to the next fetch (see `SerialCallbackQueue`).
  func markCompletionDelivered() {
    let (waiters, queues) = storage.withLock { storage -> (NSCondition?, (DispatchQueue, DispatchQueue)?) in
      // Given back once: a queue two fetches had at once would mix their callbacks.
      let queues =
        storage.lifecycle.completionDelivered()
        ? storage.plan.map { ($0.callbackQueue, $0.userCallbackQueue) } : nil
      storage.releaseBlocks()
      storage.run.retainedSelf = nil
      return (storage.run.completionWaiters, queues)
    }
    if let (serial, target) = queues { SerialCallbackQueue.reuse(serial, targeting: target) }
    // Taking the condition's lock orders the broadcast after a waiter's check of the flag above.
    waiters?.lock()
    waiters?.broadcast()
    waiters?.unlock()
  }
}

/// What ending the fetch requires after the fetcher's lock: decided under it by
/// `FetcherStorage.fetchEnded(data:error:at:)` or `FetcherStorage.stopped(forceCompletion:at:)`.
struct FetchEndAction<Transition> {
  /// The machine's answer (`FetcherLifecycle.Finish` or `.Stop`): what to post, the task to let go of.
  var transition: Transition
  /// The fetch's callback queue.
  var queue: DispatchQueue
  /// The completion to deliver (a stop's: only when it completes as cancelled).
  var completion: FetcherCompletionHandler?
  /// The parse step of a successful parse-then-complete fetch.
  var parser: SuccessParser?
  /// The session the fetch made for itself, to invalidate.
  var ownSession: SharedSession?
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
    -> FetchEndAction<FetcherLifecycle.Finish>?
  {
    guard case .deliver(let finish) = lifecycle.finish() else { return nil }
    let parser = error == nil ? successParser : nil
    successParser = nil
    let run = lifecycle.run
    run.timing.endDate = now
    run.finalError = error
    let sink = lifecycle.exchange?.sink ?? .memory
    if error == nil, sink == .memory || sink == .redirect {
      run.downloadedData = data
    } else if let data, sink == .memory {
      run.downloadedData = data
    }
    SessionFetcher.disarmTimeout(&self)
    finish.retryDelay?.cancel(on: clock)
    let partFiles = DownloadResume.fetchEnded(&self, succeeded: error == nil)
    return FetchEndAction(
      transition: finish, queue: plan?.callbackQueue ?? config.callbackQueue, completion: completion,
      parser: parser, ownSession: plan?.ownsSession == true ? plan?.session : nil, partFiles: partFiles,
      progress: takeProgressContinuations(), spool: takeBodySpoolFile())
  }
}
