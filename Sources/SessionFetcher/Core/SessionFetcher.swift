import Foundation

/// The completion handler of a fetch: the body (or nil) and the error (or nil on success).
public typealias FetcherCompletionHandler = @Sendable (Data?, (any Error)?) -> Void

/// A one-shot HTTP fetch: one request, its retries and redirects, one completion.
///
/// ```swift
/// let fetcher = SessionFetcher.fetcher(urlString: "https://example.com/data.json")
/// fetcher.isRetryEnabled = true
/// let data = try await fetcher.beginFetch()
/// ```
///
/// Configure a fetcher before beginning it; changes after `beginFetch` are ignored by the running
/// fetch. A fetcher keeps itself alive while it runs, so it need not be stored.
///
/// **Threading.** Every property and method may be used from any thread. Every closure you give a
/// fetcher (completion, progress, retry, redirect, accumulate, test blocks) runs on
/// ``callbackQueue``, the main queue unless you set another, one at a time and in order.
/// Notifications are posted on the callback queue too. ``FetcherEventMonitor``s run on internal queues.
public final class SessionFetcher: @unchecked Sendable {
  /// A stream for one attempt of the request body. Called again for every attempt and every
  /// redirect that resends the body.
  public typealias BodyStreamProvider = @Sendable () throws -> InputStream
  /// Stubs a fetch: call `respond` with the response, body and error the fetch should see.
  public typealias TestBlock =
    @Sendable (SessionFetcher, @escaping @Sendable (HTTPURLResponse?, Data?, (any Error)?) -> Void) -> Void
  /// Decides on a retry: `suggestedWillRetry` is the library's advice, `error` the failure;
  /// call `response` with the decision.
  public typealias RetryBlock =
    @Sendable (
      _ suggestedWillRetry: Bool, _ error: (any Error)?, _ response: @escaping @Sendable (Bool) -> Void
    )
    -> Void
  /// Decides on a redirect: call `respond` with the request to follow (possibly changed) or nil to refuse.
  public typealias WillRedirectBlock =
    @Sendable (
      _ response: HTTPURLResponse, _ newRequest: URLRequest,
      _ respond: @escaping @Sendable (URLRequest?) -> Void
    ) -> Void

  // `@unchecked Sendable`: all mutable state is in `storage`, behind its lock.
  let storage: Locked<FetcherStorage>

  // MARK: - Creation

  /// Creates a fetcher for `request`.
  public init(request: URLRequest) {
    storage = Locked(FetcherStorage(request: request, urlString: request.url?.absoluteString ?? ""))
  }

  init(invalidURLString: String) {
    storage = Locked(FetcherStorage(request: nil, urlString: invalidURLString))
  }

  /// Creates a fetcher for a GET of `url`.
  public static func fetcher(url: URL) -> SessionFetcher {
    SessionFetcher(request: URLRequest(url: url))
  }

  /// Creates a fetcher for a GET of `urlString`. An invalid string still gives a fetcher, whose
  /// ``request`` is nil and whose fetch fails with ``SessionFetcherError/invalidURL(_:)``.
  public static func fetcher(urlString: String) -> SessionFetcher {
    guard let url = SessionFetcher.validURL(urlString) else {
      return SessionFetcher(invalidURLString: urlString)
    }
    return SessionFetcher(request: URLRequest(url: url))
  }

  /// `URL(string:)` accepts (and percent-encodes) strings that are not absolute URLs; a fetcher
  /// needs a scheme, and a host for network schemes.
  static func validURL(_ string: String) -> URL? {
    guard let url = URL(string: string) else { return nil }
    return isFetchable(url) ? url : nil
  }

  static func isFetchable(_ url: URL) -> Bool {
    guard let scheme = url.scheme, !scheme.isEmpty else { return false }
    if scheme.equalsIgnoringASCIICase("http") || scheme.equalsIgnoringASCIICase("https") {
      // Percent-encoded: decoding would only allocate to answer whether there is a host.
      return !(url.host(percentEncoded: true) ?? "").isEmpty
    }
    return true
  }

  // MARK: - Configuration accessors

  /// Gives a fetcher just made a service's settings, all under one lock (one setter each would
  /// take the lock and walk a key path per setting): `configuration` replaces the fetcher's, but
  /// for what the fetcher was made with, which it keeps: its ``request`` and, for
  /// ``init(resumeData:)``, the ``destinationFileURL`` of the download it continues.
  package func adoptServiceConfiguration(_ configuration: FetcherConfiguration) {
    storage.withLock { storage in
      guard storage.lifecycle.phase == .idle else { return }
      var adopted = configuration
      adopted.request = storage.config.request
      adopted.destinationFileURL = storage.config.destinationFileURL
      storage.config = adopted
    }
  }

  subscript<Value>(config keyPath: WritableKeyPath<FetcherConfiguration, Value>) -> Value {
    get { storage.withLock { $0.config[keyPath: keyPath] } }
    set { storage.withLock { $0.config[keyPath: keyPath] = newValue } }
  }

  // MARK: - Request

  /// The request. Settable before the fetch begins; while it runs, the request of the current
  /// attempt or redirect hop. `nil` only for a fetcher made from an invalid URL string.
  public var request: URLRequest? {
    get { storage.withLock { $0.lifecycle.exchange?.request ?? $0.config.request } }
    set {
      storage.withLock {
        guard $0.lifecycle.phase == .idle else { return }
        $0.config.request = newValue
      }
    }
  }

  /// Sets a header of ``request`` (nil removes it). Ignored once the fetch began.
  ///
  /// A name that is not a token, or a value with a control character (CR, LF, NUL…), is kept as
  /// given, and the fetch then fails at begin with ``SessionFetcherError/invalidConfiguration(_:)``
  /// naming the header (see ``RequestValidation``), with nothing sent. `Content-Length` and
  /// `Transfer-Encoding` are the engine's, from the body it sends: a value set here is not sent.
  public func setRequestValue(_ value: String?, forHTTPHeaderField field: String) {
    storage.withLock {
      guard $0.lifecycle.phase == .idle, $0.config.request != nil else { return }
      guard let value, !RequestValidation.isToken(field) || !RequestValidation.isValidHeaderValue(value)
      else {
        $0.config.request?.setValue(value, forHTTPHeaderField: field)
        return
      }
      // `URLRequest.setValue` drops a value with a CR or LF without a word, and rewrites the case
      // of the name: the fetch would go out without the header the caller set.
      var fields = $0.config.request?.allHTTPHeaderFields ?? [:]
      for name in fields.keys where name.equalsIgnoringASCIICase(field) { fields[name] = nil }
      fields[field] = value
      $0.config.request?.allHTTPHeaderFields = fields
    }
  }

  /// A description of the fetch for logs.
  public var comment: String? {
    get { self[config: \.comment] }
    set { self[config: \.comment] = newValue }
  }

  /// Anything the caller wants to keep with the fetcher.
  public var userData: (any Sendable)? {
    get { self[config: \.userData] }
    set { self[config: \.userData] = newValue }
  }

  /// Named values kept with the fetcher (a service copies its own into each fetcher).
  public var properties: [String: any Sendable] {
    get { self[config: \.properties] }
    set { self[config: \.properties] = newValue }
  }

  /// Sets one of ``properties``.
  public func setProperty(_ value: (any Sendable)?, forKey key: String) {
    storage.withLock { $0.config.properties[key] = value }
  }

  /// One of ``properties``.
  public func property(forKey key: String) -> (any Sendable)? {
    storage.withLock { $0.config.properties[key] }
  }

  // MARK: - Control

  /// Whether ``stopFetching()`` calls the completion handler with ``SessionFetcherError/cancelled``
  /// (default false: a stopped fetch calls nothing).
  public var stopFetchingTriggersCompletionHandler: Bool {
    get { self[config: \.stopFetchingTriggersCompletionHandler] }
    set { self[config: \.stopFetchingTriggersCompletionHandler] = newValue }
  }

  /// The queue every callback and notification runs on. Default: the main queue.
  ///
  /// It may be a concurrent queue: one fetch's callbacks still run one at a time and in order
  /// (send and receive progress, data chunks, redirect and retry decisions, notifications, then the
  /// completion handler last), through a serial queue of the fetch's own that targets this one.
  /// Callbacks of different fetchers sharing a concurrent queue run concurrently.
  public var callbackQueue: DispatchQueue {
    get { self[config: \.callbackQueue] }
    set { self[config: \.callbackQueue] = newValue }
  }

  /// Stubs this fetcher's responses without the network (see ``TestBlock``). Overrides
  /// ``globalTestBlock``.
  public var testBlock: TestBlock? {
    get { self[config: \.testBlock] }
    set { self[config: \.testBlock] = newValue }
  }

  /// How many pieces a ``testBlock``'s (or ``globalTestBlock``'s) body is delivered in (default 1),
  /// so that a stubbed fetch exercises ``accumulateDataBlock``, ``receivedProgressBlock`` and the
  /// stream APIs the way a body arriving in several reads does. The pieces are as even as can be
  /// (the first ones one byte longer); a body shorter than the count comes one byte per piece; a
  /// count below 1 counts as 1. Read when the test block answers.
  ///
  /// ```swift
  /// fetcher.testBlock = { _, respond in respond(okResponse, Data("abcdefgh".utf8), nil) }
  /// fetcher.testBlockAccumulateDataChunkCount = 3
  /// fetcher.accumulateDataBlock = { chunk in chunks.append(chunk) }  // "abc", "def", "gh"
  /// ```
  public var testBlockAccumulateDataChunkCount: Int {
    get { self[config: \.testBlockAccumulateDataChunkCount] }
    set { self[config: \.testBlockAccumulateDataChunkCount] = newValue }
  }

  private static let globalTestBlockStorage = Locked<TestBlock?>(nil)

  /// Stubs the responses of every fetcher of the process that has no ``testBlock``.
  public static var globalTestBlock: TestBlock? {
    get { globalTestBlockStorage.withLock { $0 } }
    set { globalTestBlockStorage.withLock { $0 = newValue } }
  }

  /// Whether the fetcher posts its notifications (`Notification.Name.sessionFetcherStarted`,
  /// `.sessionFetcherStopped` and the others) on `NotificationCenter.default`. Default true, as in
  /// the original; `FetcherService.postsNotifications` sets it for a service's fetchers.
  ///
  /// Posting is most of what a fetch costs on top of URLSession. Turn it off for fetches
  /// nobody observes that way (event monitors and completion handlers are not affected). Read when
  /// the fetch begins, so a fetch posts all of its notifications or none.
  public var postsNotifications: Bool {
    get { self[config: \.postsNotifications] }
    set { self[config: \.postsNotifications] = newValue }
  }

  /// Monitors of this fetcher's events, in addition to the global ones.
  public var eventMonitors: [any FetcherEventMonitor] {
    get { self[config: \.eventMonitors] }
    set { self[config: \.eventMonitors] = newValue }
  }

  private static let globalMonitors = Locked<[any FetcherEventMonitor]>([])

  /// Adds a monitor of every fetcher's events. A fetch reports to the monitors registered when it
  /// began, so a monitor sees all of a fetch's events or none.
  public static func addGlobalEventMonitor(_ monitor: any FetcherEventMonitor) {
    globalMonitors.withLock { $0.append(monitor) }
  }

  /// Removes a monitor added with ``addGlobalEventMonitor(_:)``.
  public static func removeGlobalEventMonitor(_ monitor: any FetcherEventMonitor) {
    globalMonitors.withLock { $0.removeAll { $0 === monitor } }
  }

  static var globalEventMonitors: [any FetcherEventMonitor] { globalMonitors.withLock { $0 } }

  /// Whether the fetch has begun and not ended.
  public var isFetching: Bool { storage.withLock { $0.lifecycle.isFetching } }

  // MARK: - Results

  /// The final response (or the latest one while the fetch runs).
  public var response: URLResponse? { storage.withLock { $0.lifecycle.exchange?.responseHead }?.response }

  /// The HTTP status of ``response``; 0 before a response and for non-HTTP schemes.
  public var statusCode: Int { storage.withLock { $0.lifecycle.exchange?.responseHead?.statusCode ?? 0 } }

  /// The headers of ``response``.
  public var responseHeaders: [String: String]? {
    guard let http = storage.withLock({ $0.lifecycle.exchange?.responseHead })?.httpResponse else {
      return nil
    }
    var headers: [String: String] = [:]
    for (key, value) in http.allHeaderFields {
      if let key = key as? String, let value = value as? String { headers[key] = value }
    }
    return headers
  }

  /// The body received in memory so far (nil when it goes to a file or to ``accumulateDataBlock``).
  public var downloadedData: Data? { storage.withLock { $0.lifecycle.begunRun?.downloadedData } }

  /// Bytes of the final response body received (in memory, to the file, or accumulated).
  public var downloadedLength: Int64 { storage.withLock { $0.lifecycle.exchange?.responseBodyLength ?? 0 } }

  /// When the fetch ran and how much it moved.
  public var timing: FetchTiming { storage.withLock { $0.reportedTiming } }

  /// The error the fetch ended with, once it ended (nil on success).
  public var error: (any Error)? { storage.withLock { $0.lifecycle.begunRun?.finalError } }

  /// A one-line account of where the fetch stands (lifecycle, task and its byte counts), for a test
  /// that gave up waiting to print.
  package var diagnosticSummary: String {
    let (state, task, timing, hasPlan) = storage.withLock { storage in
      let phase = storage.lifecycle.phase
      let task = phase == .running ? storage.lifecycle.current.task : nil
      return (phase, task, storage.lifecycle.begunRun?.timing ?? FetchTiming(), storage.plan != nil)
    }
    var summary =
      "lifecycle \(state), plan \(hasPlan), retries \(timing.retryCount), sent \(timing.bytesSent)"
    if let task {
      summary += "; task \(task.diagnosticSummary)"
    } else {
      summary += "; no task"
    }
    return summary
  }

  /// The session the fetch runs on, once it began, and whether the fetch owns it (made it from a
  /// configuration of its own, and invalidates it when it ends), for tests.
  package var fetchSession: (session: SharedSession, owned: Bool)? {
    storage.withLock { $0.plan.map { ($0.session, $0.ownsSession) } }
  }

  /// The hooks of the service that made this fetcher.
  package var serviceHooks: (any FetcherServiceHooks)? {
    get { self[config: \.serviceHooks] }
    set { self[config: \.serviceHooks] = newValue }
  }

  /// Gives the URLSession wrapper for the next task (a service's shared one).
  package var sessionProvider: (@Sendable () -> SharedSession)? {
    get { self[config: \.sessionProvider] }
    set { self[config: \.sessionProvider] = newValue }
  }

  /// Makes the engine sessions of a fetch with a configuration of its own (``sessionConfiguration``,
  /// ``configurationBlock``) in place of ``engine``'s: a test's scripted engine.
  package var engineSessions: SharedSession.EngineSessionMaker? {
    get { self[config: \.engineSessions] }
    set { self[config: \.engineSessions] = newValue }
  }

  /// Lower numbers start first when a service delays fetchers of a busy host.
  public var servicePriority: Int {
    get { self[config: \.servicePriority] }
    set { self[config: \.servicePriority] = newValue }
  }
}

extension SessionFetcher: Hashable {
  /// Fetchers are equal only when they are the same object.
  public static func == (lhs: SessionFetcher, rhs: SessionFetcher) -> Bool { lhs === rhs }
  /// Hashes the fetcher's identity, so fetchers can be kept in sets and dictionary keys.
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension SessionFetcher: CustomStringConvertible {
  /// `SessionFetcher(METHOD URL — comment)`, for logs and debugging.
  public var description: String {
    let (method, url, comment) = storage.withLock {
      (
        ($0.lifecycle.exchange?.request ?? $0.config.request)?.httpMethod ?? "GET",
        ($0.lifecycle.exchange?.request ?? $0.config.request)?.url?.absoluteString ?? $0.urlString,
        $0.config.comment
      )
    }
    return "SessionFetcher(\(method) \(url)\(comment.map { " — \($0)" } ?? ""))"
  }
}
