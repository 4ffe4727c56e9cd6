import Foundation
import SessionFetcher

/// Makes ``SessionFetcher``s that share defaults, one URLSession, a cookie jar and an ETag cache,
/// and limits how many of them run against each host.
///
/// ```swift
/// let service = FetcherService()
/// service.isRetryEnabled = true
/// service.maxRunningFetchersPerHost = 4
/// let fetcher = service.fetcher(urlString: "https://example.com/feed.json")
/// let data = try await fetcher.beginFetch()
/// ```
///
/// **Defaults.** A fetcher copies the service's settings when it is made (``fetcher(request:)``);
/// changing the service later does not change fetchers already made.
///
/// **Sessions.** With ``reuseSession`` (the default) the service's fetchers share one
/// delegate-based URLSession, made on demand from ``configuration`` and ``configurationBlock``,
/// dropped after ``unusedSessionTimeout`` seconds without fetchers and re-made when needed (or after
/// ``resetSession()``). A session being replaced lets its fetchers finish first; no task is ever
/// made on an invalidated session.
///
/// **Throttling.** At most ``maxRunningFetchersPerHost`` fetchers run per host (the lowercased URL
/// host, two ports of one host sharing it; or the fetcher's `SessionFetcher.serviceHost` when set).
/// The others wait in ``delayedFetchersByHost`` and start as slots free: lowest
/// `SessionFetcher.servicePriority` first, first come first served within a priority (`Int.min`
/// never waits). A fetcher whose URL has no host (`data:`, `file:`) and no `serviceHost` never
/// waits and is not counted (``issuedFetchers`` lists it). A fetcher waiting out a retry delay keeps its slot, as in the original
/// library: its retry must not queue behind newer fetchers of the same host.
///
/// **Threading.** Every member may be used from any thread; the counts and maps are consistent
/// snapshots. Fetchers' callbacks run on their ``callbackQueue`` (by default the main queue).
public final class FetcherService: @unchecked Sendable {
  // `@unchecked Sendable`: all mutable state (defaults, the host throttle, retry waiters, the ETag
  // cache, the session book) is in `state`, and every access holds its lock. The lock is never held
  // while calling into a fetcher, so fetchers and the service cannot deadlock.
  let state = Locked(ServiceState())
  /// Starts delayed fetchers one after the other (see `grantSlots(to:)`).
  private let grantQueue = DispatchQueue(label: "FetcherService.grants")
  /// The shared session's idle check (see `queueIdleCheck(after:)`): made on first use, cancelled
  /// when the service goes.
  private let idleTimer = Locked<IdleTimer?>(nil)

  /// The default byte capacity of the ETag cache: 15 MB.
  public static let defaultETagCacheCapacity = 15 * 1024 * 1024

  /// Creates a service with its own cookie jar, ETag cache and (on demand) URLSession.
  public init() {}

  deinit {
    // Every fetcher holds its service, so none can use the shared session any more: close it
    // (an abandoned URLSession keeps its libcurl handles until the process ends).
    state.withLock { $0.sessions.current }?.finishTasksAndInvalidate()
    // A pending check would keep its timer, its handler and this object's memory for up to
    // `unusedSessionTimeout` seconds after the service is gone.
    idleTimer.withLock { $0 }?.cancel()
  }

  /// A setting of the fetchers the service makes (see `ServiceState.defaults`).
  subscript<Value>(defaults keyPath: WritableKeyPath<FetcherConfiguration, Value>) -> Value {
    get { state.withLock { $0.defaults[keyPath: keyPath] } }
    set { state.withLock { $0.defaults[keyPath: keyPath] = newValue } }
  }

  // MARK: - Making fetchers

  /// A fetcher for `request`, carrying the service's defaults.
  public func fetcher(request: URLRequest) -> SessionFetcher {
    configure(SessionFetcher(request: request))
  }

  /// A fetcher for a GET of `url`, carrying the service's defaults.
  public func fetcher(url: URL) -> SessionFetcher {
    // One lock for everything the service hands over. The User-Agent is added now, while the
    // request is this call's alone: before each attempt it would be copied first (the fetcher
    // keeps the request it began with). Not the request's own: a provider of the fetcher's
    // replaces it, and with a provider of the service's it waits for the fetch.
    var agent: String?
    var reuseSession = true
    var config = state.withLock { state in
      agent = state.userAgentProvider == nil ? state.agentForRequests : nil
      reuseSession = state.reuseSession
      return state.defaults
    }
    var request = URLRequest(url: url)
    if let agent {
      // As it is, even with a control character: the fetcher then refuses the request at begin,
      // naming the header (see `addUserAgent(to:)`).
      request.allHTTPHeaderFields = ["User-Agent": agent]
    }
    config.presetUserAgent = agent
    let fetcher = SessionFetcher(request: request)
    complete(&config, for: fetcher, reuseSession: reuseSession)
    fetcher.adoptServiceConfiguration(config)
    return fetcher
  }

  /// A fetcher for a GET of `urlString`, carrying the service's defaults. An invalid string still
  /// gives a fetcher, whose fetch fails with `SessionFetcherError.invalidURL(_:)`.
  public func fetcher(urlString: String) -> SessionFetcher {
    configure(SessionFetcher.fetcher(urlString: urlString))
  }

  /// A fetcher that continues the download of a resume token (see
  /// `SessionFetcher.downloadResumeData` and `SessionFetcher.partFileResumeData`), carrying the
  /// service's defaults as ``fetcher(request:)`` does: callback queue, allowed schemes, localhost
  /// rule, authorizer, credentials, user agent, retry settings, cookies and throttling.
  ///
  /// The request is the token's: the same URL, method and headers, except the credentials a token
  /// never keeps (`Authorization`, `Proxy-Authorization`, `Cookie`, headers named like a token or
  /// key), which the service's authorizer and cookie jar add again. Nil when `resumeData` is not a
  /// resume token or names anything but one of the fetcher's own part files (see
  /// `SessionFetcher.init(resumeData:)`).
  ///
  /// ```swift
  /// if let token = try? Data(contentsOf: tokenURL), let resumed = service.fetcher(resumeData: token) {
  ///   try await resumed.beginFetch()   // the destination appears once complete
  /// }
  /// ```
  public func fetcher(resumeData: Data) -> SessionFetcher? {
    SessionFetcher(resumeData: resumeData).map { configure($0) }
  }

  /// Hands the service's defaults to `fetcher`, just made, in one step.
  private func configure(_ fetcher: SessionFetcher) -> SessionFetcher {
    var reuseSession = true
    // Built in place: the configuration is a large value, each copy retains dozens of references.
    var config = state.withLock { state in
      reuseSession = state.reuseSession
      return state.defaults
    }
    complete(&config, for: fetcher, reuseSession: reuseSession)
    fetcher.adoptServiceConfiguration(config)
    return fetcher
  }

  /// Adds to `config`, the service's defaults, what ties `fetcher` to this service.
  private func complete(_ config: inout FetcherConfiguration, for fetcher: SessionFetcher, reuseSession: Bool)
  {
    config.serviceHooks = self
    config.service = WeakFetcherService(self)
    if reuseSession {
      let id = ObjectIdentifier(fetcher)
      config.sessionProvider = { [self] in self.sharedSession(for: id) }
      // They make the shared session (`sharedSession(for:)`); in the fetcher they would give it a
      // session of its own.
      config.sessionConfiguration = nil
      config.configurationBlock = nil
    } else if config.sessionConfiguration == nil {
      config.sessionConfiguration = SharedSession.defaultConfiguration(for: config.engine)
    }
  }

  // MARK: - Defaults copied into fetchers

  /// The queue of the fetchers' callbacks and notifications. Default: the main queue.
  public var callbackQueue: DispatchQueue {
    get { self[defaults: \.callbackQueue] }
    set { self[defaults: \.callbackQueue] = newValue }
  }

  /// Whether fetchers retry failed attempts (default false); see `SessionFetcher.isRetryEnabled`.
  public var isRetryEnabled: Bool {
    get { self[defaults: \.isRetryEnabled] }
    set { self[defaults: \.isRetryEnabled] = newValue }
  }

  /// The most retries each fetcher makes (default nil: as many as the retry window allows); see
  /// `SessionFetcher.maxRetryCount`. A negative value makes the fetchers fail at begin with
  /// `SessionFetcherError.invalidConfiguration`.
  ///
  /// ```swift
  /// let service = FetcherService()
  /// service.isRetryEnabled = true
  /// service.maxRetryCount = 3
  /// ```
  public var maxRetryCount: Int? {
    get { self[defaults: \.maxRetryCount] }
    set { self[defaults: \.maxRetryCount] = newValue }
  }

  /// The fetchers' retry decision; see `SessionFetcher.retryBlock`.
  public var retryBlock: SessionFetcher.RetryBlock? {
    get { self[defaults: \.retryBlock] }
    set { self[defaults: \.retryBlock] = newValue }
  }

  /// The fetchers' first retry delay; 0 (the default) keeps the fetcher's random 1–2 s.
  public var minRetryInterval: TimeInterval {
    get { self[defaults: \.minRetryInterval] ?? 0 }
    set { self[defaults: \.minRetryInterval] = FetcherConfiguration.retryInterval(newValue) }
  }

  /// The fetchers' longest retry delay; 0 (the default) keeps the fetcher's default (60 s for GET
  /// and HEAD, 600 s otherwise).
  public var maxRetryInterval: TimeInterval {
    get { self[defaults: \.maxRetryInterval] ?? 0 }
    set { self[defaults: \.maxRetryInterval] = FetcherConfiguration.retryInterval(newValue) }
  }

  /// Schemes the fetchers may use besides https (default none).
  public var allowedInsecureSchemes: [String] {
    get { self[defaults: \.allowedInsecureSchemes] }
    set { self[defaults: \.allowedInsecureSchemes] = newValue }
  }

  /// Whether the fetchers may reach localhost, 127.0.0.1 and ::1 over any scheme (default false).
  public var allowLocalhostRequest: Bool {
    get { self[defaults: \.allowLocalhostRequest] }
    set { self[defaults: \.allowLocalhostRequest] = newValue }
  }

  /// The most redirects each attempt of the fetchers follows (default 20); see
  /// `SessionFetcher.maximumRedirects`. A fetcher may change its own before it begins; a value below
  /// 0 fails the fetch when it begins with `SessionFetcherError.invalidConfiguration(_:)`.
  public var maximumRedirects: Int {
    get { self[defaults: \.maximumRedirects] }
    set { self[defaults: \.maximumRedirects] = newValue }
  }

  /// Whether the service's fetchers post their notifications (default true); see
  /// `SessionFetcher.postsNotifications`, most of a fetch's cost on top of URLSession on Linux.
  public var postsNotifications: Bool {
    get { self[defaults: \.postsNotifications] }
    set { self[defaults: \.postsNotifications] = newValue }
  }

  /// Answers servers' Basic and Digest challenges; see `SessionFetcher.credential`.
  public var credential: URLCredential? {
    get { self[defaults: \.credential] }
    set { self[defaults: \.credential] = newValue }
  }

  /// Decides how the fetchers this service makes from now on answer servers' authentication
  /// challenges; see `SessionFetcher.challengeBlock` (a fetcher may set its own).
  public var challengeBlock: ChallengeBlock? {
    get { self[defaults: \.challengeBlock] }
    set { self[defaults: \.challengeBlock] = newValue }
  }

  /// Receives the metrics of every exchange of the fetchers this service makes from now on; see
  /// `SessionFetcher.metricsCollectionBlock` (a fetcher may set its own).
  public var metricsCollectionBlock: SessionFetcher.MetricsCollectionBlock? {
    get { self[defaults: \.metricsCollectionBlock] }
    set { self[defaults: \.metricsCollectionBlock] = newValue }
  }

  /// The proxy of the fetchers this service makes from now on, in place of the environment's; see
  /// `SessionFetcher.proxySettings`. nil (the default): the environment's `http_proxy`,
  /// `https_proxy` and `no_proxy`. Needs the libcurl engine.
  public var proxySettings: ProxySettings? {
    get { self[defaults: \.proxySettings] }
    set { self[defaults: \.proxySettings] = newValue }
  }

  /// The Unix domain socket every fetch of the fetchers this service makes from now on goes to;
  /// see `SessionFetcher.unixSocketPath`. Needs the libcurl engine.
  public var unixSocketPath: String? {
    get { self[defaults: \.unixSocketPath] }
    set { self[defaults: \.unixSocketPath] = newValue }
  }

  /// Answers proxies' authentication challenges; see `SessionFetcher.proxyCredential`.
  public var proxyCredential: URLCredential? {
    get { self[defaults: \.proxyCredential] }
    set { self[defaults: \.proxyCredential] = newValue }
  }

  /// Authorizes the fetchers' requests; see `SessionFetcher.authorizer`.
  ///
  /// Setting it sets the authorizer's `FetcherAuthorizer.fetcherService` to this service (for the
  /// authorizer's own fetches, a token refresh), and clears that of the authorizer it replaces if
  /// it was this service, as GTMSessionFetcherService does. Both are the authorizer's own code, so
  /// they run after the service's lock is released.
  public var authorizer: (any FetcherAuthorizer)? {
    get { self[defaults: \.authorizer] }
    set {
      let replaced = state.withLock { state in
        defer { state.defaults.authorizer = newValue }
        return state.defaults.authorizer
      }
      if let replaced, replaced.fetcherService === self { replaced.fetcherService = nil }
      newValue?.fetcherService = self
    }
  }

  /// The Range window of the fetchers' downloads to a file; see
  /// `SessionFetcher.downloadWindowLength`. Default: 16 MiB on Linux, nil (one request) on Apple
  /// platforms; nil turns windows off.
  public var downloadWindowLength: Int64? {
    get { self[defaults: \.downloadWindowLength] }
    set { self[defaults: \.downloadWindowLength] = newValue }
  }

  /// The longest line a stream of the fetchers gives; see `SessionFetcher.maximumLineLength`.
  /// Default: 1 MiB. A value of 0 or less makes the fetchers fail at begin with
  /// `SessionFetcherError.invalidConfiguration(_:)`.
  public var maximumLineLength: Int {
    get { self[defaults: \.maximumLineLength] }
    set { self[defaults: \.maximumLineLength] = newValue }
  }

  /// The longest server-sent event a stream of the fetchers gives; see
  /// `SessionFetcher.maximumEventLength`. Default: 16 MiB. A value of 0 or less makes the fetchers
  /// fail at begin with `SessionFetcherError.invalidConfiguration(_:)`.
  public var maximumEventLength: Int {
    get { self[defaults: \.maximumEventLength] }
    set { self[defaults: \.maximumEventLength] = newValue }
  }

  /// The User-Agent of the fetchers' requests. When nil (the default), ``standardUserAgent``.
  /// A User-Agent already set on a request, or in the session configuration's
  /// `httpAdditionalHeaders`, wins. A fetcher made with ``fetcher(url:)`` gets it when it is made;
  /// other requests without one get it before each attempt. One with a control character (CR,
  /// LF…) fails each fetch with `SessionFetcherError.invalidConfiguration`, with nothing sent.
  public var userAgent: String? {
    get { state.withLock { $0.userAgent } }
    set { state.withLock { $0.userAgent = newValue } }
  }

  /// Whether stopping a fetcher calls its completion with `SessionFetcherError.cancelled`
  /// (default false).
  public var stopFetchingTriggersCompletionHandler: Bool {
    get { self[defaults: \.stopFetchingTriggersCompletionHandler] }
    set { self[defaults: \.stopFetchingTriggersCompletionHandler] = newValue }
  }

  /// Stubs the fetchers' responses without the network; see `SessionFetcher.testBlock`.
  public var testBlock: SessionFetcher.TestBlock? {
    get { self[defaults: \.testBlock] }
    set { self[defaults: \.testBlock] = newValue }
  }

  /// What moves the bytes of the service's fetchers (see `FetcherEngine`). Default:
  /// `FetcherEngine.default` (URLSession unless `SESSIONFETCHER_ENGINE` says otherwise).
  ///
  /// Read when the service makes a session: a change takes effect for the next session, so
  /// fetchers already begun, and those that begin on the current shared session, keep the engine
  /// they have. Call ``resetSession()`` after changing it to apply it to every fetcher begun from
  /// then on. A fetch on an engine that is not available here fails at begin with
  /// `SessionFetcherError.engineUnavailable`.
  public var engine: FetcherEngine {
    get { self[defaults: \.engine] }
    set { self[defaults: \.engine] = newValue }
  }

  /// Makes the engine sessions of the service's sessions in place of ``engine``'s: a test's
  /// scripted engine. Read, like ``engine``, when the service makes a session.
  package var engineSessions: SharedSession.EngineSessionMaker? {
    get { self[defaults: \.engineSessions] }
    set { self[defaults: \.engineSessions] = newValue }
  }

  /// How the fetchers' TLS connections are verified and authenticated; see `TLSSettings` and
  /// `SessionFetcher.tlsSettings`. Copied into each fetcher when it is made. Settings other than
  /// the defaults need the libcurl engine on Linux (``engine``).
  public var tlsSettings: TLSSettings {
    get { self[defaults: \.tlsSettings] }
    set { self[defaults: \.tlsSettings] = newValue }
  }

  /// The base configuration of the service's session(s). Nil (the default) means the library's:
  /// ephemeral and, on Linux, at most 4 connections per host (see
  /// `SessionFetcher.configuration`). A configuration set here is used as it is, its
  /// `httpMaximumConnectionsPerHost` included; to keep the library's defaults and change other
  /// settings, set only ``configurationBlock``. The library's required settings are applied to a
  /// copy. Takes effect for the next session made.
  public var configuration: URLSessionConfiguration? {
    get { self[defaults: \.sessionConfiguration] }
    set { self[defaults: \.sessionConfiguration] = newValue }
  }

  /// Adjusts the configuration each time the service makes a session (with ``reuseSession``, once
  /// per shared session; without, once per fetcher).
  public var configurationBlock: (@Sendable (URLSessionConfiguration) -> Void)? {
    get { self[defaults: \.configurationBlock] }
    set { self[defaults: \.configurationBlock] = newValue }
  }

  /// Named values copied into every fetcher's `SessionFetcher.properties`.
  public var properties: [String: any Sendable] {
    get { self[defaults: \.properties] }
    set { self[defaults: \.properties] = newValue }
  }

  /// Sets one of ``properties``.
  public func setProperty(_ value: (any Sendable)?, forKey key: String) {
    state.withLock { $0.defaults.properties[key] = value }
  }

  /// The cookie jar of the service's fetchers: by default an empty in-memory jar of this service
  /// alone, isolated from other services and from `SessionCookieStorage.shared`.
  public var cookieStorage: SessionCookieStorage {
    get { self[defaults: \.cookieStorage] }
    set { self[defaults: \.cookieStorage] = newValue }
  }

  // MARK: - Sessions

  /// Whether the service's fetchers share one URLSession (default true). When false, each fetcher
  /// gets a session of its own, closed when it ends. Read when a fetcher is made.
  public var reuseSession: Bool {
    get { state.withLock { $0.reuseSession } }
    set { state.withLock { $0.reuseSession = newValue } }
  }

  /// Seconds the shared session may stay unused before it is invalidated (default 60); the next
  /// fetcher makes a new one.
  public var unusedSessionTimeout: TimeInterval {
    get { state.withLock { $0.unusedSessionTimeout } }
    set { state.withLock { $0.unusedSessionTimeout = max(0, newValue) } }
  }

  /// Drops the shared session: fetchers begun from now on get a new one; fetchers that already
  /// took the old one finish on it, then it is invalidated.
  public func resetSession() {
    let unused = state.withLock { $0.sessions.detachCurrent() }
    unused?.finishTasksAndInvalidate()
  }

  /// The shared session for `fetcher`, made if needed.
  ///
  /// The session is made outside the service's lock: ``configurationBlock`` is the caller's code,
  /// which may read the service (a read takes the same lock, which is not reentrant). Two fetchers
  /// that find no session at once may each make one; the first installed is shared, the other is
  /// let go of unused.
  func sharedSession(for fetcher: ObjectIdentifier) -> SharedSession {
    typealias Recipe = (
      configuration: URLSessionConfiguration?, engine: FetcherEngine,
      block: (@Sendable (URLSessionConfiguration) -> Void)?,
      engineSessions: SharedSession.EngineSessionMaker?
    )
    let existing = state.withLock { state -> SharedSession? in
      guard let session = state.sessions.current else { return nil }
      state.sessions.assign(session, to: fetcher)
      return session
    }
    if let existing { return existing }
    let recipe: Recipe = state.withLock { state in
      (
        state.defaults.sessionConfiguration?.copy() as? URLSessionConfiguration, state.defaults.engine,
        state.defaults.configurationBlock, state.defaults.engineSessions
      )
    }
    let base = recipe.configuration ?? SharedSession.defaultConfiguration(for: recipe.engine)
    LockAudit.userBlock("the service's configurationBlock")
    recipe.block?(base)
    let made =
      recipe.engineSessions.map { SharedSession(configuration: base, engineSessions: $0) }
      ?? SharedSession(configuration: base, engine: recipe.engine)
    let (session, unused) = state.withLock { state -> (SharedSession, SharedSession?) in
      if let current = state.sessions.current {
        state.sessions.assign(current, to: fetcher)
        return (current, made)
      }
      state.sessions.current = made
      state.sessions.createdCount += 1
      state.sessions.assign(made, to: fetcher)
      return (made, nil)
    }
    unused?.finishTasksAndInvalidate()
    return session
  }

  /// The shared session now in use, if any (for tests).
  package var currentSharedSession: SharedSession? { state.withLock { $0.sessions.current } }

  /// How many shared sessions the service made so far (for tests).
  package var sharedSessionCreationCount: Int { state.withLock { $0.sessions.createdCount } }

  /// Queues the shared session's idle check (see `SessionBook.checkIdle(now:timeout:)`), on a
  /// serial queue of its own: the global queues may be kept busy by the program. One timer per
  /// service, re-armed for each check and cancelled in `deinit`: a dropped service leaves nothing
  /// queued (a `asyncAfter` block cannot be withdrawn, and lived on for the whole timeout).
  func queueIdleCheck(after delay: TimeInterval) {
    idleTimer.withLock { timer in
      if timer == nil {
        timer = IdleTimer(queue: Self.idleCheckQueue) { [weak self] in self?.checkIdleSession() }
      }
      timer?.arm(after: delay)
    }
  }

  /// The idle check's timer, once made (for tests: what the service leaves behind).
  package var idleCheckTimer: IdleTimer? { idleTimer.withLock { $0 } }

  private static let idleCheckQueue = DispatchQueue(label: "FetcherService.idleCheck")

  /// Seconds on a monotonic clock, for the idle timer.
  static var monotonicNow: TimeInterval { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

  private func checkIdleSession() {
    let (check, queue) = state.withLock { state in
      (
        state.sessions.checkIdle(now: FetcherService.monotonicNow, timeout: state.unusedSessionTimeout),
        state.defaults.callbackQueue
      )
    }
    switch check {
    case .nothing:
      break
    case .checkAgain(let delay):
      queueIdleCheck(after: delay)
    case .invalidate(let session):
      session.finishTasksAndInvalidate()
      queue.async {
        NotificationCenter.default.post(name: .fetcherServiceSessionBecameInvalid, object: self)
      }
    }
  }

  // MARK: - Throttling

  /// The most fetchers running at once per host (default 10); 0 means unlimited. Raising it starts
  /// waiting fetchers at once.
  public var maxRunningFetchersPerHost: Int {
    get { state.withLock { $0.throttle.maxRunningPerHost } }
    set {
      let started = state.withLock { $0.throttle.setMaxRunningPerHost(newValue) }
      grantSlots(to: started)
    }
  }

  /// The running fetchers per host (those waiting out a retry delay included).
  public var runningFetchersByHost: [String: [SessionFetcher]] {
    state.withLock { $0.throttle.running }
  }

  /// The fetchers waiting for a slot per host, in the order they will start.
  public var delayedFetchersByHost: [String: [SessionFetcher]] {
    state.withLock { $0.throttle.waitingByHost }
  }

  /// The number of fetchers running or waiting for a slot.
  public var numberOfFetchers: Int { state.withLock { $0.throttle.count } }

  /// The number of running fetchers.
  public var numberOfRunningFetchers: Int { state.withLock { $0.throttle.runningCount } }

  /// The number of fetchers waiting for a slot.
  public var numberOfDelayedFetchers: Int { state.withLock { $0.throttle.waitingCount } }

  /// Blocks until no fetcher of the service is running or held back (each has completed or was
  /// stopped), at most `timeout` seconds; returns false on timeout. Fetchers begun while it waits
  /// are waited for too, and every fetcher it saw is waited for until its completion ran, even one
  /// the service let go of meanwhile (as it does when the fetch ends, before the completion is
  /// delivered on the fetcher's callback queue). The original's
  /// `waitForCompletionOfAllFetchersWithTimeout:`, for tests and command-line tools: each fetcher
  /// is waited for with SessionFetcher's `waitForCompletion(timeout:)`, whose rules for the main
  /// thread and the callback queue apply. In `async` code, `await` each fetch instead.
  @discardableResult
  public func waitForCompletionOfAllFetchers(timeout: TimeInterval) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    var waited: Set<ObjectIdentifier> = []
    var seen: [ObjectIdentifier: SessionFetcher] = [:]
    while true {
      let pending: [SessionFetcher] =
        Array(runningFetchersByHost.values.joined()) + Array(delayedFetchersByHost.values.joined())
      for fetcher in pending { seen[ObjectIdentifier(fetcher)] = fetcher }
      guard let next = pending.first(where: { !waited.contains(ObjectIdentifier($0)) }) ?? pending.first
      else {
        // A fetcher that ended while another was waited for left the service before its
        // completion ran: wait for that too (at once for those already delivered).
        return seen.values.allSatisfy { $0.waitForCompletion(timeout: deadline.timeIntervalSinceNow) }
      }
      let remaining = deadline.timeIntervalSinceNow
      guard remaining > 0 else { return false }
      if waited.contains(ObjectIdentifier(next)) {
        // Completed, and not yet let go of by the service: its bookkeeping follows the completion.
        Thread.sleep(forTimeInterval: 0.001)
        continue
      }
      guard next.waitForCompletion(timeout: remaining) else { return false }
      waited.insert(ObjectIdentifier(next))
    }
  }

  /// The three counts read under one lock, so that they agree with each other (the separate
  /// properties may each see a different moment while fetchers start and end).
  package var fetcherCounts: (total: Int, running: Int, delayed: Int) {
    state.withLock { ($0.throttle.count, $0.throttle.runningCount, $0.throttle.waitingCount) }
  }

  /// Whether `fetcher` waits for a slot of its host.
  public func isDelayingFetcher(_ fetcher: SessionFetcher) -> Bool {
    state.withLock { $0.throttle.isWaiting(fetcher) }
  }

  /// Stops every fetcher of the service, the waiting ones first, then the running ones (host-less
  /// ones last). None of their callbacks that were already queued runs afterwards (a fetcher with
  /// `SessionFetcher.stopFetchingTriggersCompletionHandler` gets its one `.cancelled`
  /// completion). Fetchers begun after the call run normally.
  public func stopAllFetchers() {
    let (waiting, running, unthrottled) = state.withLock { state in
      state.retryWaiters = [:]
      let (waiting, running) = state.throttle.removeAll()
      defer { state.unthrottled = [] }
      return (waiting, running, state.unthrottled)
    }
    for fetcher in waiting { fetcher.stopFetching() }
    for fetcher in running { fetcher.stopFetching() }
    for fetcher in unthrottled { fetcher.stopFetching() }
  }

  /// Starts fetchers the throttle moved to running, in that order, on `grantQueue`: asynchronous,
  /// so that a fetcher ending inside another's callback never recurses through a chain of starts,
  /// and serial, so that delayed fetchers go on the wire in priority order.
  func grantSlots(to fetchers: [SessionFetcher]) {
    guard !fetchers.isEmpty else { return }
    grantQueue.async {
      for fetcher in fetchers { fetcher.serviceDidGrantSlot() }
    }
  }

  /// The throttle key of `url`: its lowercased host; nil (never throttled) without a host or for
  /// `data:` URLs.
  static func hostKey(for url: URL?) -> String? {
    guard let url, let host = url.host, !host.isEmpty else { return nil }
    if let scheme = url.scheme, scheme.utf8.count == 4, scheme.lowercased() == "data" { return nil }
    // Most hosts are lowercase ASCII already: lowercasing would copy the string for every fetch.
    let isLowercaseASCII = host.utf8.allSatisfy {
      $0 < 0x80 && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
    }
    return isLowercaseASCII ? host : host.lowercased()
  }

  // MARK: - ETags

  /// Whether fetchers send `If-None-Match` with the ETag remembered for a GET URL (default false).
  /// Only for fetchers that keep the body in memory (no `SessionFetcher.destinationFileURL` or
  /// `SessionFetcher.accumulateDataBlock`). A request's own `If-None-Match` wins.
  ///
  /// The cache follows RFC 9111's rules for a cache one process may use for many users: only a GET
  /// without `Range` or `Cache-Control: no-store` uses it; only a 200 without `no-store` or
  /// `Vary: *` is stored, with the request headers its `Vary` names, which a later request must
  /// send alike; a response to a request with `Authorization` (the authorizer's included) is reused
  /// only for the same credentials (kept as a SHA-256 digest, never in clear), unless it said
  /// `public`.
  public var shouldRememberETags: Bool {
    get { state.withLock { $0.shouldRememberETags } }
    set {
      state.withLock { state in
        state.shouldRememberETags = newValue
        if !newValue {
          state.shouldCacheETaggedData = false
          state.etagCache.removeAll()
        }
      }
    }
  }

  /// Whether the bodies of ETagged responses are cached too (default false; setting it turns on
  /// ``shouldRememberETags``). A 304 then completes with the cached body, status 200 and no error;
  /// without the data cache a 304 stays a status error.
  public var shouldCacheETaggedData: Bool {
    get { state.withLock { $0.shouldCacheETaggedData } }
    set {
      state.withLock { state in
        state.shouldCacheETaggedData = newValue
        if newValue { state.shouldRememberETags = true }
      }
    }
  }

  /// The byte capacity of the ETag cache (default ``defaultETagCacheCapacity``, 15 MB): the sum of
  /// its URLs, tags and bodies never exceeds it; the least recently used entries go first; an entry
  /// larger than the capacity is not kept.
  public var etagCacheCapacity: Int {
    get { state.withLock { $0.etagCache.capacity } }
    set { state.withLock { $0.etagCache.capacity = max(0, newValue) } }
  }

  /// Forgets every remembered ETag and cached body.
  public func removeAllCachedETags() {
    state.withLock { $0.etagCache.removeAll() }
  }

  /// The bytes the ETag cache holds now (see ``etagCacheCapacity``).
  public var etagCacheSize: Int { state.withLock { $0.etagCache.totalCost } }

  // MARK: - Early retry

  /// When true, a successful fetch to a host makes that host's fetchers that wait out a retry
  /// delay retry at once: the host is evidently back. Default false.
  public var isEarlyRetryEnabled: Bool {
    get { state.withLock { $0.isEarlyRetryEnabled } }
    set { state.withLock { $0.isEarlyRetryEnabled = newValue } }
  }

  // MARK: - User agent

  /// The User-Agent used when ``userAgent`` is nil, like the original's
  /// `GTMFetcherStandardUserAgentString`: `app/version system/release`, where app is the bundle
  /// identifier or `proc_` and the process name, version the bundle's version or `unknown`, and
  /// system and release come from `uname` (for example `proc_server/unknown Linux/6.1.0`).
  public static var standardUserAgent: String { StandardUserAgent.value }

  /// `string` made safe for a User-Agent product token, like the original's
  /// `GTMFetcherCleanedUserAgentString`: spaces and commas become `_`, whitespace and
  /// `()<>@;:\"/[]?={}` are removed. `"frog in tree/[1.2.3]"` gives `"frog_in_tree1.2.3"`.
  public static func cleanedUserAgentString(_ string: String) -> String {
    StandardUserAgent.cleaned(string)
  }

  // MARK: - Testing

  /// A service whose fetchers never touch the network: each completes with `fakedData` and
  /// `fakedError`, and a response for `http://example.invalid` with status 500 when there is an
  /// error, else 200 (as the original's `mockFetcherServiceWithFakedData:fakedError:`).
  public static func mockFetcherService(fakedData: Data?, fakedError: (any Error)?) -> FetcherService {
    mockFetcherService(fakedData: fakedData, fakedResponse: nil, fakedError: fakedError)
  }
}

extension Notification.Name {
  /// Posted (object: the ``FetcherService``) on the service's callback queue when its shared
  /// session was invalidated after ``FetcherService/unusedSessionTimeout`` without fetchers.
  public static let fetcherServiceSessionBecameInvalid = Notification.Name(
    "FetcherServiceSessionBecameInvalid")
}
