import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The URLSession engine's session: a delegate-based URLSession, made on demand, with an
/// invalidation flag of its own and the FoundationNetworking workarounds the library needs.
///
/// Creating a task on an invalidated URLSession kills the process on Linux (a `fatalError` in
/// FoundationNetworking) and raises on Apple platforms, so every task creation checks the flag
/// under the same lock that invalidation sets it under.
///
/// `@unchecked Sendable`: mutable state lives in `state`, a `Locked`.
package final class URLSessionEngineSession: EngineSession, @unchecked Sendable {
  private struct State {
    var session: URLSession?
    var invalidated = false
  }

  /// The delegate of the URLSession, which routes its callbacks to each task's handler.
  package let dispatcher: SessionDispatcher
  private let state = Locked(State())
  private let configuration: URLSessionConfiguration

  /// The per-host connection limit of sessions made without a configuration on Linux (see
  /// `FetcherSession.defaultConfiguration(for:)`).
  package static let defaultConnectionsPerHost = 4

  /// Where the tasks of ended attempts are cancelled: FoundationNetworking's `cancel()` and
  /// `invalidateAndCancel()` wait for its work queue (one for the whole process), which must hold
  /// up neither the fetch (it has ended), nor the timeouts of other fetches, nor a caller of
  /// `stopFetching()`.
  package static let cancellationQueue = DispatchQueue(label: "SessionFetcher.cancellations")

  /// A session that makes its URLSession from `configuration` (already adjusted by the fetcher
  /// session) when its first task is made.
  package init(configuration: URLSessionConfiguration) {
    self.configuration = configuration
    let state = self.state
    self.dispatcher = SessionDispatcher(onInvalidate: {
      state.withLock {
        $0.invalidated = true
        $0.session = nil
      }
    })
  }

  /// `URLSessionTask.suspend()` cannot be used on Linux: on a running data task, FoundationNetworking
  /// (swift-corelibs-foundation 6.3.1) removes the libcurl handle, which closes the connection, and
  /// `resume()` silently sends the request again and delivers its body *from the start* after the
  /// bytes already delivered (measured: a 400 MB body paused at 8 MB — the server saw a broken pipe and
  /// then a second `GET`). Holding the delegate queue does not help either: libcurl keeps reading and
  /// the chunks pile up in the queue (RSS grew 85 MB in 3.5 s). So on Linux a pause cancels the task
  /// and the transfer later continues with `Range: bytes=N-` and `If-Range`, which needs a response that
  /// can be continued. Apple's URLSession really stops reading on `suspend()`, so it is used there.
  package var pausing: StreamPausing.Method { Self.platformPausing }

  /// See ``pausing``.
  #if canImport(FoundationNetworking)
    static let platformPausing = StreamPausing.Method.continueWithRange
  #else
    static let platformPausing = StreamPausing.Method.suspendTask
  #endif

  /// URLSession's timer (whole seconds on Linux).
  package var enforcesRequestTimeout: Bool { true }

  package var tlsSettingsLimitation: String? {
    "the URLSession engine, which has no TLS configuration; the libcurl engine honours them "
      + "(set engine = .libcurl)"
  }

  package var routeLimitation: String? {
    "the URLSession engine, which takes its proxy only from the environment and connects over TCP "
      + "only; the libcurl engine honours them (set engine = .libcurl)"
  }

  /// An uncapped URLSession shared by streams would churn libcurl's connections beneath it (see
  /// `FetcherSession.defaultConfiguration(for:)`): each stream gets a session of its own.
  package var sharesOneSessionAmongStreams: Bool { false }

  /// Never: URLSession sends any stream chunked, and frames one with a length twice (corelibs #4818).
  package func sendsSizedStreams(for request: URLRequest) -> Bool { false }

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

  /// `tls` and `route` are never other than the defaults here (see ``tlsSettingsLimitation``).
  package func makeTask(
    request: URLRequest, body: EngineBody, tls: TLSSettings, route: TransportRoute,
    handler: any SessionTaskHandler
  ) -> (any EngineTask)? {
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

  package func finishTasksAndInvalidate() {
    invalidate()?.finishTasksAndInvalidate()
  }

  package func invalidateAndCancel() {
    guard let session = invalidate() else { return }
    // No redirect answer may reach its tasks from now on (see `RedirectAnswerGate`).
    SessionDispatcher.redirectGate.markSession(dispatcher)
    session.invalidateAndCancel()
  }

  /// Invalidates at once, and cancels on ``cancellationQueue``.
  package func invalidateAndCancelWithoutWaiting() {
    guard let session = invalidate() else { return }
    let dispatcher = self.dispatcher
    Self.cancellationQueue.async {
      SessionDispatcher.redirectGate.markSession(dispatcher)
      session.invalidateAndCancel()
    }
  }

  /// Marks the session invalidated and hands over the URLSession, if one was made.
  private func invalidate() -> URLSession? {
    state.withLock { state in
      state.invalidated = true
      defer { state.session = nil }
      return state.session
    }
  }
}
