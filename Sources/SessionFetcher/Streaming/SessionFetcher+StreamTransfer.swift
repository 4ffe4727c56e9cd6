import Foundation

/// The core's side of streaming: attaching a consumer, pausing and resuming the transfer.
extension SessionFetcher {
  /// Makes `consumer` receive the body of successful responses. Only before the fetch begins.
  package func attachStreamConsumer(_ consumer: any FetcherStreamConsumer) {
    storage.withLock { storage in
      guard storage.lifecycle.state == .idle else { return }
      storage.stream.consumer = WeakStreamConsumer(consumer: consumer)
    }
  }

  /// The consumer's buffer is full: stop reading from the network (see ``StreamPausing``).
  func pauseStreamTransfer() {
    enum Pause {
      case none
      case suspend(URLSessionTask)
      case cancel(URLSessionTask)
    }
    let pause: Pause = storage.withLock { storage in
      guard storage.lifecycle.state == .running, storage.sink == .stream, storage.cancelReason == nil,
        !storage.stream.isSuspended, let task = storage.task, let plan = storage.plan
      else { return .none }
      switch StreamPausing.method {
      case .suspendTask:
        storage.stream.isSuspended = true
      case .continueWithRange:
        guard let head = storage.stream.head,
          StreamPausing.continuationValidator(method: plan.baseRequest.httpMethod ?? "GET", response: head)
            != nil
        else {
          storage.stream.pauseUnavailable = true
          return .none
        }
        storage.cancelReason = .pausedForBackpressure
        // Detached at once: whatever the cancelled task still delivers is not current any more
        // (the continuation asks for those bytes again).
        storage.task = nil
      }
      // A paused transfer is not idle: its timeout starts again when it resumes.
      storage.timeoutWork?.cancel()
      storage.timeoutWork = nil
      return StreamPausing.method == .suspendTask ? .suspend(task) : .cancel(task)
    }
    switch pause {
    case .none: break
    case .suspend(let task): task.suspend()
    case .cancel(let task): task.cancel()
    }
  }

  /// The consumer drained its buffer: go on reading. Does nothing unless the transfer is paused.
  package func resumeStreamTransfer() {
    enum Resume {
      case none
      case task(URLSessionTask, TimeInterval)
      case continuation(URLRequest)
    }
    let resume: Resume = storage.withLock { storage in
      guard storage.lifecycle.state == .running, let plan = storage.plan else { return .none }
      storage.lastActivity = Date()
      if storage.stream.isSuspended {
        storage.stream.isSuspended = false
        guard let task = storage.task else { return .none }
        return .task(task, min(plan.idleTimeout, plan.resourceTimeout ?? .infinity))
      }
      guard case .pausedForBackpressure? = storage.cancelReason, let hop = storage.hopRequest,
        let head = storage.stream.head,
        let validator = StreamPausing.continuationValidator(
          method: plan.baseRequest.httpMethod ?? "GET", response: head)
      else { return .none }
      storage.stream.isContinuation = true
      return .continuation(
        StreamPausing.continuationRequest(hop, offset: storage.stream.deliveredBytes, validator: validator))
    }
    switch resume {
    case .none:
      break
    case .task(let task, let timeout):
      scheduleTimeout(after: timeout)
      task.resume()
    case .continuation(let request):
      sendHop(request, body: .none)
    }
  }
}
