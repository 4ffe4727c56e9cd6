import Foundation

/// Receives the delegate callbacks of one URLSession task.
///
/// FoundationNetworking ignores per-task delegates (swift-corelibs-foundation #5187), so one session
/// delegate, ``SessionDispatcher``, routes every callback to the handler registered for the task.
/// All methods run on the session's serial delegate queue.
package protocol SessionTaskHandler: AnyObject, Sendable {
  func task(_ task: URLSessionTask, didReceive response: URLResponse)
  func task(_ task: URLSessionTask, didReceive data: Data)
  func task(
    _ task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
    totalBytesExpectedToSend: Int64)
  /// Returns the request to follow, or nil to refuse the redirect (the 3xx becomes the task's response).
  func task(_ task: URLSessionTask, willRedirect response: HTTPURLResponse, to request: URLRequest)
    -> URLRequest?
  func task(_ task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge)
    -> (URLSession.AuthChallengeDisposition, URLCredential?)
  func taskNeedsNewBodyStream(_ task: URLSessionTask) -> InputStream?
  func task(_ task: URLSessionTask, didCompleteWithError error: Error?)
}
