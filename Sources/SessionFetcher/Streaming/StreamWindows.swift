import Foundation

/// Bounded Range windows for a streamed GET, and for a download to a file, on Linux
/// (``StreamPausing/Method/continueWithRange``).
///
/// Cancelling a task to pause it does not bound memory on Linux: libcurl reads far ahead before the
/// cancellation takes effect, so memory grows with the body and the server sends it many times over.
/// So a streamed GET asks for the body in windows,
/// `Range: bytes=N-(N+W-1)`, the first one included: no task can ever hold more than W bytes that
/// the consumer has not asked for. The next window is requested when the last one has ended and
/// the consumer's buffer is at or below its low-water mark, with `If-Range` (the first response's
/// strong ETag or Last-Modified date) so that a changed resource ends the stream with
/// ``SessionFetcherError/streamInterrupted(description:)``.
///
/// The windows are hops of one attempt, like redirects: one Started/Stopped pair for the whole
/// stream, one completion, one error. The consumer sees the whole resource: a 200 head with the
/// first response's headers and the total length as Content-Length. A first answer that is not a
/// usable 206 (a 200 because the server ignores ranges, a content-coded or open-ended 206, a 416
/// for an empty resource) turns the windows off: a 200 is streamed as it comes; the others are
/// asked for again without a Range header.
enum StreamWindows {
  /// The smallest window: below it the requests would cost more than the bytes they carry.
  static let minimumLength = 16 * 1024

  /// Turns windows on for a download to a file when the fetch begins (see
  /// ``SessionFetcher/downloadWindowLength``); ``addRangeHeaders(to:storage:)`` turns them off
  /// again for a request that cannot use them.
  static func beginDownload(_ storage: inout FetcherStorage) {
    guard let plan = storage.plan else { return }
    guard plan.pausing.continuesWithRange else {
      // The engine really pauses (libcurl; Apple's URLSession): no windows are needed.
      storage.run.stream.windowLength = nil
      return
    }
    guard plan.destination != nil,
      !storage.run.stream.isStreaming, storage.run.downloadResume.parked == nil,
      let length = storage.config.downloadWindowLength, length > 0
    else { return }
    storage.run.stream.windowLength = max(length, Int64(minimumLength))
    storage.run.stream.isDownload = true
  }

  /// Whether the answer to a download's next window restarts the download: a 200 means that the
  /// resource changed (its `If-Range` did not match) and that its whole new body follows, which
  /// replaces what the part file holds, without windows. (A stream cannot restart: its consumer
  /// has the old bytes.)
  static func downloadRestarts(_ response: URLResponse, storage: inout FetcherStorage) -> Bool {
    guard storage.run.stream.isDownload, (response as? HTTPURLResponse)?.statusCode == 200 else {
      return false
    }
    storage.run.stream.isContinuation = false
    storage.run.stream.windowLength = nil
    return true
  }

  /// A download's attempt failed: later attempts ask for the rest whole (the part file is
  /// continued with an open-ended range, see `DownloadResume`), not in windows.
  static func endDownloadWindows(_ storage: inout FetcherStorage) {
    guard storage.run.stream.isDownload, storage.run.stream.windowLength != nil else { return }
    storage.run.stream.windowLength = nil
    storage.run.stream.isContinuation = false
  }

  /// The window for a buffer with these marks: what fills the buffer from the low-water mark to
  /// the high-water mark, so that a window never makes the transfer pause in its middle.
  static func length(highWaterMark: Int, lowWaterMark: Int) -> Int64 {
    Int64(max(highWaterMark - lowWaterMark, highWaterMark / 4, minimumLength))
  }

  /// Sets the window's `Range` (and, after the first byte, `If-Range`) on the request of a hop, or
  /// turns the windows off for a fetch that cannot use them (not a plain GET, a request with its
  /// own `Range`, a stubbed fetch). Called for every hop: the first, redirects, retries and
  /// continuations.
  static func addRangeHeaders(to request: inout URLRequest, storage: inout FetcherStorage) {
    guard let length = storage.run.stream.windowLength, let plan = storage.plan else { return }
    let start = storage.run.stream.deliveredBytes
    guard plan.testBlock == nil, (plan.baseRequest.httpMethod ?? "GET").uppercased() == "GET",
      !plan.body.isPresent, plan.baseRequest.value(forHTTPHeaderField: "Range") == nil,
      start == 0 || storage.run.stream.validator != nil
    else {
      storage.run.stream.windowLength = nil
      return
    }
    request.setValue("bytes=\(start)-\(start + length - 1)", forHTTPHeaderField: "Range")
    if start > 0 {
      request.setValue(storage.run.stream.validator, forHTTPHeaderField: "If-Range")
      storage.run.stream.isContinuation = true
    }
    storage.run.stream.windowStart = start
  }

  /// What the first response of a windowed stream means.
  enum FirstResponse {
    /// Not a windowed hop, or a response to handle as usual (a 200, a redirect, an error status).
    case asIs
    /// A usable 206: the consumer gets this head, which describes the whole resource.
    case whole(HTTPURLResponse)
    /// The server's 206 or 416 cannot be streamed in windows: ask again without a Range header.
    case refetch
  }

  /// Decides what a windowed stream does with the first response (not a continuation).
  static func firstResponse(_ response: URLResponse, storage: inout FetcherStorage) -> FirstResponse {
    guard storage.run.stream.windowLength != nil,
      storage.lifecycle.current.request?.value(forHTTPHeaderField: "Range") != nil,
      let http = response as? HTTPURLResponse
    else { return .asIs }
    switch http.statusCode {
    case 206:
      guard let head = wholeResource(http) else { break }
      storage.run.stream.total = head.total
      storage.run.stream.validator = head.validator
      return .whole(head.response)
    case 416:
      break
    case 200..<300:
      // The server ignores ranges: the body comes whole, as it would without windows.
      storage.run.stream.windowLength = nil
      return .asIs
    default:
      // A redirect is followed with the window again; an error status ends the attempt as usual.
      return .asIs
    }
    storage.run.stream.windowLength = nil
    return .refetch
  }

  /// The head describing the whole resource for a first 206 `bytes 0-E/TOTAL`, or nil when the
  /// body cannot be continued window by window: an unknown total, a content coding (ranges count
  /// encoded bytes, the consumer sees decoded ones), or more to come and no validator.
  static func wholeResource(
    _ http: HTTPURLResponse
  ) -> (response: HTTPURLResponse, total: Int64, validator: String?)? {
    func header(_ name: String) -> String? { http.value(forHTTPHeaderField: name) }
    guard let rangeText = header("Content-Range"), let range = contentRange(rangeText), range.start == 0,
      let url = http.url
    else { return nil }
    if let encoding = header("Content-Encoding"), encoding.lowercased() != "identity" { return nil }
    var validator: String?
    if let etag = header("ETag"), !etag.hasPrefix("W/") {
      validator = etag
    } else {
      validator = header("Last-Modified")
    }
    guard validator != nil || range.end + 1 >= range.total else { return nil }
    var fields: [String: String] = [:]
    for case (let key as String, let value as String) in http.allHeaderFields {
      let lowered = key.lowercased()
      guard lowered != "content-range", lowered != "content-length" else { continue }
      fields[key] = value
    }
    fields["Content-Length"] = String(range.total)
    guard
      let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: fields)
    else { return nil }
    return (response, range.total, validator)
  }

  /// `bytes START-END/TOTAL` with a known total.
  static func contentRange(_ value: String) -> (start: Int64, end: Int64, total: Int64)? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
    let parts = trimmed.dropFirst("bytes ".count).split(separator: "/", maxSplits: 1)
    guard parts.count == 2, let dash = parts[0].firstIndex(of: "-"),
      let start = Int64(parts[0][..<dash].trimmingCharacters(in: .whitespaces)),
      let end = Int64(parts[0][parts[0].index(after: dash)...].trimmingCharacters(in: .whitespaces)),
      let total = Int64(parts[1].trimmingCharacters(in: .whitespaces)), start <= end, end < total
    else { return nil }
    return (start, end, total)
  }

  /// Nil when a continuation's 206 belongs to the same resource: its total is the first one's.
  static func continuationError(_ response: URLResponse, storage: FetcherStorage) -> SessionFetcherError? {
    guard let total = storage.run.stream.total, let http = response as? HTTPURLResponse else { return nil }
    let range = http.value(forHTTPHeaderField: "Content-Range").flatMap(contentRange)
    guard range?.total != total else { return nil }
    return .streamInterrupted(description: "the resource's length changed from \(total) bytes")
  }

  /// How a hop of a windowed stream ended without an error.
  enum WindowEnd {
    /// Not a windowed stream, or the whole resource is in: the fetch finishes as usual.
    case finished
    /// More remains: the transfer waits (``CancelReason/pausedForBackpressure``) until the consumer
    /// wants more, then asks for the next window.
    case more((any FetcherStreamConsumer)?)
    /// More of a download remains: every byte of the window is written, ask for the next one now.
    case nextFileWindow
    /// The window brought nothing: asking again would loop.
    case stalled(SessionFetcherError)
  }

  /// A hop ended without an error: decide whether another window follows.
  static func hopEnded(_ storage: inout FetcherStorage) -> WindowEnd {
    guard storage.lifecycle.current.sink == .stream || storage.lifecycle.current.sink == .file,
      storage.run.stream.windowLength != nil,
      let total = storage.run.stream.total,
      storage.run.stream.deliveredBytes < total
    else { return .finished }
    guard storage.run.stream.deliveredBytes > storage.run.stream.windowStart else {
      return .stalled(
        .streamInterrupted(
          description: "the window from byte \(storage.run.stream.windowStart) of \(total) brought no bytes"))
    }
    storage.lifecycle.current.cancelReason = .pausedForBackpressure
    return storage.run.stream.isDownload ? .nextFileWindow : .more(storage.run.stream.consumer?.consumer)
  }

  /// Whether a failed attempt may be retried although the consumer already has part of the body:
  /// only in windows with a validator (a retry asks for a fresh window from the bytes delivered,
  /// with `If-Range`), and never when the resource changed.
  static func allowsRetry(after error: any Error, storage: FetcherStorage) -> Bool {
    // A download's part file is continued or restarted by `DownloadResume`.
    guard !storage.run.stream.isDownload, storage.run.stream.deliveredBytes > 0 else { return true }
    if case .streamInterrupted? = error as? SessionFetcherError { return false }
    return storage.run.stream.windowLength != nil && storage.run.stream.validator != nil
  }
}
