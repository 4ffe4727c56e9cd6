import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A ``SessionTaskHandler`` for tests that drive an engine directly and look only at how an exchange
/// ends: it counts the body's bytes, follows no redirect, cancels every challenge, and on completion
/// records the error and the engine's metrics, then calls `onComplete` (on the engine's thread).
///
/// `@unchecked Sendable`: `state` is behind its `Locked` wrapper; `onComplete` is set once, at init.
package final class EngineCompletionHandler: SessionTaskHandler, @unchecked Sendable {
  /// How the exchange ended, as far as it has.
  package struct Outcome {
    package var bytes = 0
    package var isComplete = false
    package var error: (any Error)?
    package var metrics: TransferMetrics?
  }

  private let state = Locked(Outcome())
  private let done = DispatchSemaphore(value: 0)
  private let onComplete: @Sendable (any EngineTask, (any Error)?) -> Void

  package init(onComplete: @escaping @Sendable (any EngineTask, (any Error)?) -> Void = { _, _ in }) {
    self.onComplete = onComplete
  }

  package var outcome: Outcome { state.current }

  /// Waits (up to `timeout` seconds) for the completion; false when it did not come.
  package func waitForCompletion(timeout: TimeInterval = 30) -> Bool {
    done.wait(timeout: .now() + timeout) == .success
  }

  package func task(_ task: any EngineTask, didReceiveHead head: ResponseHead) {}
  package func task(_ task: any EngineTask, didReceive data: Data) {
    state.withLock { $0.bytes += data.count }
  }
  package func task(
    _ task: any EngineTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
    totalBytesExpectedToSend: Int64
  ) {}
  package func task(_ task: any EngineTask, willRedirect response: HTTPURLResponse, to request: URLRequest)
    -> URLRequest?
  { nil }
  package func task(_ task: any EngineTask, didReceive challenge: URLAuthenticationChallenge)
    -> (URLSession.AuthChallengeDisposition, URLCredential?)
  { (.cancelAuthenticationChallenge, nil) }
  package func taskNeedsNewBodyStream(_ task: any EngineTask) -> InputStream? { nil }
  package func task(_ task: any EngineTask, didCompleteWithError error: (any Error)?) {
    let metrics = task.transferMetrics
    state.withLock {
      $0.isComplete = true
      $0.error = error
      $0.metrics = metrics
    }
    onComplete(task, error)
    done.signal()
  }
}
