import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A task of the URLSession engine (see ``URLSessionEngineSession``).
extension URLSessionTask: EngineTask {
  /// FoundationNetworking never delivers `URLSessionTaskMetrics`.
  package var transferMetrics: TransferMetrics? { nil }

  package var diagnosticSummary: String {
    "\(taskIdentifier) state \(state.rawValue) sent \(countOfBytesSent) of \(countOfBytesExpectedToSend), "
      + "received \(countOfBytesReceived), response \((response as? HTTPURLResponse)?.statusCode ?? -1), "
      + "error \(error.map { String(describing: $0) } ?? "none")"
  }

  /// Marked in the redirect gate at once, cancelled on
  /// ``URLSessionEngineSession/cancellationQueue``: no redirect answer may reach the task from now
  /// on, even while its cancellation waits for FoundationNetworking (URLSession's own timer may end
  /// it meanwhile).
  package func letGo() {
    SessionDispatcher.redirectGate.mark(self)
    URLSessionEngineSession.cancellationQueue.async { self.cancel() }
  }
}
