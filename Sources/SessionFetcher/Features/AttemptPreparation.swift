import Foundation

/// What runs before each attempt of a fetch, after throttling and before the authorizer: its
/// ``UserAgentProvider`` (asked once per fetch) and its service's ``FetcherDecorator``s, in order.
///
/// Made once when the fetch begins (a decorator added to the service later does not join a fetch
/// already begun), and only when there is something to run: a fetch without either takes no task.
///
/// `@unchecked Sendable`: the decorators and provider are fixed; `state` is behind its lock.
final class AttemptPreparation: @unchecked Sendable {
  let decorators: [any FetcherDecorator]
  private let userAgentProvider: (any UserAgentProvider)?
  /// The `User-Agent` a service put on the request when it made the fetcher (not the caller's own).
  private let presetUserAgent: String?
  private let state = Locked(State())

  private struct State {
    /// The provider's answer, once it gave one: retries reuse it.
    var userAgent: String?
    /// The task preparing (and authorizing) the current attempt.
    var task: Task<Void, Never>?
    /// The fetch was stopped: no task runs on.
    var isCancelled = false
  }

  private init(
    decorators: [any FetcherDecorator], userAgentProvider: (any UserAgentProvider)?, presetUserAgent: String?
  ) {
    self.decorators = decorators
    self.userAgentProvider = userAgentProvider
    self.presetUserAgent = presetUserAgent
  }

  /// The preparation of `fetcher`'s fetch: the fetcher's provider, else its service's; the
  /// service's decorators. nil when there is nothing to run.
  static func make(for fetcher: SessionFetcher) -> AttemptPreparation? {
    // Read first: the service is not asked under the fetcher's lock.
    let (hooks, ownProvider, preset) = fetcher.storage.withLock {
      ($0.config.serviceHooks, $0.config.userAgentProvider, $0.config.presetUserAgent)
    }
    let decorators = hooks?.decorators ?? []
    let provider = ownProvider ?? hooks?.userAgentProvider
    guard !decorators.isEmpty || provider != nil else { return nil }
    return AttemptPreparation(decorators: decorators, userAgentProvider: provider, presetUserAgent: preset)
  }

  /// Keeps `task` as the current attempt's, to cancel it if the fetch stops; cancels it at once if
  /// the fetch stopped already.
  func track(_ task: Task<Void, Never>) {
    let stopped = state.withLock { state -> Bool in
      if !state.isCancelled { state.task = task }
      return state.isCancelled
    }
    if stopped { task.cancel() }
  }

  /// The fetch stopped: cancels the running task (a provider or decorator that honours cancellation
  /// ends early) and any later one.
  func cancel() {
    let task = state.withLock { state -> Task<Void, Never>? in
      state.isCancelled = true
      defer { state.task = nil }
      return state.task
    }
    task?.cancel()
  }

  /// `request` with the provider's `User-Agent` (if it has none of its own), then as each decorator
  /// returns it. Throws ``AttemptAbandoned`` once the fetch is no longer preparing this attempt.
  func prepare(_ request: URLRequest, for fetcher: SessionFetcher) async throws -> URLRequest {
    var request = request
    if let provider = userAgentProvider, needsUserAgent(request) {
      let agent: String
      if let cached = state.withLock({ $0.userAgent }) {
        agent = cached
      } else {
        LockAudit.userBlock("userAgentProvider")
        agent = await provider.userAgent()
        state.withLock { $0.userAgent = agent }
      }
      try fetcher.checkStillPreparing()
      // As it is, even with a control character: the checks below then refuse it, naming the header.
      var fields = (request.allHTTPHeaderFields ?? [:]).filter { $0.key.lowercased() != "user-agent" }
      fields["User-Agent"] = agent
      request.allHTTPHeaderFields = fields
    }
    for decorator in decorators {
      try fetcher.checkStillPreparing()
      LockAudit.userBlock("a decorator's fetcherWillStart")
      request = try await decorator.fetcherWillStart(fetcher, request: request)
    }
    try fetcher.checkStillPreparing()
    return request
  }

  private func needsUserAgent(_ request: URLRequest) -> Bool {
    guard let own = request.value(forHTTPHeaderField: "User-Agent") else { return true }
    return own == presetUserAgent
  }
}

/// The fetch stopped while an attempt was being prepared: nothing more to do.
struct AttemptAbandoned: Error {}

extension SessionFetcher {
  /// Prepares the attempt (see ``AttemptPreparation``), authorizes it (see ``AuthorizerCalls``),
  /// then sends it, in a task.
  ///
  /// An error of a provider, a decorator or the authorizer ends the fetch with that error,
  /// unchanged. Nothing is sent when the fetch stopped meanwhile.
  func prepareAndLaunch(
    _ request: URLRequest, preparation: AttemptPreparation?, authorization: AuthorizerCalls?
  ) {
    let task = Task {
      var request = request
      if let preparation {
        do {
          request = try await preparation.prepare(request, for: self)
          try self.checkPrepared(request)
        } catch is AttemptAbandoned {
          return
        } catch {
          self.finish(data: nil, error: error)
          return
        }
      }
      guard let authorization else {
        self.launchAttempt(request, authorized: false)
        return
      }
      do {
        // A stop that came before the plan was kept reached no `AuthorizerCalls`: checked here.
        try self.checkStillPreparing()
        let authorized = try await authorization.authorize(request)
        self.launchAttempt(authorized.request, authorized: authorized.changed)
      } catch is AttemptAbandoned {
        return
      } catch {
        self.finish(data: nil, error: error)
      }
    }
    preparation?.track(task)
    authorization?.track(task)
  }

  /// Throws ``AttemptAbandoned`` unless the fetch still prepares an attempt (a stop ended it).
  fileprivate func checkStillPreparing() throws {
    guard storage.withLock({ $0.lifecycle.phase == .preparing }) else { throw AttemptAbandoned() }
  }

  /// Applies to a request a decorator returned the rules the caller's own request passed at begin:
  /// a fetchable URL, an allowed scheme, headers without control characters.
  private func checkPrepared(_ request: URLRequest) throws {
    guard let url = request.url, SessionFetcher.isFetchable(url) else {
      throw SessionFetcherError.invalidURL(request.url?.absoluteString ?? "")
    }
    let (schemes, allowLocalhost, viaSocket) = storage.withLock {
      (
        $0.config.allowedInsecureSchemes, $0.config.allowLocalhostRequest,
        $0.config.unixSocketPath != nil && $0.config.allowLocalhostRequest
      )
    }
    guard
      viaSocket
        || SecurityPolicy.allows(url, allowedInsecureSchemes: schemes, allowLocalhostRequest: allowLocalhost)
    else {
      throw SessionFetcherError.insecureRequest(url)
    }
    if let problem = RequestValidation.problem(in: request) {
      throw SessionFetcherError.invalidConfiguration(problem)
    }
  }

  /// Runs the decorators' ``FetcherDecorator/fetcherDidFinish(_:data:error:)`` in order, in a task,
  /// then `next`; `next` at once when the fetch has no decorators.
  func afterDecoratorsFinish(data: Data?, error: (any Error)?, then next: @escaping @Sendable () -> Void) {
    let decorators = storage.withLock { $0.plan?.preparation?.decorators } ?? []
    guard !decorators.isEmpty else {
      next()
      return
    }
    Task {
      for decorator in decorators {
        LockAudit.userBlock("a decorator's fetcherDidFinish")
        await decorator.fetcherDidFinish(self, data: data, error: error)
      }
      next()
    }
  }
}
