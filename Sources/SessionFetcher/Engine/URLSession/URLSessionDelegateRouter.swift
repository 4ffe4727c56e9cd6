import Foundation

/// The one delegate of a ``URLSessionEngineSession``'s URLSession: routes each callback, by task
/// identifier, to the ``SessionTaskHandler`` registered for that task, naming the task as the
/// handler knows it (its ``URLSessionEngineTask``, never the URLSession task).
///
/// `@unchecked Sendable`: `handlers` and `trimRequests` are only touched through their `Locked`
/// wrappers.
package final class URLSessionDelegateRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  /// A task's handler, the task as the handler knows it, and the body bytes the task has moved so
  /// far (see `HeapReleaseTrim`).
  private struct Registration {
    let handler: any SessionTaskHandler
    let task: URLSessionEngineTask
    var bytesMoved: Int64
  }

  private let handlers = Locked<[Int: Registration]>([:])
  /// How many of this session's tasks have asked `HeapReleaseTrim` for a trim.
  private let trimRequests = Locked(0)
  private let onInvalidate: @Sendable () -> Void

  /// The process's ``CancelledRedirectGuard``: every URLSession task the library cancels is marked in it
  /// first, and every redirect answer goes through it.
  package static let redirectGate = CancelledRedirectGuard<URLSessionTask>()

  package init(onInvalidate: @escaping @Sendable () -> Void) {
    self.onInvalidate = onInvalidate
  }

  deinit {
    Self.redirectGate.released(ObjectIdentifier(self))
  }

  /// Routes the callbacks of `task` to `handler`, as events of `engineTask`; `bodyLength` is the
  /// length of a body sent from memory (FoundationNetworking copies it whole, however much of it is
  /// sent).
  package func register(
    _ handler: any SessionTaskHandler, as engineTask: URLSessionEngineTask, for task: URLSessionTask,
    bodyLength: Int = 0
  ) {
    let registration = Registration(handler: handler, task: engineTask, bytesMoved: Int64(bodyLength))
    handlers.withLock { $0[task.taskIdentifier] = registration }
  }

  /// `task` was resumed on the engine's task queue: its handler hears that its exchange started.
  func taskDidStart(_ task: URLSessionTask) {
    guard let registration = registration(for: task) else { return }
    registration.handler.taskDidStart(registration.task)
  }

  /// How many of this session's tasks ended having moved at least ``HeapReleaseTrim/largeBodyLength``
  /// bytes and so asked ``HeapReleaseTrim`` for a trim (none where the allocator cannot be trimmed).
  /// Counted before the task's handler hears that it ended.
  package var arenaTrimRequests: Int { trimRequests.withLock { $0 } }

  /// Ends `task` for its handler as cancelled, unless its completion was reported already: for a
  /// task cancelled before it was ever resumed, whose completion FoundationNetworking may never
  /// report (6.3.1 did not, for such a task cancelled by `invalidateAndCancel()`).
  package func reportCancelledUnlessReported(_ task: URLSessionTask) {
    guard let registration = handlers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else {
      return
    }
    Self.reportCancelled(task, registration)
  }

  /// ``reportCancelledUnlessReported(_:)`` for every task never resumed (after the session's
  /// `invalidateAndCancel()`).
  package func reportUnresumedTasksCancelled() {
    let unresumed = handlers.withLock { handlers -> [(URLSessionTask, Registration)] in
      var unresumed: [(URLSessionTask, Registration)] = []
      for (identifier, registration) in handlers where !registration.task.wasResumed {
        guard let task = registration.task.urlSessionTask else { continue }
        handlers[identifier] = nil
        unresumed.append((task, registration))
      }
      return unresumed
    }
    for (task, registration) in unresumed { Self.reportCancelled(task, registration) }
  }

  private static func reportCancelled(_ task: URLSessionTask, _ registration: Registration) {
    redirectGate.completed(task)
    let url = task.originalRequest?.url
    let error = URLError(.cancelled, userInfo: url.map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:])
    // Off the engine's queue: the handler's work holds up no other task.
    DispatchQueue.global().async { registration.handler.task(registration.task, didCompleteWithError: error) }
  }

  private func registration(for task: URLSessionTask) -> Registration? {
    handlers.withLock { $0[task.taskIdentifier] }
  }

  // MARK: URLSessionDataDelegate

  package func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    if let registration = registration(for: dataTask) {
      registration.handler.task(
        registration.task, didReceiveHead: ResponseHead(IPv6LiteralHost.decoded(response)))
    }
    // FoundationNetworking ignores the disposition (corelibs #3236): the fetcher cancels tasks itself.
    completionHandler(.allow)
  }

  package func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let registration = handlers.withLock { handlers -> Registration? in
      handlers[dataTask.taskIdentifier]?.bytesMoved += Int64(data.count)
      return handlers[dataTask.taskIdentifier]
    }
    guard let registration else { return }
    registration.handler.task(registration.task, didReceive: data)
  }

  package func urlSession(
    _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
    totalBytesSent: Int64, totalBytesExpectedToSend: Int64
  ) {
    guard let registration = registration(for: task) else { return }
    registration.handler.task(
      registration.task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
      totalBytesExpectedToSend: totalBytesExpectedToSend)
  }

  package func urlSession(
    _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    // The URLs as the caller wrote them (see `IPv6LiteralHost`). The fetcher refuses every redirect
    // and sends the next hop itself, so no answer needs respelling.
    let response = IPv6LiteralHost.decoded(response) as? HTTPURLResponse ?? response
    let answer = registration(for: task).flatMap {
      $0.handler.task($0.task, willRedirect: response, to: IPv6LiteralHost.decoded(request))
    }
    // Never to a task the library has cancelled meanwhile: that kills the process (see the gate).
    #if FOUNDATION_NETWORKING
      Self.redirectGate.answer(task, session: self) { completionHandler(answer) }
    #else
      // Apple's URLSession takes an answer that comes after a cancellation.
      completionHandler(answer)
    #endif
  }

  package func urlSession(
    _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
  ) {
    guard let registration = registration(for: task) else {
      // Never `.performDefaultHandling` for HTTP auth: it hangs forever on 6.3.1 (corelibs #5456).
      return completionHandler(.cancelAuthenticationChallenge, nil)
    }
    let (disposition, credential) = registration.handler.task(registration.task, didReceive: challenge)
    completionHandler(disposition, credential)
  }

  package func urlSession(
    _ session: URLSession, task: URLSessionTask,
    needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
  ) {
    let stream = registration(for: task).flatMap { registration in
      registration.handler.taskNeedsNewBodyStream(registration.task).map {
        registration.task.urlSessionBodyStream($0, length: registration.task.bodyStreamLength)
      }
    }
    completionHandler(stream)
  }

  package func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
    let registration = handlers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    Self.redirectGate.completed(task)
    var mapped = Self.foundationNetworkingCorrection(of: error, for: task)
    // Counted here: FoundationNetworking's own counters may still be 0 when the task completes.
    if HeapReleaseTrim.taskEnded(movingBytes: max(registration?.bytesMoved ?? 0, task.countOfBytesSent)) {
      trimRequests.withLock { $0 += 1 }
    }
    guard let registration else { return }
    // A body stream that failed or was not its length (Apple platforms, see `BodyStreamPump`).
    if let bodyFailure = registration.task.bodyFailure { mapped = bodyFailure }
    registration.handler.task(
      registration.task, didCompleteWithError: (mapped ?? error).map(IPv6LiteralHost.decoded))
  }

  /// The error FoundationNetworking should have given for a completed task (nil: keep `error`), once
  /// its response-head gate is freed: a head `ResponseHeadGuard` refused is `.badServerResponse`
  /// (not libcurl's "Failed writing header"), and libcurl's failures it reports as -1 or apart from
  /// Apple get Apple's code (see `FoundationNetworkingErrors`), a body libcurl could not decode
  /// included. Apple's URLSession needs neither.
  private static func foundationNetworkingCorrection(of error: Error?, for task: URLSessionTask) -> URLError?
  {
    #if FOUNDATION_NETWORKING
      let refusedFraming = ResponseHeadGuard.taskCompleted(task)
      if refusedFraming, let failed = error as? URLError {
        let info = failed.userInfo.filter {
          $0.key != NSLocalizedDescriptionKey && $0.key != NSUnderlyingErrorKey
        }
        return URLError(.badServerResponse, userInfo: info)
      }
      let bodyIsEncoded = ContentDecoding.isEncoded(task.response)
      return (error as? URLError).flatMap {
        FoundationNetworkingErrors.appleError($0, bodyIsEncoded: bodyIsEncoded)
      }
    #else
      return nil
    #endif
  }

  #if !FOUNDATION_NETWORKING
    /// Apple's URLSession hands over a task's metrics before its completion (FoundationNetworking
    /// never does): they become the engine task's ``URLSessionEngineTask/transferMetrics``.
    package func urlSession(
      _ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics
    ) {
      registration(for: task)?.task.collected(
        TransferMetrics(
          urlSessionTransactions: URLSessionTransaction.all(of: metrics), taskInterval: metrics.taskInterval))
    }
  #endif

  package func urlSession(_ session: URLSession, didBecomeInvalidWithError error: Error?) {
    onInvalidate()
  }
}
