import Foundation

/// One HTTP exchange in flight on an engine, made by an ``EngineSession``.
///
/// The fetcher decides (retry, redirect, authorization, cookies); an engine only moves the bytes of
/// one request and its response, reporting to a ``SessionTaskHandler``.
package protocol EngineTask: AnyObject, Sendable {
  /// Starts the exchange, or goes on reading after ``suspend()``.
  func resume()
  /// Stops reading the response until ``resume()`` (used only where the engine's
  /// ``EngineSession/pausing`` is ``StreamPausing/Method/suspendTask``).
  func suspend()
  /// Ends the exchange: the handler then gets `didCompleteWithError` with `URLError(.cancelled)`,
  /// unless it completed already. Safe from any thread, any number of times.
  func cancel()
  /// Cancels the exchange for a fetcher that has let go of it (it ignores whatever the task still
  /// reports), without the caller waiting for the engine; from then on nothing the engine asks of
  /// the exchange (a redirect's answer) reaches it.
  func letGo()
  /// The response head once received.
  var response: URLResponse? { get }
  /// What the engine measured of the exchange, once it completed (nil where it cannot know).
  var transferMetrics: TransferMetrics? { get }
  /// Where the exchange stands (state, bytes, response status, error), for a test that gave up
  /// waiting to print.
  var diagnosticSummary: String { get }
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
  /// A stream of exactly `length` bytes, sent with a `Content-Length` (the libcurl engine and
  /// Apple's URLSession: on FoundationNetworking a stream with a length is framed twice, so the
  /// fetcher never hands it one). A stream that ends short or runs long fails the exchange before
  /// its last byte is sent.
  case sizedStream(InputStream, length: Int64)
}
