import Foundation

/// The engine instance shared by fetchers: a delegate-based URLSession with the settings the
/// library relies on and an invalidation flag of its own, or a ``CurlEngine`` (one event-loop
/// thread) made from the same configuration.
///
/// Creating a task on an invalidated URLSession kills the process on Linux (a `fatalError` in
/// FoundationNetworking) and raises on Apple platforms, so every task creation checks the flag
/// under the same lock that `invalidate` sets it under.
///
/// `@unchecked Sendable`: mutable state lives in `state`, a `Locked`.
package final class FetcherSession: @unchecked Sendable {
  private struct State {
    var session: URLSession?
    #if canImport(FoundationNetworking)
      var curl: CurlEngine?
    #endif
    var invalidated = false
    /// The libcurl engine's session for long-lived streams (see ``streamingSession()``).
    var streaming: FetcherSession?
  }

  package let dispatcher: SessionDispatcher
  private let state = Locked(State())
  package let configuration: URLSessionConfiguration
  /// What moves the bytes of this session's tasks.
  package let engine: FetcherEngine

  private static let standaloneURLSession = FetcherSession(configuration: nil, engine: .urlSession)
  private static let standaloneCurl = FetcherSession(configuration: nil, engine: .libcurl)

  /// The session that fetchers made outside a service share, one per engine.
  package static func standalone(_ engine: FetcherEngine) -> FetcherSession {
    engine == .libcurl ? standaloneCurl : standaloneURLSession
  }

  /// How a stream whose consumer is behind is paused on this session's engine: libcurl really
  /// stops reading; FoundationNetworking cannot (see ``StreamPausing``).
  var pausing: StreamPausing.Method {
    engine == .libcurl ? .suspendTask : StreamPausing.method
  }

  /// Whether the engine has a timer of its own for a request's timeout, which must not fire before
  /// the fetcher's: URLSession's (whole seconds on Linux); the libcurl engine leaves timeouts to the
  /// fetcher.
  package var enforcesRequestTimeout: Bool { engine == .urlSession }

  /// - Parameters:
  ///   - configuration: the base configuration, or nil for ``defaultConfiguration(for:)``. It is copied
  ///     and adjusted: no URLCache (the library keeps its own ETag cache), no platform cookie
  ///     handling (the library keeps its own jars).
  ///   - engine: what moves the bytes.
  package init(configuration: URLSessionConfiguration?, engine: FetcherEngine = .urlSession) {
    let config = FetcherSession.adjusted(configuration ?? FetcherSession.defaultConfiguration(for: engine))
    self.configuration = config
    self.engine = engine
    let state = self.state
    self.dispatcher = SessionDispatcher(onInvalidate: {
      state.withLock {
        $0.invalidated = true
        $0.session = nil
      }
    })
  }

  /// The configuration of sessions made without one: ephemeral and, on Linux, at most
  /// ``linuxConnectionsPerHost`` connections per host for URLSession, ``curlConnectionsPerHost``
  /// for libcurl.
  ///
  /// libcurl keeps at most four idle connections per transfer it has attached, and
  /// FoundationNetworking does not raise that cap: with more than four requests in flight to one
  /// host, connections are closed and opened again (a new TLS handshake each over https). Four is
  /// the one per-host limit that never does; iOS uses the same limit by default. Long-lived
  /// streams do not take one of the four: they get a session of their own (see `makePlan`). The
  /// libcurl engine sizes its connection cache for its limit itself, so it never churns.
  package static func defaultConfiguration(for engine: FetcherEngine = .urlSession) -> URLSessionConfiguration
  {
    let config = URLSessionConfiguration.ephemeral
    #if canImport(FoundationNetworking)
      config.httpMaximumConnectionsPerHost =
        engine == .libcurl ? curlConnectionsPerHost : linuxConnectionsPerHost
    #endif
    return config
  }

  /// The per-host connection limit of ``defaultConfiguration(for:)`` on Linux, URLSession engine.
  package static let linuxConnectionsPerHost = 4

  /// The per-host connection limit of ``defaultConfiguration(for:)`` on the libcurl engine: enough
  /// for a service's default 10 fetches per host and 16 in flight without waiting.
  package static let curlConnectionsPerHost = 16

  /// A session of its own with the configuration of `session` (for a long-lived stream).
  package convenience init(copying session: FetcherSession) {
    self.init(configuration: session.configuration, engine: session.engine)
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
  package var isInvalidated: Bool { state.withLock { $0.invalidated } }

  private func liveSession(_ state: inout State) -> URLSession? {
    if state.invalidated { return nil }
    if let session = state.session { return session }
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    queue.name = "SessionFetcher.delegate"
    let session = URLSession(configuration: configuration, delegate: dispatcher, delegateQueue: queue)
    state.session = session
    return session
  }

  /// Whether ``makeTask(request:body:tls:handler:)`` sends an ``EngineBody/sizedStream(_:length:)``
  /// of `request` with its `Content-Length`: on the libcurl engine (for http and https). URLSession
  /// sends any stream chunked (see `BodySpool`).
  package func sendsSizedStreams(for request: URLRequest) -> Bool {
    #if canImport(FoundationNetworking)
      guard engine == .libcurl, let scheme = request.url?.scheme?.lowercased() else { return false }
      return scheme == "http" || scheme == "https"
    #else
      return false
    #endif
  }

  /// Creates a task for `request` and `body` and registers `handler` for it, or returns nil if the
  /// session is invalidated. The task is not resumed.
  /// `tls` applies on the libcurl engine (the fetcher refuses settings other than the defaults on
  /// the URLSession engine before it gets here).
  package func makeTask(
    request: URLRequest, body: EngineBody, tls: TLSSettings = TLSSettings(),
    route: TransportRoute = TransportRoute(), handler: any SessionTaskHandler
  ) -> (any EngineTask)? {
    #if canImport(FoundationNetworking)
      // libcurl moves http and https; URLSession still answers data: and file: URLs.
      if engine == .libcurl, let scheme = request.url?.scheme?.lowercased(),
        scheme == "http" || scheme == "https"
      {
        return makeCurlTask(
          request: FetcherSession.addingHeaders(configuration.httpAdditionalHeaders, to: request), body: body,
          tls: tls, route: route, handler: handler)
      }
    #endif
    // Read before taking the lock: a file body small enough is sent from memory (see
    // `FileUploadPauseRace`: FoundationNetworking's file source can crash the process).
    var fileBytes: Data?
    #if canImport(FoundationNetworking)
      if case .file(let url) = body { fileBytes = FileUploadPauseRace.inMemoryBody(for: url) }
    #endif
    return state.withLock { state -> (any EngineTask)? in
      guard let session = liveSession(&state) else { return nil }
      let task: URLSessionTask
      switch body {
      case .none:
        task = session.dataTask(with: request)
      case .data(let data):
        task = session.uploadTask(with: request, from: data)
      case .file(let url):
        if let fileBytes {
          task = session.uploadTask(with: request, from: fileBytes)
        } else {
          task = session.uploadTask(with: request, fromFile: url)
        }
      case .stream(let stream), .sizedStream(let stream, _):
        // Never with a length here: FoundationNetworking would frame it twice (corelibs #4818).
        var streamed = request
        streamed.setValue(nil, forHTTPHeaderField: "Content-Length")
        streamed.httpBodyStream = stream
        task = session.dataTask(with: streamed)
      }
      dispatcher.register(handler, for: task)
      return task
    }
  }

  /// `request` with the configuration's `httpAdditionalHeaders` that it does not set itself, as
  /// URLSession adds them.
  static func addingHeaders(_ headers: [AnyHashable: Any]?, to request: URLRequest) -> URLRequest {
    guard let headers, !headers.isEmpty else { return request }
    var request = request
    for (key, value) in headers {
      guard let name = key as? String, request.value(forHTTPHeaderField: name) == nil else { continue }
      request.setValue(String(describing: value), forHTTPHeaderField: name)
    }
    return request
  }

  #if canImport(FoundationNetworking)
    private func makeCurlTask(
      request: URLRequest, body: EngineBody, tls: TLSSettings, route: TransportRoute,
      handler: any SessionTaskHandler
    ) -> (any EngineTask)? {
      let curl = state.withLock { state -> CurlEngine? in
        if state.invalidated { return nil }
        if let curl = state.curl { return curl }
        // Unavailability is reported when the fetch begins; here it only means no task.
        state.curl = try? CurlEngine(configuration: configuration)
        return state.curl
      }
      return curl?.makeTask(request: request, body: body, tls: tls, route: route, handler: handler)
    }
  #endif

  /// On the libcurl engine, the session that long-lived streams (event streams, `events()`) of this
  /// one share: the same configuration without the per-host cap, so that open streams never hold
  /// the connections short requests wait for, and one more loop thread, not one per stream.
  /// Invalidated with this session.
  package func streamingSession() -> FetcherSession {
    state.withLock { state in
      if let streaming = state.streaming { return streaming }
      let configuration = FetcherSession.adjusted(self.configuration)
      configuration.httpMaximumConnectionsPerHost = 0
      let streaming = FetcherSession(configuration: configuration, engine: engine)
      if state.invalidated { streaming.finishTasksAndInvalidate() } else { state.streaming = streaming }
      return streaming
    }
  }

  /// Lets running tasks finish, then invalidates the session. No task can be created afterwards.
  package func finishTasksAndInvalidate() {
    let (session, curl) = invalidate()
    session?.finishTasksAndInvalidate()
    #if canImport(FoundationNetworking)
      curl?.finishTasksAndInvalidate()
    #endif
  }

  /// Cancels every task and invalidates the session.
  package func invalidateAndCancel() {
    let (session, curl) = invalidate()
    if let session {
      // No redirect answer may reach its tasks from now on (see `RedirectAnswerGate`).
      SessionDispatcher.redirectGate.markSession(dispatcher)
      session.invalidateAndCancel()
    }
    #if canImport(FoundationNetworking)
      curl?.invalidateAndCancel()
    #endif
  }

  #if canImport(FoundationNetworking)
    private typealias Engines = (URLSession?, CurlEngine?)
  #else
    private typealias Engines = (URLSession?, Void?)
  #endif

  /// Marks the session invalidated and hands over what it ran on.
  private func invalidate() -> Engines {
    let streaming = state.withLock { state in
      defer { state.streaming = nil }
      return state.streaming
    }
    streaming?.finishTasksAndInvalidate()
    return state.withLock { state in
      state.invalidated = true
      defer { state.session = nil }
      #if canImport(FoundationNetworking)
        defer { state.curl = nil }
        return (state.session, state.curl)
      #else
        return (state.session, nil)
      #endif
    }
  }
}
