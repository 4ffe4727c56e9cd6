import Foundation

// The end of one hop (a request on the wire): a challenge, a redirect, the next stream window, a
// success to check against its status, or a failed attempt.
extension SessionFetcher {
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
        var error = bareTimeout ? SessionFetcher.timedOutError(url: url) : transportError
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
        defer { storage.run.partFile = nil }
        return storage.run.partFile
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
}

/// A 416 answer to the `Range` of a kept part file: send `hop` again without a range once
/// `partFile` is deleted (see `FetcherStorage.restartWithoutRange()`).
struct RangeRestartAction {
  var hop: URLRequest
  var partFile: URL
}

extension FetcherStorage {
  /// Drops the kept part file a 416 refused, once: nil when there is none to drop (or no hop).
  mutating func restartWithoutRange() -> RangeRestartAction? {
    guard let hop = lifecycle.exchange?.hopRequest, let partFile = DownloadResume.dropForRestart(&self) else {
      return nil
    }
    return RangeRestartAction(hop: hop, partFile: partFile)
  }
}
