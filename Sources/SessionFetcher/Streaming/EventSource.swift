import Foundation

/// A server-sent event stream that reconnects, as a browser's `EventSource` does, with one backoff
/// policy of its own, a limit, and a way to see each reconnection.
///
/// ```swift
/// for try await event in SessionFetcher.eventSource(url: feedURL) {
///   print(event.event, event.data)
/// }
/// ```
///
/// Iterating the source gives its events; ``updates`` gives the same events and, between them,
/// every reconnection with its cause and delay (``EventSourceUpdate``), before the wait begins.
///
/// **Connections.** Each connection is one fetch by a fresh ``SessionFetcher`` from `makeFetcher`
/// with `Accept: text/event-stream`, `Cache-Control: no-cache`, and `Last-Event-ID` when there is a
/// last event ID: the one given to
/// ``SessionFetcher/eventSource(url:lastEventID:maximumReconnections:defaultRetryInterval:maximumRetryInterval:makeFetcher:)``
/// (an ID saved by an earlier run) until the stream receives one of its own. The fetcher's own
/// retries are turned off (``SessionFetcher/isRetryEnabled``, even for a fetcher a service made
/// with retries on): the stream's policy alone decides when to ask again, so that the delays and
/// the requests of the two do not multiply.
///
/// **When it reconnects.** After a connection ends normally or fails in transport, or is answered
/// 408, 429, 502, 503 or 504 (a server that is down or busy), the stream waits and connects again.
/// The delay of reconnection attempt n (counted from 1 since a connection last received anything:
/// an event, a comment or a field, so that a server closing idle connections is not taken for one
/// that is down) is the base interval — the server's latest `retry:` field, else
/// `defaultRetryInterval` (3 s) — doubled for each attempt after the first and capped by
/// `maximumRetryInterval` (30 s); a `retry:` above the cap is used as it is, and a `Retry-After` on
/// a 429 or 503 lengthens the delay. So a stream whose server went away reconnects after 3, 6, 12,
/// 24 and 30 s, and a dropped connection that had delivered events is resumed after the base
/// interval.
///
/// **When it ends.** After `maximumReconnections` (5) reconnection attempts in a row that received
/// nothing, the sequence throws ``EventSourceError/gaveUp(url:attempts:lastCause:)``. As in
/// browsers, a 204 ends it (nil, no error), and it throws without reconnecting for another HTTP error status
/// (``SessionFetcherError/status(code:data:)``), a response that is not a 200 `text/event-stream`
/// (``EventSourceError/notAnEventStream(url:status:contentType:)``), an event longer than the
/// fetcher's ``SessionFetcher/maximumEventLength`` (``SessionFetcherError/responseTooLarge(limit:)``:
/// the server would send it again), an error of the request's configuration, URL or TLS, and
/// cancelling the consuming task (``SessionFetcherError/cancelled``, also during a wait).
/// Iterate once.
public struct EventSource: AsyncSequence, Sendable {
  /// The event type.
  public typealias Element = ServerSentEvent

  let request: URLRequest
  let lastEventID: String
  let maximumReconnections: Int
  let defaultRetryInterval: TimeInterval
  let maximumRetryInterval: TimeInterval
  let makeFetcher: @Sendable (URLRequest) -> SessionFetcher
  /// Waits before a reconnection; a test clock replaces it.
  var sleep: @Sendable (TimeInterval) async throws -> Void = { seconds in
    try await Task.sleep(nanoseconds: EventSourceReconnection.nanoseconds(seconds))
  }

  /// The URL of the stream.
  public var url: URL { request.url ?? URL(fileURLWithPath: "/") }

  /// The events and the reconnections of the stream, in the order they happen.
  public var updates: EventSourceUpdates { EventSourceUpdates(source: self) }

  /// This source, waiting before each reconnection with `sleep` instead of `Task.sleep` (for a
  /// test clock).
  package func waiting(with sleep: @escaping @Sendable (TimeInterval) async throws -> Void) -> EventSource {
    var source = self
    source.sleep = sleep
    return source
  }

  /// Iterates the events of every connection in turn.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(updates: updates.makeAsyncIterator())
  }

  /// Gives the events; connects on the first `next()`.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var updates: EventSourceUpdates.AsyncIterator

    /// The interval a first reconnection waits: the server's latest `retry:`, else the default.
    public var retryInterval: TimeInterval { updates.retryInterval }
    /// The last event ID received (or the one the stream started from), sent as `Last-Event-ID`.
    public var lastEventID: String { updates.lastEventID }
    /// Connections made so far.
    public var connectionCount: Int { updates.connectionCount }

    /// The next event, or nil when the stream ended for good (a 204). Reconnections happen within.
    ///
    /// - Throws: what ``EventSourceUpdates/AsyncIterator/next()`` throws.
    public mutating func next() async throws -> ServerSentEvent? {
      while let update = try await updates.next() {
        if case .event(let event) = update { return event }
      }
      return nil
    }
  }
}

extension SessionFetcher {
  /// Server-sent events from `url`, reconnecting with `Last-Event-ID` when a connection ends (see
  /// ``EventSource`` for the policy).
  ///
  /// ```swift
  /// let source = SessionFetcher.eventSource(url: feedURL, lastEventID: savedID)
  /// for try await update in source.updates {
  ///   if case .event(let event) = update { savedID = event.id }
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - url: the event stream.
  ///   - lastEventID: the ID to send as `Last-Event-ID` on the first request (one saved from an
  ///     earlier run); nil or empty sends none.
  ///   - maximumReconnections: reconnection attempts allowed in a row without receiving anything
  ///     before the sequence throws ``EventSourceError/gaveUp(url:attempts:lastCause:)`` (default 5).
  ///   - defaultRetryInterval: seconds before the first reconnection until the server sends `retry:`
  ///     (default 3).
  ///   - maximumRetryInterval: the cap of the doubling delay of later attempts (default 30).
  ///   - makeFetcher: makes the fetcher of each connection (default: a standalone fetcher); use it to
  ///     take fetchers from a service or to set credentials, `allowLocalhostRequest` and the like. Its
  ///     retries are turned off.
  public static func eventSource(
    url: URL, lastEventID: String? = nil, maximumReconnections: Int = 5,
    defaultRetryInterval: TimeInterval = 3,
    maximumRetryInterval: TimeInterval = 30,
    makeFetcher: @escaping @Sendable (URLRequest) -> SessionFetcher = { SessionFetcher(request: $0) }
  ) -> EventSource {
    EventSource(
      request: URLRequest(url: url), lastEventID: lastEventID ?? "",
      maximumReconnections: max(0, maximumReconnections),
      defaultRetryInterval: defaultRetryInterval, maximumRetryInterval: maximumRetryInterval,
      makeFetcher: makeFetcher)
  }
}
