import Foundation

/// Why an event stream ended for good, or why one of its connections ended.
public enum EventSourceError: Error, Sendable, CustomStringConvertible {
  /// The server ended a response normally. Not thrown: it is the cause of a reconnection
  /// (``EventSourceUpdate/reconnecting(after:cause:attempt:)``), and the last cause of
  /// ``gaveUp(url:attempts:lastCause:)`` when the server kept closing the stream.
  case streamEnded(url: URL)
  /// The server answered with something other than an event stream: a 2xx other than 200 and 204,
  /// or a 200 whose `Content-Type` is not `text/event-stream` (nil: it had none). As in browsers,
  /// the stream ends without reconnecting.
  case notAnEventStream(url: URL, status: Int, contentType: String?)
  /// The stream reconnected `attempts` times in a row without receiving anything (its
  /// `maximumReconnections`), and the last of those connections failed with `lastCause`.
  case gaveUp(url: URL, attempts: Int, lastCause: any Error)

  /// The URL of the stream.
  public var url: URL {
    switch self {
    case .streamEnded(let url), .notAnEventStream(let url, _, _), .gaveUp(let url, _, _): return url
    }
  }

  /// What happened, with the URL.
  public var description: String {
    switch self {
    case .streamEnded(let url):
      return "the server ended the event stream \(url.absoluteString)"
    case .notAnEventStream(let url, let status, let contentType):
      return
        "\(url.absoluteString) is not an event stream (status \(status), Content-Type \(contentType ?? "none"))"
    case .gaveUp(let url, let attempts, let lastCause):
      return
        "gave up on the event stream \(url.absoluteString) after \(attempts) reconnection attempts in a row "
        + "without receiving anything; the last one failed with: \(Self.brief(lastCause))"
    }
  }

  /// A transport error as its code and message, not the whole `NSError` with its user info.
  private static func brief(_ error: any Error) -> String {
    guard let error = error as? URLError else { return "\(error)" }
    return "URLError \(error.code.rawValue) (\(error.localizedDescription))"
  }
}

/// The reconnection decisions of an event stream, as a value: the stream reports how each
/// connection ended, and this answers whether to reconnect and after how long. No I/O.
///
/// The delay before reconnection attempt n (counted from 1 since the last connection that received
/// anything: an event, a comment, a field; a server that closes idle connections is not down) is the
/// base interval — the server's latest `retry:`, else ``defaultInterval`` — doubled for each
/// attempt after the first, and capped by ``maximumInterval``; a base above the cap is used as it
/// is (the server asked for it). A `Retry-After` on a 429 or 503 lengthens the delay, never
/// shortens it. After ``maximumReconnections`` attempts in a row, the stream gives up.
package struct EventSourceReconnection: Sendable, Equatable {
  /// What to do after a connection ended.
  package enum Decision: Sendable, Equatable {
    /// Wait `delay`, then make reconnection attempt `attempt` (1 for the first since an event).
    case reconnect(after: TimeInterval, attempt: Int)
    /// End the stream with the connection's error: reconnecting would not help.
    case fail
    /// End the stream: `attempts` reconnections in a row received nothing.
    case giveUp(attempts: Int)
  }

  package let defaultInterval: TimeInterval
  package let maximumInterval: TimeInterval
  package let maximumReconnections: Int
  /// The server's latest `retry:`, in seconds.
  package private(set) var serverInterval: TimeInterval?
  /// Reconnection attempts made since a connection last received anything.
  package private(set) var attemptsInARow = 0

  package init(defaultInterval: TimeInterval, maximumInterval: TimeInterval, maximumReconnections: Int) {
    self.defaultInterval = defaultInterval.isNaN ? 0 : max(0, defaultInterval)
    self.maximumInterval = maximumInterval.isNaN ? 0 : max(0, maximumInterval)
    self.maximumReconnections = max(0, maximumReconnections)
  }

  /// The interval the next first attempt would wait: the server's `retry:`, else the default.
  package var baseInterval: TimeInterval { serverInterval ?? defaultInterval }

  /// The server set its reconnection time with `retry:` (milliseconds).
  package mutating func serverAsked(retryMilliseconds: Int) {
    serverInterval = TimeInterval(max(0, retryMilliseconds)) / 1000
  }

  /// A connection received part of the stream (an event, a comment, a field): it works, and the
  /// count of attempts starts again.
  package mutating func didReceiveData() {
    attemptsInARow = 0
  }

  /// A connection ended with `cause` (``EventSourceError/streamEnded(url:)`` when the server ended
  /// it normally); `retryAfter` is the server's `Retry-After` delay, if it sent one with a 429 or
  /// 503.
  package mutating func connectionEnded(with cause: any Error, retryAfter: TimeInterval? = nil) -> Decision {
    guard Self.isReconnectable(cause) else { return .fail }
    guard attemptsInARow < maximumReconnections else { return .giveUp(attempts: attemptsInARow) }
    attemptsInARow += 1
    var delay = Self.delay(base: baseInterval, cap: maximumInterval, attempt: attemptsInARow)
    if let retryAfter, retryAfter > delay { delay = retryAfter }
    return .reconnect(after: delay, attempt: attemptsInARow)
  }

  /// The backoff: `base` doubled for each attempt after the first, at most `cap`, unless `base`
  /// itself is larger.
  package static func delay(base: TimeInterval, cap: TimeInterval, attempt: Int) -> TimeInterval {
    guard base > 0 else { return 0 }
    guard base < cap else { return base }
    // Past 2^62 the product is past any cap anyway.
    let grown = base * pow(2, Double(min(max(0, attempt - 1), 62)))
    return min(cap, grown)
  }

  /// Whether a connection that ended with `error` is worth another: a transport failure, a
  /// normal end, or a status a server gives while it is down or busy (408, 429, 502, 503, 504).
  /// Not: another HTTP status, a response that is not an event stream, an event past the limit, a
  /// cancellation, an error of the request's configuration, URL or TLS.
  package static func isReconnectable(_ error: any Error) -> Bool {
    if let error = error as? EventSourceError {
      if case .streamEnded = error { return true }
      return false
    }
    if let error = error as? SessionFetcherError {
      if let status = error.statusCode { return RetryPolicy.retryableStatuses.contains(status) }
      if case .streamInterrupted = error { return true }
      return false
    }
    if error is CancellationError { return false }
    if let error = error as? URLError { return !permanentTransportErrors.contains(error.code) }
    return true
  }

  /// Transport errors that another attempt would get again.
  private static let permanentTransportErrors: Set<URLError.Code> = [
    .cancelled, .badURL, .unsupportedURL, .userCancelledAuthentication, .userAuthenticationRequired,
    .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate,
    .serverCertificateNotYetValid, .clientCertificateRequired, .clientCertificateRejected,
    .appTransportSecurityRequiresSecureConnection,
  ]

  /// `seconds` as the nanoseconds of a sleep, clamped so that any delay a server asks for (however
  /// many digits its `retry:` has) converts without overflow.
  package static func nanoseconds(_ seconds: TimeInterval) -> UInt64 {
    guard !seconds.isNaN, seconds > 0 else { return 0 }
    return UInt64(min(seconds * 1_000_000_000, 9e18))
  }
}
