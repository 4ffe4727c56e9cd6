import Foundation

/// The one delegate of a ``URLSessionEngineSession``'s URLSession: routes each callback, by task
/// identifier, to the ``SessionTaskHandler`` registered for that task.
///
/// `@unchecked Sendable`: `handlers` is only touched through its `Locked` wrapper.
package final class SessionDispatcher: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  private let handlers = Locked<[Int: any SessionTaskHandler]>([:])
  private let onInvalidate: @Sendable () -> Void

  /// The process's ``RedirectAnswerGate``: every URLSession task the library cancels is marked in it
  /// first, and every redirect answer goes through it.
  package static let redirectGate = RedirectAnswerGate<URLSessionTask>()

  package init(onInvalidate: @escaping @Sendable () -> Void) {
    self.onInvalidate = onInvalidate
  }

  deinit {
    Self.redirectGate.released(ObjectIdentifier(self))
  }

  package func register(_ handler: any SessionTaskHandler, for task: URLSessionTask) {
    handlers.withLock { $0[task.taskIdentifier] = handler }
  }

  package func unregister(_ task: URLSessionTask) {
    handlers.withLock { _ = $0.removeValue(forKey: task.taskIdentifier) }
  }

  package var handlerCount: Int { handlers.withLock { $0.count } }

  private func handler(for task: URLSessionTask) -> (any SessionTaskHandler)? {
    handlers.withLock { $0[task.taskIdentifier] }
  }

  // MARK: URLSessionDataDelegate

  package func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    handler(for: dataTask)?.task(dataTask, didReceiveHead: ResponseHead(response))
    // FoundationNetworking ignores the disposition (corelibs #3236): the fetcher cancels tasks itself.
    completionHandler(.allow)
  }

  package func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    handler(for: dataTask)?.task(dataTask, didReceive: data)
  }

  package func urlSession(
    _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
    totalBytesSent: Int64, totalBytesExpectedToSend: Int64
  ) {
    handler(for: task)?.task(
      task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
      totalBytesExpectedToSend: totalBytesExpectedToSend)
  }

  package func urlSession(
    _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    let answer = handler(for: task)?.task(task, willRedirect: response, to: request)
    // Never to a task the library has cancelled meanwhile: that kills the process (see the gate).
    Self.redirectGate.answer(task, session: self) { completionHandler(answer) }
  }

  package func urlSession(
    _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
  ) {
    guard let handler = handler(for: task) else {
      // Never `.performDefaultHandling` for HTTP auth: it hangs forever on 6.3.1 (corelibs #5456).
      return completionHandler(.cancelAuthenticationChallenge, nil)
    }
    let (disposition, credential) = handler.task(task, didReceive: challenge)
    completionHandler(disposition, credential)
  }

  package func urlSession(
    _ session: URLSession, task: URLSessionTask,
    needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
  ) {
    completionHandler(handler(for: task)?.taskNeedsNewBodyStream(task))
  }

  package func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
    let handler = handlers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    Self.redirectGate.completed(task)
    // FoundationNetworking reports every TLS failure as -1 with libcurl's text: give it Apple's code.
    let tlsError = (error as? URLError).flatMap(TLSErrorMapping.fromFoundationNetworking)
    handler?.task(task, didCompleteWithError: tlsError ?? error)
  }

  package func urlSession(_ session: URLSession, didBecomeInvalidWithError error: Error?) {
    onInvalidate()
  }
}
