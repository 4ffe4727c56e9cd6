import Foundation

/// What the fetchers that share it run on: a configuration and the ``EngineSession`` of its
/// ``FetcherEngine`` (made by ``EngineSessionFactory``), or of an engine a test gives
/// (``init(configuration:engineSessions:)``), plus, where the engine shares one among streams, the
/// sibling session of long-lived streams.
///
/// `@unchecked Sendable`: mutable state lives in `state`, a `Locked`.
package final class SharedSession: @unchecked Sendable {
  private struct State {
    var invalidated = false
    /// The session that long-lived streams share (see ``streamingSession()``).
    var streaming: SharedSession?
  }

  private let state = Locked(State())
  package let configuration: URLSessionConfiguration
  /// Makes the engine sessions of this session and of its siblings (see ``EngineSessionMaker``).
  package typealias EngineSessionMaker = @Sendable (URLSessionConfiguration) -> any EngineSession

  /// What moves the bytes of this session's tasks; nil for an engine a test gives.
  package let engine: FetcherEngine?
  /// The engine's session.
  package let engineSession: any EngineSession
  /// Makes the engine session of a sibling (``init(copying:)``, ``streamingSession()``).
  private let makeEngineSession: EngineSessionMaker

  private static let standaloneSessions = Locked<[FetcherEngine: SharedSession]>([:])

  /// The session that fetchers made outside a service share, one per engine.
  package static func standalone(_ engine: FetcherEngine) -> SharedSession {
    standaloneSessions.withLock { sessions in
      if let session = sessions[engine] { return session }
      let session = SharedSession(configuration: nil, engine: engine)
      sessions[engine] = session
      return session
    }
  }

  /// How a stream whose consumer is behind is paused on this session's engine: libcurl really
  /// stops reading; FoundationNetworking cannot (see ``StreamPausing``).
  var pausing: StreamPausing.Method { engineSession.pausing }

  /// Whether a stream's buffer copies the chunks of this session's engine on arrival.
  var streamBuffersCopyChunks: Bool { engineSession.streamBuffersCopyChunks }

  /// Whether the engine has a timer of its own for a request's timeout, which must not fire before
  /// the fetcher's: URLSession's (whole seconds on Linux); the libcurl engine leaves timeouts to the
  /// fetcher.
  package var enforcesRequestTimeout: Bool { engineSession.enforcesRequestTimeout }

  /// See ``EngineSession/tlsSettingsLimitation``.
  var tlsSettingsLimitation: String? { engineSession.tlsSettingsLimitation }

  /// See ``EngineSession/routeLimitation``.
  var routeLimitation: String? { engineSession.routeLimitation }

  /// - Parameters:
  ///   - configuration: the base configuration, or nil for ``defaultConfiguration(for:)``. It is copied
  ///     and adjusted: no URLCache (the library keeps its own ETag cache), no platform cookie
  ///     handling (the library keeps its own jars).
  ///   - engine: what moves the bytes.
  package convenience init(configuration: URLSessionConfiguration?, engine: FetcherEngine = .urlSession) {
    self.init(
      configuration: configuration ?? SharedSession.defaultConfiguration(for: engine), engine: engine,
      engineSessions: { EngineSessionFactory.makeSession(engine, configuration: $0) })
  }

  /// A session whose exchanges move on the engine sessions `engineSessions` makes (a test's
  /// scripted engine): the fetcher uses it as it uses any other.
  ///
  /// - Parameters:
  ///   - configuration: the base configuration, or nil for ``defaultConfiguration(for:)``; copied and
  ///     adjusted as in ``init(configuration:engine:)``.
  ///   - engineSessions: makes the engine session of this session, and of each sibling made from it,
  ///     from its adjusted configuration.
  package convenience init(
    configuration: URLSessionConfiguration?, engineSessions: @escaping EngineSessionMaker
  ) {
    self.init(
      configuration: configuration ?? SharedSession.defaultConfiguration(), engine: nil,
      engineSessions: engineSessions)
  }

  private init(
    configuration: URLSessionConfiguration, engine: FetcherEngine?,
    engineSessions: @escaping EngineSessionMaker
  ) {
    let config = SharedSession.adjusted(configuration)
    self.configuration = config
    self.engine = engine
    self.makeEngineSession = engineSessions
    self.engineSession = engineSessions(config)
  }

  /// Why fetches cannot run on this session's engine here, or nil when they can (see
  /// ``EngineSession/unavailableReason``).
  package var unavailableReason: String? { engineSession.unavailableReason }

  /// The configuration of sessions made without one: ephemeral, with `engine`'s per-host
  /// connection limit where it sets one (see
  /// ``EngineSessionFactory/applyDefaults(of:to:)``). Long-lived streams do not take one of those
  /// connections: they get a session of their own (see ``sessionForStream()``).
  package static func defaultConfiguration(for engine: FetcherEngine = .urlSession) -> URLSessionConfiguration
  {
    let config = URLSessionConfiguration.ephemeral
    EngineSessionFactory.applyDefaults(of: engine, to: config)
    return config
  }

  /// A session of its own with the configuration of `session` (for a long-lived stream).
  package convenience init(copying session: SharedSession) {
    self.init(
      configuration: session.configuration, engine: session.engine,
      engineSessions: session.makeEngineSession)
  }

  /// Applies the settings every fetcher session needs (FoundationNetworking workarounds among them).
  package static func adjusted(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
    guard let config = configuration.copy() as? URLSessionConfiguration else { return configuration }
    // URLCache never stores on Linux, but entries stored by hand would short-circuit requests.
    config.urlCache = nil
    config.requestCachePolicy = .reloadIgnoringLocalCacheData
    // Per-request cookie flags are ignored on Linux: the fetcher adds and stores cookies itself.
    config.httpShouldSetCookies = false
    config.httpCookieAcceptPolicy = .never
    config.httpCookieStorage = nil
    return config
  }

  /// Whether the session was invalidated (no task may be created on it any more).
  package var isInvalidated: Bool { engineSession.isInvalidated }

  /// Whether ``makeTask(request:body:tls:route:handler:)`` sends an
  /// ``EngineBody/sizedStream(_:length:)`` of `request` with its `Content-Length`: on the libcurl
  /// engine (for http and https). URLSession sends any stream chunked (see `BodySpool`).
  package func sendsSizedStreams(for request: URLRequest) -> Bool {
    engineSession.sendsSizedStreams(for: request)
  }

  /// Creates a task for `request` and `body` and registers `handler` for it, or returns nil if the
  /// session is invalidated. The task is not resumed.
  /// `tls` and `route` apply where the engine honours them (the fetcher refuses settings other
  /// than the defaults on another engine before it gets here).
  package func makeTask(
    request: URLRequest, body: EngineBody, tls: TLSSettings = TLSSettings(),
    route: TransportRoute = TransportRoute(), handler: any SessionTaskHandler
  ) -> (any EngineTask)? {
    engineSession.makeTask(request: request, body: body, tls: tls, route: route, handler: handler)
  }

  /// The session a long-lived stream (event streams, `events()`) of a fetcher sharing this one
  /// runs on, and whether the fetch owns it: a stream may stay open for hours, and on this session
  /// it would hold one of the few connections per host (see ``defaultConfiguration(for:)``) from
  /// every short request. Where the engine shares one session among streams, the
  /// ``streamingSession()``; else a session of the stream's own.
  package func sessionForStream() -> (session: SharedSession, owned: Bool) {
    if engineSession.sharesOneSessionAmongStreams { return (streamingSession(), false) }
    return (SharedSession(copying: self), true)
  }

  /// The session that long-lived streams of this one share: the same configuration without the
  /// per-host cap, so that open streams never hold the connections short requests wait for, and
  /// (on the libcurl engine) one more loop thread, not one per stream. Invalidated with this session.
  package func streamingSession() -> SharedSession {
    state.withLock { state in
      if let streaming = state.streaming { return streaming }
      let configuration = SharedSession.adjusted(self.configuration)
      configuration.httpMaximumConnectionsPerHost = 0
      let streaming = SharedSession(
        configuration: configuration, engine: engine, engineSessions: makeEngineSession)
      if state.invalidated { streaming.finishTasksAndInvalidate() } else { state.streaming = streaming }
      return streaming
    }
  }

  /// Lets running tasks finish, then invalidates the session. No task can be created afterwards.
  package func finishTasksAndInvalidate() {
    invalidate()
    engineSession.finishTasksAndInvalidate()
  }

  /// Cancels every task and invalidates the session.
  package func invalidateAndCancel() {
    invalidate()
    engineSession.invalidateAndCancel()
  }

  /// ``invalidateAndCancel()`` without the caller waiting for the engine (see
  /// ``EngineSession/invalidateAndCancelWithoutWaiting()``).
  package func invalidateAndCancelWithoutWaiting() {
    invalidate()
    engineSession.invalidateAndCancelWithoutWaiting()
  }

  /// Marks the session invalidated and lets the streams' session finish.
  private func invalidate() {
    let streaming = state.withLock { state in
      state.invalidated = true
      defer { state.streaming = nil }
      return state.streaming
    }
    streaming?.finishTasksAndInvalidate()
  }
}
