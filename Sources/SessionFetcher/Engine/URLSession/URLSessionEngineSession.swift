import Foundation

/// The URLSession engine's session: a delegate-based URLSession, made on demand, with an
/// invalidation flag of its own and the FoundationNetworking workarounds the library needs.
///
/// No caller waits for FoundationNetworking here: making a task returns a ``URLSessionEngineTask``
/// at once, and everything that waits for FoundationNetworking's work queue (making the URLSession
/// task, resuming, suspending and cancelling it, invalidating the URLSession) runs in order on
/// ``taskQueue``.
///
/// Creating a task on an invalidated URLSession kills the process on Linux (a `fatalError` in
/// FoundationNetworking) and raises on Apple platforms. So a task is taken only while the session is
/// not invalidated, checked under the lock that invalidation sets the flag under, and its making is
/// queued under that lock too: every task taken is made before the URLSession is invalidated, on the
/// same queue. A task whose URLSession is gone all the same when its turn comes (the delegate saw
/// the session end) is never made; its handler is told it was cancelled.
///
/// `@unchecked Sendable`: mutable state lives in `state`, a `Locked`.
package final class URLSessionEngineSession: EngineSession, @unchecked Sendable {
  private struct State {
    var session: URLSession?
    /// No task may be taken any more.
    var invalidated = false
    /// The URLSession is invalidated (or about to be, on ``taskQueue``): no task may be made on it.
    var retired = false
  }

  /// The delegate of the URLSession, which routes its callbacks to each task's handler.
  package let dispatcher: URLSessionDelegateRouter
  private let state = Locked(State())
  private let configuration: URLSessionConfiguration

  /// The per-host connection limit of sessions made without a configuration on Linux (see
  /// `SharedSession.defaultConfiguration(for:)`).
  package static let defaultConnectionsPerHost = 4

  /// The default window of a download to a file (`SessionFetcher.downloadWindowLength`): 16 MiB
  /// on Linux, where this engine pauses by ending its transfer (see ``pausing``), else none.
  #if FOUNDATION_NETWORKING
    package static let defaultDownloadWindowLength: Int64? = 16 * 1024 * 1024
  #else
    package static let defaultDownloadWindowLength: Int64? = nil
  #endif

  /// Where URLSession tasks are made, resumed, suspended and cancelled, and URLSessions invalidated,
  /// in the order asked: FoundationNetworking's `dataTask(with:)`, `resume()`, `cancel()` and
  /// `invalidateAndCancel()` wait for its work queue (one for the whole process), which must hold up
  /// neither a caller of `beginFetch()` or `stopFetching()`, nor the fetch, nor the timeouts of other
  /// fetches.
  ///
  /// One per session: the order that matters is a task's own (made, resumed, cancelled) and a
  /// session's (its tasks made before it is invalidated). A queue for the whole process would put
  /// every fetch's making behind every other session's waits for FoundationNetworking (a busy
  /// engine's cancellations, an invalidation), which ran fetches with short timeouts out before
  /// their request was sent.
  package let taskQueue = DispatchQueue(label: "SessionFetcher.urlSessionTasks")

  /// A session that makes its URLSession from `configuration` (already adjusted by the fetcher
  /// session) when its first task is made.
  package init(configuration: URLSessionConfiguration) {
    self.configuration = Self.guarded(configuration)
    let state = self.state
    self.dispatcher = URLSessionDelegateRouter(onInvalidate: {
      state.withLock {
        $0.invalidated = true
        $0.retired = true
        $0.session = nil
      }
    })
  }

  /// `configuration` with, on Linux, the cache that keeps responses FoundationNetworking cannot survive
  /// from reaching it (see `ResponseHeadGuard`).
  private static func guarded(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
    #if FOUNDATION_NETWORKING
      guard ResponseHeadGuard.isAvailable, let copy = configuration.copy() as? URLSessionConfiguration else {
        return configuration
      }
      copy.urlCache = ResponseHeadGuard.cache
      return copy
    #else
      return configuration
    #endif
  }

  /// `URLSessionTask.suspend()` cannot be used on Linux: on a running data task, FoundationNetworking
  /// (swift-corelibs-foundation 6.3.1) removes the libcurl handle, which closes the connection, and
  /// `resume()` silently sends the request again and delivers its body *from the start* after the
  /// bytes already delivered (the server sees a broken pipe and then a second `GET`). Holding the
  /// delegate queue does not help either: libcurl keeps reading and the chunks pile up in the queue.
  /// So on Linux a pause cancels the task
  /// and the transfer later continues with `Range: bytes=N-` and `If-Range`, which needs a response that
  /// can be continued. Apple's URLSession really stops reading on `suspend()`, so it is used there.
  ///
  /// A response that cannot be continued (an event stream, a chunked or compressed body) is paused
  /// through the libcurl handle inside FoundationNetworking instead (see `ResponseReadPause`), where the
  /// handle can be found.
  package var pausing: StreamPausing.Method { Self.platformPausing }

  #if FOUNDATION_NETWORKING
    /// FoundationNetworking makes each chunk on whichever dispatch thread reads the socket, from
    /// that thread's glibc arena (see `ByteRing`).
    package var streamBuffersCopyChunks: Bool { true }
  #endif

  /// See ``pausing``.
  #if FOUNDATION_NETWORKING
    static let platformPausing: StreamPausing.Method =
      ResponseReadPause.isAvailable ? .continueWithRangeElseSuspendTask : .continueWithRange
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
    "the URLSession engine, which takes its proxy from the platform (the environment on Linux) and "
      + "connects over TCP only; the libcurl engine honours them (set engine = .libcurl)"
  }

  /// Each stream gets a session of its own: on FoundationNetworking an uncapped URLSession shared
  /// by streams would churn libcurl's connections beneath it (see
  /// `SharedSession.defaultConfiguration(for:)`), and on Apple platforms a long-lived stream would
  /// hold one of the shared session's few connections per host for as long as it lasts.
  package var sharesOneSessionAmongStreams: Bool { false }

  /// On FoundationNetworking never: it sends any stream chunked, and frames one with a length twice
  /// (corelibs #4818), so the fetcher reads such a body first (`BodySpool`). Apple's URLSession
  /// sends a stream with its `Content-Length`.
  package func sendsSizedStreams(for request: URLRequest) -> Bool {
    #if FOUNDATION_NETWORKING
      return false
    #else
      return true
    #endif
  }

  package var isInvalidated: Bool { state.withLock { $0.invalidated } }

  /// How many of this session's tasks asked for a trim of glibc's arenas (see
  /// ``URLSessionDelegateRouter/arenaTrimRequests``).
  package var arenaTrimRequests: Int { dispatcher.arenaTrimRequests }

  private func liveSession(_ state: inout State) -> URLSession? {
    if state.retired { return nil }
    if let session = state.session { return session }
    HeapReleaseThreshold.applyOnce()
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    queue.name = "SessionFetcher.delegate"
    let session = URLSession(configuration: configuration, delegate: dispatcher, delegateQueue: queue)
    state.session = session
    return session
  }

  /// `tls` and `route` are never other than the defaults here (see ``tlsSettingsLimitation``).
  /// Returns at once: the URLSession task is made on ``taskQueue``.
  package func makeTask(
    request: URLRequest, body: EngineBody, tls: TLSSettings, route: TransportRoute,
    handler: any SessionTaskHandler
  ) -> (any EngineTask)? {
    let task = URLSessionEngineTask(dispatcher: dispatcher, queue: taskQueue)
    // The body's stream is handed over with the request: only the job reads it.
    nonisolated(unsafe) let body = body
    return state.withLock { state -> (any EngineTask)? in
      guard !state.invalidated else { return nil }
      // Queued under the lock: before any invalidation of the URLSession (see the type's notes).
      taskQueue.async { self.make(task, request: request, body: body, handler: handler) }
      return task
    }
  }

  /// `url` with its scheme and host in lower case, or nil when they are already: FoundationNetworking
  /// compares the scheme case-sensitively and refuses `HTTP://…` as unsupported, though RFC 3986
  /// (§3.1, §3.2.2) makes both case-insensitive and the libcurl engine takes any case.
  ///
  /// An IP literal (`[2001:DB8::1]`) is left as written: its case means nothing to either, a zone
  /// name's case may matter, and `URLComponents` traps on a literal set without its brackets.
  static func lowercasingSchemeAndHost(_ url: URL) -> URL? {
    let hasUpper = { (text: String) in
      text.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }
    // Every request's URL comes here: one whose scheme and host have no capital is left without
    // making `URLComponents`.
    guard let scheme = url.scheme,
      hasUpper(scheme) || hasUpper(url.absoluteURL.host(percentEncoded: true) ?? "")
    else { return nil }
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
    let host = components.percentEncodedHost ?? ""
    let lowersHost = !host.hasPrefix("[")
    guard hasUpper(scheme) || (lowersHost && hasUpper(host)) else { return nil }
    components.scheme = scheme.lowercased()
    if lowersHost && !host.isEmpty { components.percentEncodedHost = host.lowercased() }
    return components.url
  }

  /// `url` as FoundationNetworking fetches it (an IPv6 literal respelled, see `IPv6LiteralHost`;
  /// scheme and host in lower case), or nil when it fetches it as it is.
  static func urlForFoundationNetworking(_ url: URL) -> URL? {
    #if FOUNDATION_NETWORKING
      return IPv6LiteralHost.encoded(url) ?? lowercasingSchemeAndHost(url)
    #else
      return nil
    #endif
  }

  /// Makes the URLSession task of `task`, on ``taskQueue``.
  private func make(
    _ task: URLSessionEngineTask, request given: URLRequest, body: EngineBody, handler: any SessionTaskHandler
  ) {
    var request = given
    if let url = request.url, let spelled = Self.urlForFoundationNetworking(url) { request.url = spelled }
    guard !task.isEnded, let session = state.withLock({ liveSession(&$0) }) else {
      // Cancelled before it was made, or its URLSession is gone: ended as a cancelled task would be.
      Self.reportCancelled(task, request: request, to: handler)
      return
    }
    // Safe outside the lock: the URLSession is invalidated only on this queue, after this job.
    let made: URLSessionTask
    // The length of a body sent from memory, which FoundationNetworking copies (see `HeapReleaseTrim`).
    var bodyLength = 0
    switch body {
    case .none:
      made = session.dataTask(with: request)
    case .data(let data):
      made = session.uploadTask(with: request, from: data)
      bodyLength = data.count
    case .file(let url):
      // A file body small enough is sent from memory (see `FileBodyInMemory`: FoundationNetworking's
      // file source can crash the process).
      #if FOUNDATION_NETWORKING
        let fileBytes = FileBodyInMemory.inMemoryBody(for: url)
      #else
        let fileBytes: Data? = nil
      #endif
      if let fileBytes {
        made = session.uploadTask(with: request, from: fileBytes)
        bodyLength = fileBytes.count
      } else {
        made = session.uploadTask(with: request, fromFile: url)
      }
    case .stream(let stream):
      var streamed = request
      streamed.setValue(nil, forHTTPHeaderField: "Content-Length")
      streamed.httpBodyStream = task.urlSessionBodyStream(stream, length: nil)
      made = session.dataTask(with: streamed)
    case .sizedStream(let stream, let length):
      var streamed = request
      #if FOUNDATION_NETWORKING
        // Never with a length here: FoundationNetworking would frame it twice (corelibs #4818;
        // ``sendsSizedStreams(for:)`` is false, so the fetcher sends such a body otherwise).
        streamed.setValue(nil, forHTTPHeaderField: "Content-Length")
        streamed.httpBodyStream = task.urlSessionBodyStream(stream, length: nil)
      #else
        // Apple's URLSession sends a body stream with the request's Content-Length.
        streamed.setValue(String(length), forHTTPHeaderField: "Content-Length")
        streamed.httpBodyStream = task.urlSessionBodyStream(stream, length: length)
      #endif
      made = session.dataTask(with: streamed)
    }
    dispatcher.register(handler, as: task, for: made, bodyLength: bodyLength)
    // Let go of while it was being made (and marked in the redirect gate): cancelled before it runs.
    if !task.attach(made, madeOn: session) {
      made.cancel()
      dispatcher.reportCancelledUnlessReported(made)
    }
  }

  /// Tells `handler` that `task`, never made, was cancelled (off the engine's queue: the handler's
  /// work holds up no other task).
  private static func reportCancelled(
    _ task: URLSessionEngineTask, request: URLRequest, to handler: any SessionTaskHandler
  ) {
    let error = URLError(.cancelled, userInfo: request.url.map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:])
    DispatchQueue.global().async { handler.task(task, didCompleteWithError: error) }
  }

  package func finishTasksAndInvalidate() {
    invalidate { session, _ in session.finishTasksAndInvalidate() }
  }

  /// Waits until the URLSession's tasks are cancelled (and the tasks queued before, made).
  package func invalidateAndCancel() {
    invalidateAndCancelWithoutWaiting()
    taskQueue.sync {}
  }

  /// Invalidates at once, and cancels on ``taskQueue``.
  package func invalidateAndCancelWithoutWaiting() {
    invalidate { session, dispatcher in
      // No redirect answer may reach its tasks from now on (see `CancelledRedirectGuard`).
      URLSessionDelegateRouter.redirectGate.markSession(dispatcher)
      session.invalidateAndCancel()
      // FoundationNetworking never reports a task cancelled with its session before it was resumed.
      dispatcher.reportUnresumedTasksCancelled()
    }
  }

  /// Marks the session invalidated at once, and hands the URLSession, if one was made, to `end` on
  /// ``taskQueue``, after the tasks taken before.
  private func invalidate(_ end: @escaping @Sendable (URLSession, URLSessionDelegateRouter) -> Void) {
    let dispatcher = self.dispatcher
    let state = self.state
    state.withLock { current in
      guard !current.invalidated else { return }
      current.invalidated = true
      taskQueue.async {
        let session = state.withLock { state -> URLSession? in
          state.retired = true
          defer { state.session = nil }
          return state.session
        }
        if let session { end(session, dispatcher) }
      }
    }
  }
}
