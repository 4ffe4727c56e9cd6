import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What the fetcher sent on one exchange of a ``ScriptedEngine``, and what it did with the exchange.
public struct ScriptedRequest: Sendable {
  /// The exchange's place among all the exchanges of the engine, from 0.
  public var index: Int
  /// The request method (`GET` when the request names none).
  public var method: String
  /// The request URL.
  public var url: URL
  /// The request headers as the engine would send them (the session configuration's
  /// `httpAdditionalHeaders` included).
  public var headers: [String: String]
  /// The body bytes, read when the exchange starts (empty until then, and for none).
  public var body: Data
  /// Whether the exchange was made without any script to answer it (it failed with
  /// ``ScriptedEngineError/noScript(method:url:)``).
  public var wasUnscripted: Bool
  /// What the fetcher did with the exchange (resumed, suspended, cancelled) and how it ended, in
  /// order.
  public var events: [ScriptedTaskEvent]

  /// The value of the header `name` (case-insensitive), or nil.
  public func header(_ name: String) -> String? {
    headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
  }

  /// The URL's path.
  public var path: String { url.path }

  /// Whether the fetcher cancelled the exchange (a timeout, a stop, a pause that cancels).
  public var wasCancelled: Bool { events.contains { $0.kind == .cancelled } }

  /// Whether the exchange has completed (fetched, failed or cancelled); after it, the engine tells
  /// its fetcher nothing more of it.
  public var hasCompleted: Bool {
    events.contains { $0.kind == .completed(failed: false) || $0.kind == .completed(failed: true) }
  }

  /// How many times the fetcher suspended the exchange (backpressure on a stream).
  public var suspensionCount: Int { events.filter { $0.kind == .suspended }.count }
}

/// Something that happened to one exchange of a ``ScriptedEngine``, and when.
public struct ScriptedTaskEvent: Sendable, Equatable, CustomStringConvertible {
  /// What happened.
  public enum Kind: Sendable, Equatable {
    /// The fetcher resumed the exchange: its start, or going on after ``suspended``.
    case resumed
    /// The fetcher suspended the exchange: the engine performs no step until it is resumed.
    case suspended
    /// The fetcher cancelled the exchange (directly, or by letting go of it).
    case cancelled
    /// The exchange completed; `failed` when with an error (a cancellation included).
    case completed(failed: Bool)
  }

  /// What happened.
  public var kind: Kind
  /// The order of the event among every exchange's events of the engine, from 0.
  public var sequence: Int
  /// How many steps of the script the engine had performed by then.
  public var performedSteps: Int
  /// How many body bytes the engine had handed to the fetcher by then.
  public var deliveredBodyBytes: Int

  /// The event, the steps and the bytes, for a test's failure message.
  public var description: String {
    "\(kind) after \(performedSteps) steps, \(deliveredBodyBytes) bytes (#\(sequence))"
  }
}
