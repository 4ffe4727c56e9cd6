import Foundation

/// A server-sent event stream that reconnects: when a connection ends or breaks, a new fetcher asks
/// again after the retry interval, sending `Last-Event-ID`, at most `maximumReconnections` times in a
/// row (a received event resets the count).
///
/// ```swift
/// for try await event in SessionFetcher.eventSource(url: feedURL) {
///   print(event.event, event.data)
/// }
/// ```
///
/// Each connection is a fresh ``SessionFetcher`` from `makeFetcher`, so the usual retry machinery
/// applies to it as well: its ``SessionFetcher/minRetryInterval`` is the server's `retry:` value
/// (or the default interval). An HTTP error status or a 204 ends the sequence (the error is thrown);
/// so do cancelling the consuming task and an event longer than the fetcher's
/// ``SessionFetcher/maximumEventLength`` (``SessionFetcherError/responseTooLarge(limit:)``, not
/// reconnected: the server would send it again). Iterate once.
public struct EventSource: AsyncSequence, Sendable {
  /// The event type.
  public typealias Element = ServerSentEvent

  let request: URLRequest
  let maximumReconnections: Int
  let defaultRetryInterval: TimeInterval
  let makeFetcher: @Sendable (URLRequest) -> SessionFetcher

  /// Iterates the events of every connection in turn.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(source: self, retryInterval: defaultRetryInterval)
  }

  /// Gives the events; connects on the first `next()`.
  public struct AsyncIterator: AsyncIteratorProtocol {
    let source: EventSource
    /// The interval before the next reconnection: the server's latest `retry:`, else the default.
    public private(set) var retryInterval: TimeInterval
    /// The last event ID received, sent as `Last-Event-ID` when reconnecting.
    public private(set) var lastEventID = ""
    /// Connections made so far.
    public private(set) var connectionCount = 0
    var failuresInARow = 0
    var events: ServerSentEvents<FetcherStream>.AsyncIterator?
    var isDone = false

    init(source: EventSource, retryInterval: TimeInterval) {
      self.source = source
      self.retryInterval = retryInterval
    }

    /// The next event, or nil when the stream ended for good.
    ///
    /// - Throws: an HTTP status error, ``SessionFetcherError/cancelled``,
    ///   ``SessionFetcherError/responseTooLarge(limit:)`` for an event past the limit, or the last
    ///   transport error once the reconnections ran out.
    public mutating func next() async throws -> ServerSentEvent? {
      while !isDone {
        if events == nil {
          do {
            guard let stream = try await connect() else {
              isDone = true
              return nil
            }
            events = stream.events.makeAsyncIterator()
          } catch {
            try await handleEnd(error)
            continue
          }
        }
        do {
          if let event = try await events?.next() {
            failuresInARow = 0
            note(events?.parser)
            return event
          }
          note(events?.parser)
          events = nil
          try await handleEnd(nil)
        } catch {
          note(events?.parser)
          events = nil
          try await handleEnd(error)
        }
      }
      return nil
    }

    private mutating func note(_ parser: ServerSentEventParser?) {
      guard let parser else { return }
      lastEventID = parser.lastEventID
      if let time = parser.reconnectionTime { retryInterval = TimeInterval(time) / 1000 }
    }

    private mutating func connect() async throws -> FetcherStream? {
      var request = source.request
      request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
      request.setValue("no-cache", forHTTPHeaderField: "Cache-Control")
      if !lastEventID.isEmpty { request.setValue(lastEventID, forHTTPHeaderField: "Last-Event-ID") }
      let fetcher = source.makeFetcher(request)
      fetcher.minRetryInterval = retryInterval
      connectionCount += 1
      let stream = try await fetcher.beginStreaming()
      // 204 No Content: the server asks the client not to reconnect.
      return stream.httpResponse?.statusCode == 204 ? nil : stream
    }

    /// A connection ended (normally when `error` is nil): wait and reconnect, or give up.
    private mutating func handleEnd(_ error: (any Error)?) async throws {
      if let error {
        let fetcherError = error as? SessionFetcherError
        // An event past the fetcher's limit would come again: end the sequence.
        if fetcherError?.statusCode != nil || fetcherError == .cancelled || Task.isCancelled
          || fetcherError?.isResponseTooLarge == true
        {
          isDone = true
          throw error
        }
      }
      failuresInARow += 1
      guard failuresInARow <= source.maximumReconnections else {
        isDone = true
        if let error { throw error }
        return
      }
      do {
        try await Task.sleep(nanoseconds: UInt64(Swift.max(0, retryInterval) * 1_000_000_000))
      } catch {
        isDone = true
        throw SessionFetcherError.cancelled
      }
    }
  }
}

extension SessionFetcher {
  /// Server-sent events from `url`, reconnecting with `Last-Event-ID` when the connection ends.
  ///
  /// - Parameters:
  ///   - url: the event stream.
  ///   - maximumReconnections: reconnections allowed in a row without receiving an event (default 5).
  ///   - defaultRetryInterval: seconds before reconnecting until the server sends `retry:` (default 3).
  ///   - makeFetcher: makes the fetcher of each connection (default: a standalone fetcher); use it to
  ///     take fetchers from a service or to set credentials, `allowLocalhostRequest` and the like.
  public static func eventSource(
    url: URL, maximumReconnections: Int = 5, defaultRetryInterval: TimeInterval = 3,
    makeFetcher: @escaping @Sendable (URLRequest) -> SessionFetcher = { SessionFetcher(request: $0) }
  ) -> EventSource {
    EventSource(
      request: URLRequest(url: url), maximumReconnections: max(0, maximumReconnections),
      defaultRetryInterval: defaultRetryInterval, makeFetcher: makeFetcher)
  }
}
