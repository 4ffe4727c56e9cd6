import Foundation

/// The core's side of streaming: attaching a consumer, pausing and resuming the transfer.
extension SessionFetcher {
  /// Makes `consumer` receive the body of successful responses. Only before the fetch begins.
  /// `windowLength`: where pausing means continuing with a Range request (the URLSession engine on
  /// Linux), a GET asks for the body in Range windows of this many bytes (see ``StreamWindows``);
  /// nil asks for it whole. The fetch drops the windows when it begins on an engine that can pause.
  package func attachStreamConsumer(_ consumer: any FetcherStreamConsumer, windowLength: Int64? = nil) {
    storage.withLock { storage in
      guard storage.lifecycle.phase == .idle else { return }
      storage.streamConsumer = WeakStreamConsumer(consumer: consumer)
      if let windowLength, windowLength > 0 {
        storage.streamWindowLength = windowLength
      }
    }
  }

  /// Whether the fetch's engine wants a stream's chunks copied on arrival (see
  /// ``EngineSession/streamBuffersCopyChunks``); false before the fetch begins.
  var streamBuffersCopyChunks: Bool {
    storage.withLock { $0.plan?.session.streamBuffersCopyChunks ?? false }
  }

  /// `consumer`'s buffer is full: stop reading from the network (see ``StreamPausing``), unless the
  /// consumer has drained meanwhile (its resume then found nothing paused: a pause made now would
  /// never end).
  func pauseStreamTransfer(for consumer: any FetcherStreamConsumer) {
    enum Pause {
      case none
      case suspended
      case cancel(any EngineTask)
    }
    let pause: Pause = storage.withLock { storage in
      guard storage.lifecycle.phase == .running, case let exchange = storage.lifecycle.current,
        exchange.sink == .stream, exchange.cancelReason == nil, !exchange.isSuspended,
        let task = exchange.task, let plan = storage.plan, consumer.wantsTransferPaused
      else { return .none }
      let suspends: Bool
      switch plan.pausing {
      case .suspendTask:
        suspends = true
      case .continueWithRange, .continueWithRangeElseSuspendTask:
        let continuable = storage.run.stream.continuationValidator(method: plan.baseRequest.httpMethod) != nil
        if continuable {
          suspends = false
        } else if plan.pausing == .continueWithRangeElseSuspendTask {
          suspends = true
        } else {
          return .none
        }
      }
      if suspends {
        exchange.isSuspended = true
      } else {
        // Detached at once: whatever the cancelled task still delivers is not current any more
        // (the continuation asks for those bytes again). The task is `task`, cancelled below.
        _ = storage.lifecycle.cancelTask(.pausedForBackpressure)
      }
      // A paused transfer is not idle: its timeout starts again when it resumes.
      Self.disarmTimeout(&storage)
      guard suspends else { return .cancel(task) }
      // Asked under the lock (it returns at once on every engine): a resume decided right after
      // this one must reach the engine after it, or the transfer would stay paused for good.
      task.suspend()
      return .suspended
    }
    switch pause {
    case .none, .suspended: break
    case .cancel(let task): Self.letGo(task)
    }
  }

  /// The consumer drained its buffer, or a download's window is written: go on reading (with the
  /// next Range window where there are windows). Does nothing unless the transfer is paused.
  package func resumeStreamTransfer() {
    enum Resume {
      case none
      case resumed(TimeInterval)
      case continuation(URLRequest)
    }
    let resume: Resume = storage.withLock { storage in
      guard storage.lifecycle.phase == .running, let plan = storage.plan else { return .none }
      storage.lifecycle.current.lastActivity = plan.clock.now
      if storage.lifecycle.current.isSuspended {
        storage.lifecycle.current.isSuspended = false
        guard let task = storage.lifecycle.current.task else { return .none }
        // Under the lock, after the suspension it ends (see `pauseStreamTransfer(for:)`).
        task.resume()
        return .resumed(min(plan.idleTimeout, plan.resourceTimeout ?? .infinity))
      }
      // A pause, or the end of a Range window (see ``StreamWindows``).
      guard case .pausedForBackpressure? = storage.lifecycle.current.cancelReason,
        let hop = storage.lifecycle.current.hopRequest,
        let validator = storage.run.stream.continuationValidator(method: plan.baseRequest.httpMethod)
      else { return .none }
      // Once only: a second call finds nothing paused.
      storage.lifecycle.current.cancelReason = nil
      storage.run.stream.isContinuation = true
      // In windows, `sendHop` sets the next window's Range on the plain hop request.
      guard storage.run.stream.windowLength == nil else { return .continuation(hop) }
      return .continuation(
        StreamPausing.continuationRequest(
          hop, offset: storage.run.stream.deliveredBytes, validator: validator))
    }
    switch resume {
    case .none:
      break
    case .resumed(let timeout):
      scheduleTimeout(after: timeout)
    case .continuation(let request):
      sendHop(request, body: .none)
    }
  }
}
