import Foundation

/// Receives the events of one HTTP exchange, from whichever engine moves its bytes.
///
/// On the URLSession engine, FoundationNetworking ignores per-task delegates
/// (swift-corelibs-foundation #5187), so one session delegate, ``URLSessionDelegateRouter``, routes every
/// callback to the handler registered for the task. On the libcurl engine, ``CurlEngine`` calls the
/// handler from its event-loop thread. Either way an engine calls one handler serially, never two
/// methods at once, and `didCompleteWithError` exactly once, last.
package protocol SessionTaskHandler: AnyObject, Sendable {
  /// The final response head (status 200 and up, or a 3xx/401/407 handed over as it is): interim 1xx
  /// responses may reach it on the URLSession engine and are ignored by the fetcher. An engine that
  /// parses heads itself (libcurl) hands over the parsed head, whose `URLResponse` is made only when
  /// something asks for it; one that gets a `URLResponse` wraps it (`ResponseHead.init(_:)`).
  func task(_ task: any EngineTask, didReceiveHead head: ResponseHead)
  func task(_ task: any EngineTask, didReceive data: Data)
  func task(
    _ task: any EngineTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
    totalBytesExpectedToSend: Int64)
  /// Returns the request to follow, or nil to refuse the redirect (the 3xx becomes the task's
  /// response). The libcurl engine never follows: it calls this for a 3xx with a `Location` before
  /// handing over the 3xx head.
  func task(_ task: any EngineTask, willRedirect response: HTTPURLResponse, to request: URLRequest)
    -> URLRequest?
  func task(_ task: any EngineTask, didReceive challenge: URLAuthenticationChallenge)
    -> (URLSession.AuthChallengeDisposition, URLCredential?)
  /// A new stream of the body, for an engine that must send it again within the same exchange.
  func taskNeedsNewBodyStream(_ task: any EngineTask) -> InputStream?
  func task(_ task: any EngineTask, didCompleteWithError error: Error?)
  /// The engine has started the exchange: an engine that makes its tasks on a queue that can fall
  /// behind (the URLSession engine: FoundationNetworking's work queue, shared by the process) says
  /// when the request really left, so that the time it waited there is not counted as idle.
  func taskDidStart(_ task: any EngineTask)
}

extension SessionTaskHandler {
  /// Nothing by default.
  package func taskDidStart(_ task: any EngineTask) {}
}
