import Foundation

/// What an event stream did: an event arrived, or a connection ended and the stream is about to
/// reconnect.
public enum EventSourceUpdate: Sendable {
  /// An event of the stream.
  case event(ServerSentEvent)
  /// A connection ended with `cause` (``EventSourceError/streamEnded(url:)`` when the server ended
  /// it normally); the stream waits `after` seconds, then makes reconnection attempt `attempt`
  /// (1 for the first since a connection last received anything). Given before the wait begins.
  case reconnecting(after: TimeInterval, cause: any Error, attempt: Int)
}

/// An event stream's events and reconnections, in the order they happen: obtain one with
/// ``EventSource/updates``.
///
/// ```swift
/// for try await update in SessionFetcher.eventSource(url: feedURL).updates {
///   switch update {
///   case .event(let event):
///     print(event.data)
///   case .reconnecting(let delay, let cause, let attempt):
///     print("reconnecting (attempt \(attempt)) in \(delay) s: \(cause)")
///   }
/// }
/// ```
///
/// The sequence follows the rules of ``EventSource``; it ends with nil after a 204 and throws
/// what ends the stream (``EventSourceError/gaveUp(url:attempts:lastCause:)`` once the
/// reconnections ran out). Iterate once.
public struct EventSourceUpdates: AsyncSequence, Sendable {
  /// The update type.
  public typealias Element = EventSourceUpdate

  let source: EventSource

  /// Iterates the updates of every connection in turn; connects on the first `next()`.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(source: source)
  }

  /// Gives the updates; connects on the first `next()`.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let source: EventSource
    var reconnection: EventSourceReconnection
    /// The last event ID received (or the one the stream started from), sent as `Last-Event-ID`
    /// on every connection; empty when none.
    public private(set) var lastEventID: String
    /// Connections made so far.
    public private(set) var connectionCount = 0
    var events: ServerSentEvents<FetcherStream>.AsyncIterator?
    var pendingDelay: TimeInterval?
    var isDone = false

    init(source: EventSource) {
      self.source = source
      reconnection = EventSourceReconnection(
        defaultInterval: source.defaultRetryInterval, maximumInterval: source.maximumRetryInterval,
        maximumReconnections: source.maximumReconnections)
      lastEventID = source.lastEventID
    }

    /// The interval a first reconnection waits: the server's latest `retry:`, else the default.
    public var retryInterval: TimeInterval { reconnection.baseInterval }

    /// The next update, or nil when the stream ended for good (a 204).
    ///
    /// - Throws: ``EventSourceError/gaveUp(url:attempts:lastCause:)`` once the reconnections ran
    ///   out; an HTTP status error that is not worth a reconnection,
    ///   ``EventSourceError/notAnEventStream(url:status:contentType:)``,
    ///   ``SessionFetcherError/cancelled``, ``SessionFetcherError/responseTooLarge(limit:)`` for an
    ///   event past the limit, and errors of the request's configuration, URL or TLS;
    ///   ``SessionFetcherError/invalidConfiguration(_:)`` for a starting last event ID with a line
    ///   break or NUL, before any request.
    public mutating func next() async throws -> EventSourceUpdate? {
      if connectionCount == 0, !isDone, lastEventID.contains(where: { $0 == "\0" || $0.isNewline }) {
        // A header value cannot hold it (and a line break would start another header).
        isDone = true
        throw SessionFetcherError.invalidConfiguration("a last event ID cannot contain a line break or NUL")
      }
      while !isDone {
        if let delay = pendingDelay {
          pendingDelay = nil
          do {
            try await source.sleep(delay)
          } catch {
            isDone = true
            throw SessionFetcherError.cancelled
          }
        }
        if events == nil {
          let fetcher = makeFetcher()
          do {
            guard let stream = try await connect(fetcher) else {
              isDone = true
              return nil
            }
            events = ServerSentEvents(
              stream, maximumEventLength: stream.buffer.maximumEventLength, lastEventID: lastEventID
            ).makeAsyncIterator()
          } catch {
            return try ended(with: error, retryAfter: Self.retryAfter(of: fetcher, error))
          }
        }
        do {
          if let event = try await events?.next() {
            note(events?.parser)
            return .event(event)
          }
          note(events?.parser)
          events = nil
          return try ended(with: EventSourceError.streamEnded(url: source.url), retryAfter: nil)
        } catch {
          note(events?.parser)
          events = nil
          return try ended(with: error, retryAfter: nil)
        }
      }
      return nil
    }

    private mutating func note(_ parser: ServerSentEventParser?) {
      guard let parser else { return }
      lastEventID = parser.lastEventID
      if parser.parsedByteCount > 0 { reconnection.didReceiveData() }
      if let time = parser.reconnectionTime { reconnection.serverAsked(retryMilliseconds: time) }
    }

    private mutating func makeFetcher() -> SessionFetcher {
      var request = source.request
      request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
      request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
      if !lastEventID.isEmpty { request.setValue(lastEventID, forHTTPHeaderField: "Last-Event-ID") }
      let fetcher = source.makeFetcher(request)
      // The stream's own policy alone decides when to connect again: a service's retries beneath
      // it would multiply its delays and its requests.
      fetcher.isRetryEnabled = false
      connectionCount += 1
      return fetcher
    }

    /// The stream of a connection, or nil when the server answered 204 (do not reconnect).
    private func connect(_ fetcher: SessionFetcher) async throws -> FetcherStream? {
      let stream = try await fetcher.beginStreaming()
      guard let response = stream.httpResponse else { return stream }
      if response.statusCode == 204 { return nil }
      let contentType = response.value(forHTTPHeaderField: "Content-Type")
      let essence = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
      guard response.statusCode == 200, essence?.lowercased() == "text/event-stream" else {
        // Dropping the stream stops its fetch.
        throw EventSourceError.notAnEventStream(
          url: source.url, status: response.statusCode, contentType: contentType)
      }
      return stream
    }

    /// A connection ended with `error`: reconnect (after announcing it), or end the sequence.
    private mutating func ended(with error: any Error, retryAfter: TimeInterval?) throws -> EventSourceUpdate
    {
      let cancelled = Task.isCancelled || (error as? SessionFetcherError) == .cancelled
      switch cancelled ? .fail : reconnection.connectionEnded(with: error, retryAfter: retryAfter) {
      case .reconnect(let delay, let attempt):
        pendingDelay = delay
        return .reconnecting(after: delay, cause: error, attempt: attempt)
      case .fail:
        isDone = true
        throw error
      case .giveUp(let attempts):
        isDone = true
        throw EventSourceError.gaveUp(url: source.url, attempts: attempts, lastCause: error)
      }
    }

    /// The `Retry-After` delay of a 429 or 503 that ended a connection attempt.
    private static func retryAfter(of fetcher: SessionFetcher, _ error: any Error) -> TimeInterval? {
      guard let status = (error as? SessionFetcherError)?.statusCode,
        RetryPolicy.retryAfterStatuses.contains(status),
        let value = (fetcher.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Retry-After")
      else { return nil }
      return RetryPolicy.retryAfterDelay(value)
    }
  }
}
