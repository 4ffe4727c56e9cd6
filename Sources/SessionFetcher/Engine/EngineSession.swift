import Foundation

/// An engine's session: what moves the exchanges of the fetchers that share one ``SharedSession``.
///
/// The fetcher decides everything HTTP and asks its engine session only to make one exchange at a
/// time (``makeTask(request:body:tls:route:handler:)``), to end, and what the engine can do; it
/// never asks which engine it has. ``EngineSessionFactory`` makes the implementation of each
/// ``FetcherEngine``; an engine's workarounds stay in its own folder under `Engine/`.
///
/// Thread safety: every member may be called from any thread.
package protocol EngineSession: AnyObject, Sendable {
  /// How a stream whose consumer is behind is paused on this engine (see ``StreamPausing``).
  var pausing: StreamPausing.Method { get }

  /// Whether a stream's buffer copies each chunk on arrival into memory of its own (a
  /// `ByteRing`) instead of keeping the engine's `Data` until the consumer takes it: true where
  /// the engine allocates its chunks on many threads (FoundationNetworking). Default false.
  var streamBuffersCopyChunks: Bool { get }

  /// Whether the engine has a timer of its own for a request's `timeoutInterval`, which must not
  /// fire before the fetcher's: the fetcher then sets a later backstop (see
  /// `SessionFetcher.transportTimeout(backing:)`). An engine without one leaves timeouts to the
  /// fetcher.
  var enforcesRequestTimeout: Bool { get }

  /// The clock of the fetch's own timers (its timeout checks, its retry waits) on this session.
  /// Default ``SystemFetchClock/shared``; a test's engine may run them on virtual time.
  var clock: any FetchClock { get }

  /// Nil when the engine honours ``TLSSettings`` other than the defaults; else the end of the
  /// refusal that follows "TLSSettings *names* on ": the engine, what it lacks and what to use
  /// instead.
  var tlsSettingsLimitation: String? { get }

  /// Nil when the engine honours a ``TransportRoute`` other than the default (a proxy of the
  /// fetcher's, a Unix socket); else the end of the refusal that follows "*settings* on ".
  var routeLimitation: String? { get }

  /// Whether long-lived streams of the fetchers sharing this session share one sibling session of
  /// their own, without the per-host cap (``SharedSession/streamingSession()``); when false, each
  /// stream gets a session of its own, owned by its fetch.
  var sharesOneSessionAmongStreams: Bool { get }

  /// Whether ``makeTask(request:body:tls:route:handler:)`` sends an
  /// ``EngineBody/sizedStream(_:length:)`` of `request` with its `Content-Length`. When false the
  /// fetcher never hands the engine one: it sends a stream of known length as data or a file (see
  /// `BodySpool`).
  func sendsSizedStreams(for request: URLRequest) -> Bool

  /// Creates a task for `request` and `body` whose events go to `handler`, or returns nil if the
  /// session is invalidated or the engine cannot run. The task is not resumed.
  ///
  /// `tls` and `route` are the fetcher's; it refuses settings the engine does not honour
  /// (``tlsSettingsLimitation``, ``routeLimitation``) before it gets here.
  func makeTask(
    request: URLRequest, body: EngineBody, tls: TLSSettings, route: TransportRoute,
    handler: any SessionTaskHandler
  ) -> (any EngineTask)?

  /// Whether the session was invalidated (no task may be created on it any more).
  var isInvalidated: Bool { get }

  /// Lets running tasks finish, then invalidates the session. No task can be created afterwards.
  func finishTasksAndInvalidate()

  /// Cancels every task and invalidates the session; may wait for the engine.
  func invalidateAndCancel()

  /// ``invalidateAndCancel()`` without the caller waiting for the engine: the session takes no task
  /// from now on, and its tasks are cancelled where that holds up no fetch (for a fetch that owned
  /// the session and has ended).
  func invalidateAndCancelWithoutWaiting()

  /// Why fetches cannot run on this engine here (a library that cannot be loaded), or nil when they
  /// can. A fetch on a session whose engine is unavailable fails when it begins with
  /// ``SessionFetcherError/engineUnavailable(_:)``. Default: nil.
  var unavailableReason: String? { get }
}

extension EngineSession {
  package var unavailableReason: String? { nil }
}

extension EngineSession {
  package var streamBuffersCopyChunks: Bool { false }
}
