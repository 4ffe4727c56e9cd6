import Foundation

/// A delegate-based URLSession shared by fetchers, with the settings the library relies on and an
/// invalidation flag of its own.
///
/// Creating a task on an invalidated URLSession kills the process on Linux (a `fatalError` in
/// FoundationNetworking) and raises on Apple platforms, so every task creation checks the flag
/// under the same lock that `invalidate` sets it under.
///
/// `@unchecked Sendable`: mutable state lives in `state`, a `Locked`.
package final class FetcherSession: @unchecked Sendable {
  private struct State {
    var session: URLSession?
    var invalidated = false
  }

  package let dispatcher: SessionDispatcher
  private let state = Locked(State())
  package let configuration: URLSessionConfiguration

  /// The session that fetchers made outside a service share.
  package static let standalone = FetcherSession(configuration: nil)

  /// - Parameter configuration: the base configuration, or nil for ``defaultConfiguration()``. It
  ///   is copied and adjusted: no URLCache (the library keeps its own ETag cache), no platform
  ///   cookie handling (the library keeps its own jars).
  package init(configuration: URLSessionConfiguration?) {
    let config = FetcherSession.adjusted(configuration ?? FetcherSession.defaultConfiguration())
    self.configuration = config
    let state = self.state
    self.dispatcher = SessionDispatcher(onInvalidate: {
      state.withLock {
        $0.invalidated = true
        $0.session = nil
      }
    })
  }

  /// The configuration of sessions made without one: ephemeral and, on Linux, at most
  /// ``linuxConnectionsPerHost`` connections per host.
  ///
  /// libcurl keeps at most four idle connections per transfer it has attached, and
  /// FoundationNetworking does not raise that cap: with more than four requests in flight to one
  /// host, connections are closed and opened again (a new TLS handshake each over https). Four is
  /// the one per-host limit that never does; iOS uses the same limit by default. Long-lived
  /// streams do not take one of the four: they get a session of their own (see `makePlan`).
  package static func defaultConfiguration() -> URLSessionConfiguration {
    let config = URLSessionConfiguration.ephemeral
    #if canImport(FoundationNetworking)
      config.httpMaximumConnectionsPerHost = linuxConnectionsPerHost
    #endif
    return config
  }

  /// The per-host connection limit of ``defaultConfiguration()`` on Linux.
  package static let linuxConnectionsPerHost = 4

  /// A session of its own with the configuration of `session` (for a long-lived stream).
  package convenience init(copying session: FetcherSession) {
    self.init(configuration: session.configuration)
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

  /// Creates a task and registers `handler` for it, or returns nil if the session is invalidated.
  /// The task is not resumed.
  package func makeTask(
    handler: any SessionTaskHandler, _ create: (URLSession) -> URLSessionTask
  ) -> URLSessionTask? {
    state.withLock { state -> URLSessionTask? in
      guard let session = liveSession(&state) else { return nil }
      let task = create(session)
      dispatcher.register(handler, for: task)
      return task
    }
  }

  /// Lets running tasks finish, then invalidates the session. No task can be created afterwards.
  package func finishTasksAndInvalidate() {
    let session = state.withLock { state -> URLSession? in
      state.invalidated = true
      defer { state.session = nil }
      return state.session
    }
    session?.finishTasksAndInvalidate()
  }

  /// Cancels every task and invalidates the session.
  package func invalidateAndCancel() {
    let session = state.withLock { state -> URLSession? in
      state.invalidated = true
      defer { state.session = nil }
      return state.session
    }
    session?.invalidateAndCancel()
  }
}
