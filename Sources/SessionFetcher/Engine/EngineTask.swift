import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One HTTP exchange in flight on an engine: a `URLSessionTask`, or a libcurl transfer.
///
/// The fetcher decides (retry, redirect, authorization, cookies); an engine only moves the bytes of
/// one request and its response, reporting to a ``SessionTaskHandler``.
package protocol EngineTask: AnyObject, Sendable {
  /// Starts the exchange, or goes on reading after ``suspend()``.
  func resume()
  /// Stops reading the response until ``resume()`` (used only where the engine's
  /// ``FetcherSession/pausing`` is ``StreamPausing/Method/suspendTask``).
  func suspend()
  /// Ends the exchange: the handler then gets `didCompleteWithError` with `URLError(.cancelled)`,
  /// unless it completed already. Safe from any thread, any number of times.
  func cancel()
  /// The response head once received.
  var response: URLResponse? { get }
  /// What the engine measured of the exchange, once it completed (nil where it cannot know).
  var transferMetrics: TransferMetrics? { get }
  /// Where the exchange stands (state, bytes, response status, error), for a test that gave up
  /// waiting to print.
  var diagnosticSummary: String { get }
}

extension URLSessionTask: EngineTask {
  /// FoundationNetworking never delivers `URLSessionTaskMetrics`.
  package var transferMetrics: TransferMetrics? { nil }

  package var diagnosticSummary: String {
    "\(taskIdentifier) state \(state.rawValue) sent \(countOfBytesSent) of \(countOfBytesExpectedToSend), "
      + "received \(countOfBytesReceived), response \((response as? HTTPURLResponse)?.statusCode ?? -1), "
      + "error \(error.map { String(describing: $0) } ?? "none")"
  }
}

/// The body of one exchange, as an engine sends it.
package enum EngineBody {
  case none
  /// Sent with a `Content-Length`.
  case data(Data)
  /// Streamed from disk, with a `Content-Length`.
  case file(URL)
  /// Sent chunked (HTTP/1.1); the caller never sets a `Content-Length` with it.
  case stream(InputStream)
  /// A stream of exactly `length` bytes, sent with a `Content-Length` (libcurl engine only: on
  /// FoundationNetworking a stream with a length is framed twice, so the fetcher never hands it
  /// one). A stream that ends short or runs long fails the exchange before its last byte is sent.
  case sizedStream(InputStream, length: Int64)
}
