import Foundation

extension SessionFetcher {
  // MARK: - Begin

  /// Begins the fetch; `completionHandler` runs once on ``callbackQueue`` with the body (nil when it
  /// went to a file or to ``accumulateDataBlock``) or the error. For an HTTP status error the body
  /// is passed both as `data` and inside ``SessionFetcherError/status(code:data:)``.
  ///
  /// A fetcher begins once. If ``stopFetching()`` ran first, the fetch does not start (and completes
  /// with `.cancelled` only when ``stopFetchingTriggersCompletionHandler`` is set).
  public func beginFetch(completionHandler: @escaping FetcherCompletionHandler) {
    begin(completion: completionHandler, forceCompletionOnStop: false)
  }

  /// Begins the fetch.
  ///
  /// - Parameters:
  ///   - completion: runs once on the callback queue.
  ///   - forceCompletionOnStop: a stop completes with `.cancelled` whatever
  ///     ``stopFetchingTriggersCompletionHandler`` says (for awaiting callers and operations).
  ///   - successParser: runs on a global queue with a successful body before `completion` is
  ///     queued; not for failures or stops.
  package func begin(
    completion: @escaping FetcherCompletionHandler, forceCompletionOnStop: Bool,
    successParser: (@Sendable (Data?) -> Void)? = nil
  ) {
    enum Next {
      case proceed
      case cancelled(DispatchQueue)
      case alreadyBegun(DispatchQueue)
    }
    let next: Next = storage.withLock { storage in
      switch storage.lifecycle.begin() {
      case .proceed:
        storage.completion = completion
        storage.successParser = successParser
        let run = storage.run
        run.forceCompletionOnStop = forceCompletionOnStop
        run.retainedSelf = self
        run.timing.startDate = Date()
        storage.startRun(run)
        return .proceed
      case .stoppedBeforeBegin:
        let notify = forceCompletionOnStop || storage.config.stopFetchingTriggersCompletionHandler
        return notify ? .cancelled(storage.config.callbackQueue) : .proceed
      case .alreadyBegun:
        return .alreadyBegun(storage.config.callbackQueue)
      }
    }
    switch next {
    case .cancelled(let queue):
      queue.async { self.invokeCompletion(completion, data: nil, error: SessionFetcherError.cancelled) }
      return
    case .alreadyBegun(let queue):
      queue.async {
        self.invokeCompletion(
          completion, data: nil,
          error: SessionFetcherError.invalidConfiguration("a fetcher can begin only once"))
      }
      return
    case .proceed:
      break
    }
    guard storage.withLock({ $0.lifecycle.phase == .preparing }) else { return }
    let monitors = allMonitors()
    for monitor in monitors { monitor.fetcherDidBegin(self) }
    do {
      let plan = try makePlan(monitors: monitors)
      plan.preparation = AttemptPreparation.make(for: self)
      plan.authorization = storage.withLock { $0.config.authorizer }.map(AuthorizerCalls.init)
      storage.withLock { storage in
        storage.plan = plan
        StreamWindows.beginDownload(&storage)
      }
    } catch {
      finish(data: nil, error: error)
      return
    }
    if let hooks = serviceHooks {
      // Wait for a slot before asking the service, so that a grant racing its answer is not lost.
      guard storage.withLock({ $0.lifecycle.delayForSlot() }) == .askService else { return }
      guard hooks.fetcherShouldBeginNow(self) else { return }
      guard storage.withLock({ $0.lifecycle.slotGranted() }) == .startAttempt else { return }
    }
    startAttempt()
  }

  /// The service freed a slot for this delayed fetcher.
  package func serviceDidGrantSlot() {
    guard storage.withLock({ $0.lifecycle.slotGranted() }) == .startAttempt else { return }
    for monitor in allMonitors() { monitor.fetcherDidLeaveThrottleQueue(self) }
    startAttempt()
  }

  /// The global monitors and the fetcher's own: those of the plan once the fetch began (a monitor
  /// sees all of a fetch's events or none), else those registered now.
  func allMonitors() -> [any FetcherEventMonitor] {
    // The monitors are called as soon as they are returned.
    LockAudit.userBlock("a FetcherEventMonitor")
    if let monitors = storage.withLock({ $0.plan?.monitors }) { return monitors }
    let global = SessionFetcher.globalEventMonitors
    let own = storage.withLock { $0.config.eventMonitors }
    // Concatenating allocates, even with nothing to add.
    if global.isEmpty { return own }
    return own.isEmpty ? global : global + own
  }

  // MARK: - Attempts

  /// Starts the next attempt: user agent and decorators (see `AttemptPreparation`), authorize, send.
  func startAttempt() {
    let (plan, didRefresh) = storage.withLock { ($0.plan, $0.run.didRefreshAuthorization) }
    guard let plan else { return }
    var request = plan.baseRequest
    if plan.authorization != nil, didRefresh { request.setValue(nil, forHTTPHeaderField: "Authorization") }
    if plan.preparation == nil, plan.authorization == nil {
      launchAttempt(request, authorized: false)
    } else {
      prepareAndLaunch(request, preparation: plan.preparation, authorization: plan.authorization)
    }
  }

  /// - Parameter authorized: whether an authorizer made `authorizedRequest`.
  func launchAttempt(_ authorizedRequest: URLRequest, authorized: Bool) {
    var request = authorizedRequest
    let changedByService = serviceHooks?.fetcher(self, willSend: &request) ?? false
    // An authorizer or a service may have added headers: refused before Started is posted, as a
    // bad request of the caller's own is at begin. A request neither changed was checked then.
    if authorized || changedByService,
      let problem = RequestValidation.problem(in: request)
    {
      finish(data: nil, error: SessionFetcherError.invalidConfiguration(problem))
      return
    }
    guard let started = storage.withLock({ $0.attemptStarted(at: $0.clock.now) }) else { return }
    post(.sessionFetcherStarted, on: started.queue)
    sendHop(request, body: started.body)
  }

  /// Sends one request of the current attempt (the first, or a redirect hop).
  ///
  /// - Parameter answer: an `Authorization` value for this request alone (a Digest answer, bound
  ///   to this request's URI and nonce count): sent, but not kept in the hop's `hopRequest`, the
  ///   base of the hop's redirects, continuations and resends.
  func sendHop(_ hopRequest: URLRequest, body: BodySource, answer: String? = nil) {
    var request = hopRequest
    if let answer { request.setValue(answer, forHTTPHeaderField: "Authorization") }
    // One lock for what the hop reads before it goes: the plan, and the Range headers of a kept
    // part file or of a stream's next window.
    let plan = storage.withLock { storage -> FetchPlan? in
      guard let plan = storage.plan else { return nil }
      DownloadResume.addRangeHeaders(to: &request, from: storage)
      StreamWindows.addRangeHeaders(to: &request, storage: &storage)
      return plan
    }
    guard let plan else { return }
    // The jar has a lock of its own: asked after the fetcher's is released.
    if let cookieStorage = plan.cookieStorage, let url = request.url,
      let cookies = cookieStorage.cookieHeaderValue(for: url)
    {
      let existing = request.value(forHTTPHeaderField: "Cookie")
      request.setValue(existing.map { "\($0); \(cookies)" } ?? cookies, forHTTPHeaderField: "Cookie")
    }
    // The last gate before the engine, whatever set the headers (a redirect block, the jar): no
    // engine sends a request that breaks the rule.
    if let problem = RequestValidation.problem(in: request) {
      finish(data: nil, error: SessionFetcherError.invalidConfiguration(problem))
      return
    }
    let hop = storage.withLock { storage -> UInt64? in
      let run = storage.run
      let hop = run.hopCount + 1
      let now = plan.clock.now
      let exchange = HopState(
        hop: hop, request: request, hopRequest: hopRequest, keepsBody: body.isPresent, now: now)
      // The timeout runs from here: body preparation and the engine's making of the task count.
      if plan.testBlock == nil { exchange.pendingHop = hop }
      guard storage.lifecycle.hopStarted(exchange) == .send else { return nil }
      run.hopCount = hop
      run.timing.requestStartDate = now
      if plan.testBlock == nil {
        armTimeout(&storage, after: min(plan.idleTimeout, plan.resourceTimeout ?? .infinity))
      }
      return hop
    }
    guard let hop else { return }
    for monitor in allMonitors() { monitor.fetcher(self, willSendRequest: request) }

    if let testBlock = plan.testBlock {
      plan.callbackQueue.async {
        LockAudit.userBlock("testBlock")
        testBlock(self) { response, data, error in
          self.simulate(response: response, data: data, error: error)
        }
      }
      return
    }

    var wireRequest = request
    // The engine frames the body it is given: a caller's (or a decorator's) Content-Length or
    // Transfer-Encoding that disagreed with it would leave the rest of the body to be read as the
    // next request on the connection (RFC 9112 §6.3). A body-less POST, PUT or PATCH still says
    // `Content-Length: 0` (see the engines).
    for name in ["Content-Length", "Transfer-Encoding"]
    where wireRequest.value(forHTTPHeaderField: name) != nil {
      wireRequest.setValue(nil, forHTTPHeaderField: name)
    }
    // The fetcher's own timer enforces the timeouts on every engine (see `checkTimeout`); URLSession's
    // is only a backstop, at least 2 s later. Its timer is whole seconds on Linux (a fractional value
    // is cut, one below a second fires at once), and where it fires while the task waits for the
    // answer to a redirect, the answer kills the process (see `CancelledRedirectGuard`): the fetcher's
    // timer must always come first and let go of the task.
    if plan.session.enforcesRequestTimeout {
      let backstop = SessionFetcher.transportTimeout(backing: plan.idleTimeout)
      if wireRequest.timeoutInterval != backstop { wireRequest.timeoutInterval = backstop }
    }
    let engineBody: EngineBody
    switch body {
    case .none:
      engineBody = .none
    case .data(let data):
      engineBody = .data(data)
    case .file(let url):
      do {
        try SessionFetcher.checkReadableFile(url)
      } catch {
        guard abandon(hop: hop) else { return }
        attemptFailed(error: error)
        return
      }
      engineBody = .file(url)
    case .stream(let provider):
      let stream: InputStream
      do {
        LockAudit.userBlock("bodyStreamProvider")
        stream = observedBodyStream(try provider())
      } catch {
        guard abandon(hop: hop) else { return }
        attemptFailed(
          error: SessionFetcherError.bodyUnavailable(
            description: "the body stream provider threw: \(SessionFetcherError.readable(error))"))
        return
      }
      // Without an exact length a stream goes chunked; a Content-Length as well would frame it
      // twice on FoundationNetworking (corelibs #4818). libcurl sets the length of a sized stream.
      wireRequest.setValue(nil, forHTTPHeaderField: "Content-Length")
      // No empty `Expect` to suppress libcurl's `Expect: 100-continue` on the URLSession engine:
      // FoundationNetworking sends an empty value as a bare `Expect:` line, which strict servers
      // answer with 417 (gunicorn 22 and later, so every streamed or MIMEDocument upload to them
      // failed). libcurl's interim 100 response is ignored in `receive(response:)`.
      guard let length = plan.exactStreamLength else {
        engineBody = .stream(stream)
        break
      }
      if plan.session.sendsSizedStreams(for: wireRequest) {
        engineBody = .sizedStream(stream, length: length)
        break
      }
      spoolThenSend(wireRequest, stream: stream, length: length, plan: plan, hop: hop)
      return
    }
    startTask(wireRequest, body: engineBody, plan: plan, hop: hop)
  }

  /// Reads a stream of known length whole, off the caller's thread, then sends it with a
  /// `Content-Length` on the URLSession engine (see `BodySpool`). A stream that fails, or is not
  /// the length it announced, fails the attempt with nothing sent.
  private func spoolThenSend(
    _ request: URLRequest, stream: InputStream, length: Int64, plan: FetchPlan, hop: UInt64
  ) {
    nonisolated(unsafe) let stream = stream
    DispatchQueue.global(qos: .userInitiated).async {
      let prepared: BodySpool.Prepared
      do {
        prepared = try BodySpool.prepare(stream, length: length)
      } catch {
        guard self.abandon(hop: hop) else { return }
        self.attemptFailed(error: error)
        return
      }
      let engineBody: EngineBody
      switch prepared {
      case .data(let data):
        engineBody = .data(data)
      case .file(let url):
        switch self.storage.withLock({ $0.bodySpooled(to: url, forHop: hop) }) {
        case .discard:
          try? FileManager.default.removeItem(at: url)
          return
        case .kept(let replaced):
          if let replaced { try? FileManager.default.removeItem(at: replaced) }
        }
        engineBody = .file(url)
      }
      self.startTask(request, body: engineBody, plan: plan, hop: hop)
    }
  }

  /// Hands one exchange to the engine and starts it.
  private func startTask(_ wireRequest: URLRequest, body engineBody: EngineBody, plan: FetchPlan, hop: UInt64)
  {
    let task = plan.session.makeTask(
      request: wireRequest, body: engineBody, tls: plan.tlsSettings, route: plan.route, handler: self)
    guard let task else {
      guard abandon(hop: hop) else { return }
      attemptFailed(error: SessionFetcherError.invalidConfiguration("the fetcher's session was invalidated"))
      return
    }
    // Still this hop's, unless a timeout or a stop ended it while the task was being made.
    let current = storage.withLock { storage -> Bool in
      guard storage.lifecycle.isPending(hop: hop) else { return false }
      storage.lifecycle.current.pendingHop = nil
      storage.lifecycle.current.task = task
      return true
    }
    guard current else {
      Self.letGo(task)
      return
    }
    task.resume()
  }

  /// Gives up `hop` before it has a task (its body cannot be had, or there is no session): `false`
  /// if a timeout or a stop ended it first, which has then reported the attempt's end already.
  private func abandon(hop: UInt64) -> Bool {
    storage.withLock { storage in
      guard storage.lifecycle.isPending(hop: hop) else { return false }
      storage.lifecycle.current.pendingHop = nil
      Self.disarmTimeout(&storage)
      return true
    }
  }

  /// Cancels a task that the fetcher has let go of (it ignores whatever the task reports) and
  /// invalidates the session the fetch owned, if any, without the caller waiting for the engine
  /// (see ``EngineTask/letGo()`` and ``EngineSession/invalidateAndCancelWithoutWaiting()``).
  package static func letGo(_ task: (any EngineTask)?, invalidating session: SharedSession? = nil) {
    task?.letGo()
    session?.invalidateAndCancelWithoutWaiting()
  }
}

/// An attempt that starts (see `FetcherStorage.attemptStarted(at:)`): post Started on `queue`, then
/// send the first hop with `body`.
struct AttemptStart {
  var queue: DispatchQueue
  var body: BodySource
}

/// Whether a spooled body goes on to the engine, decided under the fetcher's lock by
/// `FetcherStorage.bodySpooled(to:forHop:)`.
enum SpoolAction {
  /// The hop still waits for it: it is the attempt's spool now; delete the one it replaced, if any.
  case kept(replacing: URL?)
  /// The hop ended meanwhile (a stop, a timeout): delete the spool, send nothing.
  case discard
}

extension FetcherStorage {
  /// An attempt starts at `now` (the machine makes what spans its hops afresh). Nil when it may not
  /// (stopped or ended meanwhile, or still waiting for a slot).
  mutating func attemptStarted(at now: Date) -> AttemptStart? {
    guard lifecycle.attemptStarted(at: now) == .postStartedAndSend, let plan else { return nil }
    // The body is read here: the plan's body changes (is released) under the lock.
    return AttemptStart(queue: plan.callbackQueue, body: plan.body)
  }

  /// Hop `hop`'s body was spooled to `url`.
  mutating func bodySpooled(to url: URL, forHop hop: UInt64) -> SpoolAction {
    guard lifecycle.isPending(hop: hop) else { return .discard }
    let replaced = run.bodySpoolFile
    run.bodySpoolFile = url
    return .kept(replacing: replaced)
  }
}
