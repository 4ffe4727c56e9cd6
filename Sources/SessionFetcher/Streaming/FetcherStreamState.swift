import Foundation

/// Receives the body of a streamed fetch from the fetcher core.
///
/// Called on the session's delegate queue, outside the fetcher's lock; implementations must not
/// block and must not call user code.
package protocol FetcherStreamConsumer: AnyObject, Sendable {
  /// The head of a successful (2xx) response, before its first chunk. After a retry (possible only
  /// before the first chunk) it may come again.
  func fetcher(_ fetcher: SessionFetcher, didReceiveStreamResponse response: URLResponse)
  /// A chunk of the body. Returns true when the consumer's buffer is over its high-water mark and
  /// the transfer should pause; the consumer then calls ``SessionFetcher/resumeStreamTransfer()``
  /// once it has drained.
  func fetcher(_ fetcher: SessionFetcher, didReceiveStreamData data: Data) -> Bool
  /// Whether the pause asked for by ``fetcher(_:didReceiveStreamData:)`` is still wanted: the
  /// fetcher asks under its lock when it makes the pause, because the consumer may have drained
  /// (and called ``SessionFetcher/resumeStreamTransfer()``, finding nothing paused yet) in between.
  var wantsTransferPaused: Bool { get }
  /// A Range window ended and more of the body remains (see ``StreamWindows``). Returns true when
  /// the buffer is at or below its low-water mark: the fetcher then asks for the next window at
  /// once. Otherwise the consumer calls ``SessionFetcher/resumeStreamTransfer()`` once it has
  /// drained, as after a pause.
  func fetcherShouldRequestNextWindow(_ fetcher: SessionFetcher) -> Bool
}

/// A weak reference: a stream nobody holds any more stops its fetch instead of being kept alive by it.
struct WeakStreamConsumer {
  weak var consumer: (any FetcherStreamConsumer)?
}

/// The streaming part of a fetcher's state (behind the fetcher's lock).
struct FetcherStreamState {
  var consumer: WeakStreamConsumer? {
    didSet { isStreaming = consumer != nil }
  }
  /// Whether the fetch streams its body (it has a consumer): kept beside the consumer so that the
  /// many reads of it load one flag rather than copy the state out to test a weak reference.
  private(set) var isStreaming = false
  /// Body bytes handed to the consumer in this fetch (for a download in windows: written to the
  /// part file). Once non-zero a stream cannot be retried (see `StreamWindows.allowsRetry`).
  var deliveredBytes: Int64 = 0
  /// The windows carry a download to a file, not a stream (see `StreamWindows.beginDownload`).
  var isDownload = false
  /// The head the consumer saw; the base for continuing a paused transfer.
  var head: URLResponse?
  /// The current hop continues a paused transfer from `deliveredBytes`.
  var isContinuation = false
  /// The length of the Range windows the body is asked for in (see ``StreamWindows``); nil when the
  /// fetch does not use windows (Apple platforms, not a GET, or the server's first answer).
  var windowLength: Int64?
  /// The first byte of the current window.
  var windowStart: Int64 = 0
  /// The whole resource's length, from the first window's `Content-Range`.
  var total: Int64?
  /// The `If-Range` value of a windowed stream (a strong ETag or a Last-Modified date).
  var validator: String?

  /// The `If-Range` value that continues this stream after a pause (the windows' validator, else
  /// the head's, see ``StreamPausing/continuationValidator(method:response:)``); nil when the
  /// response cannot be continued with a Range request.
  func continuationValidator(method: String?) -> String? {
    guard let head else { return nil }
    return validator ?? StreamPausing.continuationValidator(method: method ?? "GET", response: head)
  }
}

/// How a transfer whose consumer is too slow is paused (each engine says which, see
/// ``EngineSession/pausing``), and the checks that make continuing with a Range request safe.
package enum StreamPausing {
  package enum Method: Equatable, Sendable {
    /// `task.suspend()` / `task.resume()`.
    case suspendTask
    /// Cancel the task; continue with a Range request from the bytes delivered.
    case continueWithRange
    /// ``continueWithRange`` where the response can be continued, else `task.suspend()` /
    /// `task.resume()`: an engine whose suspension stops reading but whose Range continuations are
    /// preferred (the URLSession engine on Linux, whose suspension is libcurl's, found by
    /// reflection).
    case continueWithRangeElseSuspendTask

    /// Whether a response that can be continued is paused by ending its task (and downloads may
    /// go in Range windows).
    var continuesWithRange: Bool {
      switch self {
      case .suspendTask: return false
      case .continueWithRange, .continueWithRangeElseSuspendTask: return true
      }
    }
  }

  /// The `If-Range` validator of a response that can be continued with a Range request, or nil:
  /// a GET answered 200 with `Accept-Ranges: bytes`, a Content-Length, no content coding (ranges
  /// count encoded bytes, the consumer sees decoded ones) and a strong ETag or a Last-Modified date.
  static func continuationValidator(method: String, response: URLResponse) -> String? {
    guard method.uppercased() == "GET", let http = response as? HTTPURLResponse, http.statusCode == 200,
      http.expectedContentLength >= 0
    else { return nil }
    func header(_ name: String) -> String? { http.value(forHTTPHeaderField: name) }
    guard header("Accept-Ranges")?.lowercased().contains("bytes") == true else { return nil }
    if let encoding = header("Content-Encoding"), encoding.lowercased() != "identity" { return nil }
    if let etag = header("ETag"), !etag.hasPrefix("W/") { return etag }
    return header("Last-Modified")
  }

  /// The request that continues a transfer after `offset` delivered bytes.
  static func continuationRequest(_ request: URLRequest, offset: Int64, validator: String) -> URLRequest {
    var request = request
    request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
    request.setValue(validator, forHTTPHeaderField: "If-Range")
    return request
  }

  /// Nil when `response` continues the body at `offset`: a 206 whose `Content-Range` starts there.
  ///
  /// An HTTP error status (400 and up) is a `.status` error, which the retry rules judge as for any
  /// fetch (a 503 to a window is retried when retries are on); any other answer means the resource
  /// cannot go on where it stopped.
  static func continuationError(_ response: URLResponse, offset: Int64) -> SessionFetcherError? {
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    if status >= 400 { return .status(code: status, data: nil) }
    guard status == 206,
      let range = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Range"),
      contentRangeStart(range) == offset
    else {
      return .streamInterrupted(
        description: "the paused transfer could not continue at byte \(offset) (status \(status))")
    }
    return nil
  }

  /// The first byte of `bytes A-B/N`.
  static func contentRangeStart(_ value: String) -> Int64? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
    let spec = trimmed.dropFirst(6)
    guard let dash = spec.firstIndex(of: "-") else { return nil }
    return Int64(spec[..<dash].trimmingCharacters(in: .whitespaces))
  }
}
