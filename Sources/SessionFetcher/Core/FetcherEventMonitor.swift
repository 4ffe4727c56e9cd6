import Foundation

/// Observes the life of fetches without the core knowing the observer (logging, metrics, tracing).
///
/// Register one for every fetcher of the process with ``SessionFetcher/addGlobalEventMonitor(_:)``
/// or for one fetcher with ``SessionFetcher/eventMonitors``. Every method has an empty default.
///
/// Methods run synchronously on the fetcher's internal queues, never on the callback queue, and may
/// run concurrently for different fetchers: implementations must be thread-safe and quick.
public protocol FetcherEventMonitor: AnyObject, Sendable {
  /// The fetch began (before validation; the request may still be refused).
  func fetcherDidBegin(_ fetcher: SessionFetcher)
  /// The fetch waited for a slot of its service's per-host throttle and got one; its first attempt
  /// starts now. Not called for a fetch that started at once.
  func fetcherDidLeaveThrottleQueue(_ fetcher: SessionFetcher)
  /// A request is about to go on the wire: each attempt, and each redirect hop.
  func fetcher(_ fetcher: SessionFetcher, willSendRequest request: URLRequest)
  /// A response head arrived (interim 1xx responses are not reported).
  func fetcher(_ fetcher: SessionFetcher, didReceiveResponse response: URLResponse)
  /// A chunk of the response body arrived.
  func fetcher(_ fetcher: SessionFetcher, didReceiveData data: Data)
  /// Bytes of the request body went out: `bytesSent` now, `totalBytesSent` in this attempt, of
  /// `totalBytesExpectedToSend` (-1 when unknown).
  func fetcher(
    _ fetcher: SessionFetcher, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
    totalBytesExpectedToSend: Int64)
  /// A redirect is about to be followed.
  func fetcher(_ fetcher: SessionFetcher, willRedirectFrom response: HTTPURLResponse, to request: URLRequest)
  /// The attempt failed with `error` and another one starts after `delay` seconds.
  func fetcher(_ fetcher: SessionFetcher, willRetryAfter delay: TimeInterval, error: any Error)
  /// The fetch ended; runs before the completion handler. `error` is nil on success.
  func fetcher(_ fetcher: SessionFetcher, didFinishWithData data: Data?, error: (any Error)?)
}

/// Every event has an empty default implementation, so a monitor implements only the ones it needs.
extension FetcherEventMonitor {
  /// Does nothing; implement it to observe the start of a fetch.
  public func fetcherDidBegin(_ fetcher: SessionFetcher) {}
  /// Does nothing; implement it to observe the end of a wait for a throttle slot.
  public func fetcherDidLeaveThrottleQueue(_ fetcher: SessionFetcher) {}
  /// Does nothing; implement it to observe each request as it is sent.
  public func fetcher(_ fetcher: SessionFetcher, willSendRequest request: URLRequest) {}
  /// Does nothing; implement it to observe each response head.
  public func fetcher(_ fetcher: SessionFetcher, didReceiveResponse response: URLResponse) {}
  /// Does nothing; implement it to observe body bytes as they arrive.
  public func fetcher(_ fetcher: SessionFetcher, didReceiveData data: Data) {}
  /// Does nothing; implement it to observe request body bytes as they are sent.
  public func fetcher(
    _ fetcher: SessionFetcher, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
    totalBytesExpectedToSend: Int64
  ) {}
  /// Does nothing; implement it to observe redirects that are followed.
  public func fetcher(
    _ fetcher: SessionFetcher, willRedirectFrom response: HTTPURLResponse, to request: URLRequest
  ) {}
  /// Does nothing; implement it to observe retry delays.
  public func fetcher(_ fetcher: SessionFetcher, willRetryAfter delay: TimeInterval, error: any Error) {}
  /// Does nothing; implement it to observe the end of a fetch.
  public func fetcher(_ fetcher: SessionFetcher, didFinishWithData data: Data?, error: (any Error)?) {}
}

/// The hooks a fetcher service uses to throttle, decorate and cache its fetchers' requests.
package protocol FetcherServiceHooks: AnyObject, Sendable {
  /// Whether the fetcher may start now. When false, the service must later call
  /// ``SessionFetcher/serviceDidGrantSlot()`` (or stop the fetcher).
  func fetcherShouldBeginNow(_ fetcher: SessionFetcher) -> Bool
  /// Last changes to an attempt's request (User-Agent, If-None-Match); returns whether it changed
  /// it (a changed request is checked again before Started is posted).
  func fetcher(_ fetcher: SessionFetcher, willSend request: inout URLRequest) -> Bool
  /// Sees every final HTTP response head; may replace its response (a 304 answered from the ETag
  /// cache). Reads the head, so that a response nobody asks for is never made.
  func fetcher(_ fetcher: SessionFetcher, finalResponse head: ResponseHead, data: Data?)
    -> (response: HTTPURLResponse, data: Data?)?
  /// The fetcher waits in a retry delay (true) or left it (false).
  func fetcher(_ fetcher: SessionFetcher, isWaitingToRetry: Bool)
  /// The fetch ended (finished or stopped); `succeeded` is true for a successful fetch.
  func fetcherDidStop(_ fetcher: SessionFetcher, succeeded: Bool)
  /// The decorators of a fetch that begins now, in the order they run.
  var decorators: [any FetcherDecorator] { get }
  /// The provider of a fetch's `User-Agent` when neither its request nor its fetcher has one.
  var userAgentProvider: (any UserAgentProvider)? { get }
}
