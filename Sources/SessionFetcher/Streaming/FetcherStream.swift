import Foundation

/// A response whose body is read as it arrives: the head first, then the body as an `AsyncSequence`
/// of chunks, with bounded memory.
///
/// ```swift
/// let fetcher = SessionFetcher.fetcher(urlString: "https://example.com/large.ndjson")
/// let stream = try await fetcher.beginStreaming()
/// print(stream.httpResponse?.statusCode ?? 0)
/// for try await line in stream.lines {
///   handle(line)
/// }
/// ```
///
/// **One consumer.** Iterate a stream once, from one task. Cancelling that task, or leaving the loop
/// early (the iterator is released), stops the fetch at once: the network transfer ends and the
/// fetcher posts its Stopped notification. Dropping the stream without iterating it stops the fetch
/// as well.
///
/// **Errors** come out of the iterator once, after the chunks that arrived before them; the
/// iterator then returns nil. An HTTP error status never reaches the stream:
/// ``SessionFetcher/beginStreaming(highWaterMark:lowWaterMark:)`` throws
/// ``SessionFetcherError/status(code:data:)`` carrying the body, before any chunk.
///
/// **Backpressure.** Chunks the consumer has not taken yet are buffered up to the high-water mark;
/// above it the fetcher stops reading from the network until the consumer has drained the buffer
/// to the low-water mark. On Linux, where `URLSessionTask.suspend()` does not stop a running transfer
/// (it restarts it) and a cancelled transfer has read far ahead, a GET asks for the body in
/// **Range windows** of (high-water mark − low-water mark) bytes, `Range: bytes=N-(N+W-1)`, the
/// first request included; the next window is asked for, with `If-Range`, only once the buffer is
/// at or below the low-water mark: memory stays bounded by the window, and the server writes the
/// body once. That needs a server
/// answering the first window with a 206 whose `Content-Range` gives the total, no content coding,
/// and (when more than one window) a strong ETag or a Last-Modified date, as static files and
/// object stores do. A server that ignores ranges answers 200: that body is streamed as it comes,
/// paused (by ending the connection and continuing with `Range: bytes=N-`) only when it has
/// `Accept-Ranges: bytes` and a validator, else buffered as fast as the server sends — as are
/// chunked or compressed responses and event streams, whose memory is bounded only by the server's
/// rate. Apple platforms suspend the task instead and ask for the body whole.
///
/// **The windows are invisible** except in the server's logs (and to event monitors, which see
/// each window's request and response, as for redirects): ``response`` describes the whole resource,
/// one Started/Stopped notification pair covers the whole stream, the body comes out once and in
/// order, and a failure ends the stream once. A window whose connection fails may be retried (with
/// ``SessionFetcher/isRetryEnabled``): the retry asks for a fresh window from the bytes delivered, as
/// a new attempt (its own Started/Stopped pair, as for any retry). A resource that changed between
/// windows (the server answers the `If-Range` with 200) ends the stream with
/// ``SessionFetcherError/streamInterrupted(description:)``, never retried.
///
/// `@unchecked Sendable`: the `URLResponse` it holds is immutable once made (every property
/// read-only), so sharing it between threads is safe; only its `Sendable` conformance differs
/// between Apple's Foundation and swift-corelibs-foundation.
public struct FetcherStream: AsyncSequence, @unchecked Sendable {
  /// The body chunk type.
  public typealias Element = Data

  /// The default high-water mark: 4 MiB.
  public static let defaultHighWaterMark = 4 * 1024 * 1024

  /// The head of the successful response (for HTTP, a 2xx ``httpResponse``).
  ///
  /// When the body comes in Range windows (Linux, see Backpressure above), this describes the whole
  /// resource, not the first window's 206: status 200, the first response's headers without
  /// `Content-Range`, and the total length as `Content-Length` (`expectedContentLength`).
  public let response: URLResponse
  let buffer: StreamBuffer

  init(response: URLResponse, buffer: StreamBuffer) {
    self.response = response
    self.buffer = buffer
  }

  /// ``response`` as an HTTP response (nil for non-HTTP schemes).
  public var httpResponse: HTTPURLResponse? { response as? HTTPURLResponse }

  /// The fetcher that streams.
  public var fetcher: SessionFetcher { buffer.fetcher }

  /// Body bytes received but not yet taken by the consumer (at most about the high-water mark while
  /// the transfer can be paused).
  public var bufferedByteCount: Int { buffer.bufferedBytes }

  /// The body as text lines (see ``StreamLines``), none longer than the fetcher's
  /// ``SessionFetcher/maximumLineLength``.
  public var lines: StreamLines<FetcherStream> {
    StreamLines(self, maximumLineLength: buffer.maximumLineLength)
  }

  /// The body parsed as `text/event-stream` (see ``ServerSentEvents``), no event longer than the
  /// fetcher's ``SessionFetcher/maximumEventLength``.
  public var events: ServerSentEvents<FetcherStream> {
    ServerSentEvents(self, maximumEventLength: buffer.maximumEventLength)
  }

  /// Iterates the chunks; see ``FetcherStream`` for the one-consumer rule.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(lifetime: ConsumerLifetime(buffer: buffer))
  }

  /// Gives the body chunks in arrival order.
  public struct AsyncIterator: AsyncIteratorProtocol, StreamTransferStopping {
    let lifetime: ConsumerLifetime

    func stopTransfer() {
      lifetime.buffer.consumerDidCancel()
    }

    /// The next chunk, or nil at the end of the body.
    ///
    /// - Throws: the fetch's error, once (`URLError` for transport failures,
    ///   ``SessionFetcherError/cancelled`` when the consuming task is cancelled).
    public mutating func next() async throws -> Data? {
      try await lifetime.buffer.next()
    }
  }
}

/// Stops the fetch when the last copy of an iterator goes away (a `break` out of the loop).
final class ConsumerLifetime: Sendable {
  let buffer: StreamBuffer

  init(buffer: StreamBuffer) {
    self.buffer = buffer
  }

  deinit {
    buffer.consumerDidCancel()
  }
}

extension SessionFetcher {
  /// Begins the fetch and returns as soon as the head of a successful response is in; the body then
  /// comes from the returned stream as it arrives.
  ///
  /// Everything a fetch does applies: the authorizer, cookies, redirects, credentials, a service's
  /// throttling, event monitors and logging, timeouts, and retries — but **a retry can happen only
  /// before the first body chunk has arrived**; after that a failure ends the stream with its error.
  /// The fetcher's completion-related properties (``downloadedData``, ``destinationFileURL``,
  /// ``accumulateDataBlock``) are not used. The fetch ends, and the fetcher posts its Stopped
  /// notification, when the body has been received (the consumer may still be reading the buffer),
  /// when it fails, or when the consumer stops. A body asked for in Range windows (Linux, see
  /// ``FetcherStream``) is one fetch: Started when the first window is sent, Stopped after the
  /// last, however long the consumer takes between them; a failed window can be retried (it is a
  /// fresh range), unlike a failure in a body fetched whole.
  ///
  /// ```swift
  /// let stream = try await fetcher.beginStreaming()
  /// for try await chunk in stream {
  ///   try handle.write(contentsOf: chunk)
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - highWaterMark: buffered bytes above which the transfer pauses (default 4 MiB).
  ///   - lowWaterMark: buffered bytes at or below which a paused transfer resumes (default a quarter
  ///     of `highWaterMark`).
  /// - Returns: the stream; iterate it once.
  /// - Throws: ``SessionFetcherError/status(code:data:)`` (with the body) for an HTTP error status,
  ///   and every error ``beginFetch()`` throws; ``SessionFetcherError/cancelled`` when the awaiting
  ///   task is cancelled (the fetch stops).
  public func beginStreaming(
    highWaterMark: Int = FetcherStream.defaultHighWaterMark, lowWaterMark: Int? = nil
  ) async throws -> FetcherStream {
    let buffer = StreamBuffer(
      fetcher: self, highWaterMark: highWaterMark, lowWaterMark: lowWaterMark ?? highWaterMark / 4)
    attachStreamConsumer(
      buffer,
      windowLength: StreamWindows.length(
        highWaterMark: buffer.highWaterMark, lowWaterMark: buffer.lowWaterMark))
    if Task.isCancelled {
      stop(forceCompletion: true)
    }
    // Weak: a stream that nobody holds any more must be able to go away and stop the fetch.
    begin(
      completion: { [weak buffer] data, error in buffer?.fetchDidComplete(data: data, error: error) },
      forceCompletionOnStop: true)
    let response = try await buffer.response()
    return FetcherStream(response: response, buffer: buffer)
  }

  /// The body as chunks, beginning the fetch when the first chunk is asked for: a shorthand for
  /// ``beginStreaming(highWaterMark:lowWaterMark:)`` when the head does not matter.
  ///
  /// ```swift
  /// for try await chunk in fetcher.bodyChunks() { consume(chunk) }
  /// ```
  public func bodyChunks(highWaterMark: Int = FetcherStream.defaultHighWaterMark) -> FetcherBodyChunks {
    FetcherBodyChunks(fetcher: self, highWaterMark: highWaterMark)
  }

  /// The body parsed as server-sent events, beginning the fetch when the first event is asked for.
  /// Sets `Accept: text/event-stream`. There is no reconnection; see
  /// ``eventSource(url:lastEventID:maximumReconnections:defaultRetryInterval:maximumRetryInterval:makeFetcher:)`` for that.
  ///
  /// ```swift
  /// for try await event in fetcher.events() { print(event.event, event.data) }
  /// ```
  public func events() -> ServerSentEvents<FetcherBodyChunks> {
    if request?.value(forHTTPHeaderField: "Accept") == nil {
      setRequestValue("text/event-stream", forHTTPHeaderField: "Accept")
    }
    return ServerSentEvents(bodyChunks(), maximumEventLength: maximumEventLength)
  }
}

/// The body chunks of a fetcher that begins when the first chunk is asked for; see
/// ``SessionFetcher/bodyChunks(highWaterMark:)``. Iterate once.
public struct FetcherBodyChunks: AsyncSequence, Sendable {
  /// The body chunk type.
  public typealias Element = Data

  let fetcher: SessionFetcher
  let highWaterMark: Int

  /// Iterates the chunks; the fetch begins at the first `next()`.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(fetcher: fetcher, highWaterMark: highWaterMark)
  }

  /// Gives the body chunks in arrival order.
  public struct AsyncIterator: AsyncIteratorProtocol, StreamTransferStopping {
    let fetcher: SessionFetcher
    let highWaterMark: Int
    var stream: FetcherStream.AsyncIterator?
    var isDone = false

    func stopTransfer() {
      if let stream {
        stream.stopTransfer()
      } else {
        fetcher.stopFetching()
      }
    }

    /// The next chunk, or nil at the end. The first call begins the fetch and may throw what
    /// ``SessionFetcher/beginStreaming(highWaterMark:lowWaterMark:)`` throws.
    public mutating func next() async throws -> Data? {
      if isDone { return nil }
      if stream == nil {
        do {
          stream = try await fetcher.beginStreaming(highWaterMark: highWaterMark).makeAsyncIterator()
        } catch {
          isDone = true
          throw error
        }
      }
      return try await stream?.next()
    }
  }
}
