import Foundation

/// What a ``SessionFetcher/didReceiveResponseBlock`` decides about a response head.
public enum ResponseDisposition: Sendable {
  /// Go on: the body is read and delivered as usual.
  case allow
  /// Read no more of the response: the fetch completes with `URLError(.cancelled)`.
  case cancel
}

/// A final response head held for ``SessionFetcher/didReceiveResponseBlock``: the body bytes and
/// the end of the exchange that arrive meanwhile wait here, in order, until it decides.
struct ResponseGate {
  /// The hop whose head waits.
  var hop: UInt64
  /// The block allowed the response: what is held is being handed on.
  var isReleasing = false
  var held: [Data] = []
  /// The exchange ended while held, with this transport error (nil: none).
  var ended = false
  var endError: (any Error)?
  /// The stream consumer to hand the head to once allowed (``SessionFetcher/beginStreaming(highWaterMark:lowWaterMark:)``).
  var streamConsumer: (any FetcherStreamConsumer)?

  /// Holds the end of the exchange (under the fetcher's lock) while the head waits; false when
  /// nothing waits, or the fetcher ended the exchange itself (a timeout, a failure), which drops
  /// the gate.
  static func holdEnd(of storage: inout FetcherStorage, error: (any Error)?) -> Bool {
    guard var gate = storage.lifecycle.current.responseGate else { return false }
    guard storage.lifecycle.current.cancelReason == nil else {
      storage.lifecycle.current.responseGate = nil
      return false
    }
    guard !gate.ended else { return false }
    gate.ended = true
    gate.endError = error
    storage.lifecycle.current.responseGate = gate
    if !gate.isReleasing {
      // The fetch's timeouts still cover the wait for the block (see `checkTimeout`).
      storage.lifecycle.current.pendingHop = gate.hop
    }
    return true
  }
}

extension SessionFetcher {
  /// Decides about a final response head; see ``didReceiveResponseBlock``.
  public typealias DidReceiveResponseBlock = @Sendable (URLResponse) async -> ResponseDisposition

  /// Called once for the final response head of the fetch, before any byte of its body is
  /// delivered (to the completion, ``accumulateDataBlock``, a download file or a stream): not for a
  /// redirect that is followed, nor for a 401 that is answered with a credential (see
  /// ``challengeBlock``). `.allow` goes on; `.cancel` reads no more of the body and completes the
  /// fetch with `URLError(.cancelled)` (no retry).
  ///
  /// A 3xx that is not followed is the final response: a 304 or 300, a redirect when
  /// ``maximumRedirects`` is 0, one that ``willRedirectBlock`` declines or that has no `Location`.
  /// Such a redirect's body is read before the fetcher knows it is final (it is small, and the
  /// block is asked before the completion sees it). A fetch that ends with
  /// `URLError(.httpTooManyRedirects)` has no final response: the block is not called.
  ///
  /// Runs off the callback queue; the fetch's timeouts keep running while it decides. Stubbed
  /// responses (``testBlock``) reach it too.
  ///
  /// ```swift
  /// fetcher.didReceiveResponseBlock = { response in
  ///   response.mimeType == "application/json" ? .allow : .cancel
  /// }
  /// ```
  public var didReceiveResponseBlock: DidReceiveResponseBlock? {
    get { self[config: \.didReceiveResponseBlock] }
    set { self[config: \.didReceiveResponseBlock] = newValue }
  }

  /// Asks the block about `response`, the head of `hop`, then goes on or cancels.
  func askAboutResponse(_ response: URLResponse, hop: UInt64, block: @escaping DidReceiveResponseBlock) {
    Task {
      LockAudit.userBlock("didReceiveResponseBlock")
      let disposition = await block(response)
      self.responseDecided(disposition, hop: hop)
    }
  }

  /// Asks the block about a final response whose head it has not seen yet (a 401 that no credential
  /// answered, a 3xx that is not followed), then fails the attempt with it, or completes with
  /// `URLError(.cancelled)`.
  func askAboutRefusal(_ refusal: AttemptFailure) {
    let block = storage.withLock { $0.config.didReceiveResponseBlock }
    guard let block, let response = refusal.response else {
      attemptFailed(refusal)
      return
    }
    Task {
      LockAudit.userBlock("didReceiveResponseBlock")
      switch await block(response) {
      case .allow:
        self.attemptFailed(refusal)
      case .cancel:
        self.finish(data: nil, error: Self.cancelledByDisposition(url: response.url))
      }
    }
  }

  private func responseDecided(_ disposition: ResponseDisposition, hop: UInt64) {
    switch disposition {
    case .cancel:
      var metrics: MetricsDelivery?
      var task: (any EngineTask)?
      let url: URL?? = storage.withLock { storage in
        guard storage.lifecycle.phase == .running, storage.lifecycle.current.responseGate?.hop == hop else {
          return nil
        }
        storage.lifecycle.current.responseGate = nil
        if storage.lifecycle.current.pendingHop == hop { storage.lifecycle.current.pendingHop = nil }
        // Let go of under the lock that ends the gate: a chunk arriving before `finish` is not
        // the current task's any more, so it is never delivered.
        task = storage.lifecycle.detachTask().task
        metrics = exchangeEnded(&storage, error: nil)
        // The fetcher ends the exchange itself: an end that comes in before `finish` below (a
        // stubbed response's, which has no task to let go of) must not complete the fetch as a
        // success once the gate is gone.
        storage.lifecycle.current.cancelReason = .stopped
        return .some(storage.lifecycle.current.request?.url)
      }
      guard let url else { return }
      metrics?.deliver(self)
      finish(data: nil, error: Self.cancelledByDisposition(url: url))
      Self.letGo(task)
    case .allow:
      let consumer: (any FetcherStreamConsumer)?? = storage.withLock { storage in
        guard storage.lifecycle.phase == .running, storage.lifecycle.current.responseGate?.hop == hop else {
          return nil
        }
        storage.lifecycle.current.responseGate?.isReleasing = true
        return .some(storage.lifecycle.current.responseGate?.streamConsumer)
      }
      guard let consumer else { return }
      if let consumer, let head = storage.withLock({ $0.lifecycle.exchange?.response }) {
        consumer.fetcher(self, didReceiveStreamResponse: head)
      }
      releaseHeld(hop: hop)
    }
  }

  /// Hands on what arrived while the head waited, in order (more may arrive meanwhile), then the
  /// end of the exchange if it came.
  private func releaseHeld(hop: UInt64) {
    enum Step {
      case data(Data)
      case end((any Error)?)
      case done
    }
    while true {
      let step: Step = storage.withLock { storage in
        guard storage.lifecycle.phase == .running, var gate = storage.lifecycle.current.responseGate,
          gate.hop == hop
        else {
          return .done
        }
        if !gate.held.isEmpty {
          let data = gate.held.removeFirst()
          storage.lifecycle.current.responseGate = gate
          return .data(data)
        }
        storage.lifecycle.current.responseGate = nil
        guard gate.ended else { return .done }
        if storage.lifecycle.current.pendingHop == hop { storage.lifecycle.current.pendingHop = nil }
        return .end(gate.endError)
      }
      switch step {
      case .data(let data):
        receive(data: data, from: nil, bypassingGate: true)
      case .end(let error):
        completeHop(error: error)
        return
      case .done:
        return
      }
    }
  }

  static func cancelledByDisposition(url: URL?) -> URLError {
    var info: [String: Any] = [NSLocalizedDescriptionKey: "cancelled"]
    if let url { info[NSURLErrorFailingURLErrorKey] = url }
    return URLError(.cancelled, userInfo: info)
  }
}
