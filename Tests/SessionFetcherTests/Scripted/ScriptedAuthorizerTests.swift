import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A token error of the caller's own, as an authorizer such as GTMAppAuth's throws it.
private struct TokenError: Error, Equatable {
  var reason: String
}

/// Closed until ``open()``; ``wait()`` suspends (without holding a thread) until then, or until its
/// task is cancelled (then it throws `CancellationError` unless `ignoringCancellation`).
private final class AuthorizerLatch: Sendable {
  private struct State {
    var isOpen = false
    var waiters: [CheckedContinuation<Void, Never>] = []
  }
  private let state = LockedValue(State())

  func open() {
    let waiters = state.withLock { state in
      state.isOpen = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Waits for ``open()``; a cancelled task goes on at once when it honours cancellation.
  func wait(ignoringCancellation: Bool = false) async throws {
    if ignoringCancellation {
      await opened()
      return
    }
    await withTaskCancellationHandler {
      await opened()
    } onCancel: {
      open()
    }
    try Task.checkCancellation()
  }

  private func opened() async {
    await withCheckedContinuation { continuation in
      let isOpen = state.withLock { state in
        if !state.isOpen { state.waiters.append(continuation) }
        return state.isOpen
      }
      if isOpen { continuation.resume() }
    }
  }
}

/// A value behind a lock, for test doubles.
private final class LockedValue<Value>: @unchecked Sendable {
  // `@unchecked Sendable`: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value: Value
  init(_ value: Value) { self.value = value }
  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

/// An authorizer whose every answer the test chooses, recording what the fetcher asked of it.
private final class RecordingAuthorizer: FetcherAuthorizer {
  enum Answer: Sendable {
    /// Adds `Authorization: Bearer <token>`.
    case token(String)
    /// Throws this error.
    case fail(TokenError)
  }

  let answer: Answer
  /// Waited on before answering, when set.
  let latch: AuthorizerLatch?
  let ignoresCancellation: Bool
  let authorized = Recorder<URLRequest>()
  let stopped = Recorder<URLRequest>()
  /// The error the wait on the latch ended with (a `CancellationError` when the fetch stopped).
  let waitErrors = Recorder<any Error>()
  /// One entry each time the authorizer gave its answer (returned or threw).
  let answered = Recorder<Bool>()

  init(_ answer: Answer, latch: AuthorizerLatch? = nil, ignoresCancellation: Bool = false) {
    self.answer = answer
    self.latch = latch
    self.ignoresCancellation = ignoresCancellation
  }

  func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
    authorized.append(request)
    if let latch {
      do {
        try await latch.wait(ignoringCancellation: ignoresCancellation)
      } catch {
        waitErrors.append(error)
        answered.append(true)
        throw error
      }
    }
    defer { answered.append(true) }
    switch answer {
    case .token(let token):
      var request = request
      request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
      return request
    case .fail(let error):
      throw error
    }
  }

  func stopAuthorization(for request: URLRequest) {
    stopped.append(request)
  }
}

/// What a GTMSessionFetcher client's authorizer relies on: its errors reach the caller as they
/// are, a stop reaches it, a request it calls authorized is left alone, its own refresh rule, and
/// GTM's completion-handler form.
@Suite("Authorizer (scripted)")
struct ScriptedAuthorizerTests {
  static let body = Data("welcome".utf8)

  @Test func thrownErrorReachesTheAsyncCallerAsItself() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/api")
    fetcher.authorizer = RecordingAuthorizer(.fail(TokenError(reason: "revoked")))
    do {
      _ = try await fetcher.beginFetch()
      Issue.record("the fetch succeeded")
    } catch let error as TokenError {
      #expect(error == TokenError(reason: "revoked"))
    } catch {
      Issue.record("expected the TokenError, got \(error)")
    }
    #expect(engine.requests.isEmpty)
  }

  @Test func thrownErrorReachesTheCompletionHandlerAsItself() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/api")
    fetcher.authorizer = RecordingAuthorizer(.fail(TokenError(reason: "revoked")))
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.error as? TokenError == TokenError(reason: "revoked"))
    #expect(result.data == nil)
    #expect(engine.requests.isEmpty)
    await drain(fetcher.callbackQueue)
    #expect(counter.started == 0 && counter.stopped == 0 && counter.completionInvoked == 1)
  }

  /// Stopped while the authorizer works, with nothing else to prepare (no service, provider or
  /// decorator): the authorizer's task is cancelled and it is told once which request to stop.
  @Test(arguments: [false, true])
  func stopWhileAuthorizingCancelsAndStopsTheRequest(withCallback: Bool) async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/api")
    fetcher.stopFetchingTriggersCompletionHandler = withCallback
    let latch = AuthorizerLatch()
    let authorizer = RecordingAuthorizer(.token("t"), latch: latch)
    fetcher.authorizer = authorizer
    let results = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    #expect(await eventually { authorizer.authorized.count == 1 })
    fetcher.stopFetching()
    fetcher.stopFetching()
    #expect(await eventually { authorizer.waitErrors.count == 1 })
    #expect(authorizer.waitErrors.values.first is CancellationError)
    #expect(authorizer.stopped.values.map(\.url) == [engine.url("/api")])
    await drain(fetcher.callbackQueue)
    #expect(results.count == (withCallback ? 1 : 0))
    if withCallback { #expect(results.values.first?.fetcherError == .cancelled) }
    #expect(engine.requests.isEmpty)
    #expect(authorizer.stopped.count == 1)
  }

  /// An authorizer that ignores the cancellation and answers after the stop, with a token or an
  /// error: the answer is dropped; the stop is the fetch's only outcome.
  @Test(arguments: [(false, false), (false, true), (true, false), (true, true)])
  func answerAfterTheStopIsDropped(fails: Bool, withCallback: Bool) async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(body: Self.body))
    let watched = WeakReference<SessionFetcher>()
    let latch = AuthorizerLatch()
    let answer: RecordingAuthorizer.Answer = fails ? .fail(TokenError(reason: "late")) : .token("late")
    let authorizer = RecordingAuthorizer(answer, latch: latch, ignoresCancellation: true)
    let results = Recorder<FetchResult>()
    let counter = NotificationRecorder()
    let callbackQueue: DispatchQueue
    do {
      let fetcher = engine.fetcher("/api")
      watched.object = fetcher
      callbackQueue = fetcher.callbackQueue
      fetcher.stopFetchingTriggersCompletionHandler = withCallback
      fetcher.authorizer = authorizer
      counter.watch(fetcher)
      fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
      #expect(await eventually { authorizer.authorized.count == 1 })
      fetcher.stopFetching()
      #expect(authorizer.stopped.count == 1)
    }
    latch.open()
    #expect(await eventually { authorizer.answered.count == 1 })
    // The task that took the answer holds the fetcher until it has done what follows the answer
    // (a send, a completion, or nothing): the fetcher freed is that task ended.
    #expect(await eventually { watched.object == nil }, "the fetcher is still held")
    await engine.drainEvents()
    await drain(callbackQueue)
    #expect(results.count == (withCallback ? 1 : 0))
    if withCallback { #expect(results.values.first?.fetcherError == .cancelled) }
    #expect(engine.requests.isEmpty)
    #expect(counter.started == 0 && counter.stopped == 0)
  }

  /// Says a request with any `Authorization` header is authorized already.
  final class HeaderTrustingAuthorizer: FetcherAuthorizer {
    let calls = Recorder<URLRequest>()
    func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
      calls.append(request)
      var request = request
      request.setValue("Bearer authorizer", forHTTPHeaderField: "Authorization")
      return request
    }
    func isAuthorizedRequest(_ request: URLRequest) -> Bool {
      request.value(forHTTPHeaderField: "Authorization") != nil
    }
  }

  @Test func requestTheAuthorizerCallsAuthorizedIsSentAsItIs() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(body: Self.body), .response(body: Self.body))
    let authorizer = HeaderTrustingAuthorizer()
    let own = engine.fetcher("/api")
    own.setRequestValue("Bearer mine", forHTTPHeaderField: "Authorization")
    own.authorizer = authorizer
    #expect(await own.fetchResult().data == Self.body)
    #expect(authorizer.calls.count == 0)
    // Without a header of the caller's own, the authorizer is asked.
    let plain = engine.fetcher("/api")
    plain.authorizer = authorizer
    #expect(await plain.fetchResult().data == Self.body)
    #expect(authorizer.calls.count == 1)
    #expect(engine.requests.map { $0.header("Authorization") } == ["Bearer mine", "Bearer authorizer"])
  }

  @Test func authorizerWithoutPrimeForRefreshIsNotRetriedAfter401() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(status: 401), .response(body: Self.body))
    let authorizer = RecordingAuthorizer(.token("t"))
    let fetcher = engine.fetcher("/api")
    fetcher.authorizer = authorizer
    #expect(await fetcher.fetchResult().fetcherError?.statusCode == 401)
    #expect(engine.requests.count == 1)
    #expect(authorizer.authorized.count == 1)
  }

  /// A port of an Objective-C authorizer: a synchronous `primeForRefresh() -> Bool`.
  final class SyncPrimingAuthorizer: FetcherAuthorizer {
    let primes = Recorder<Bool>()
    func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
      var request = request
      request.setValue("Bearer \(primes.count == 0 ? "stale" : "fresh")", forHTTPHeaderField: "Authorization")
      return request
    }
    func primeForRefresh() -> Bool {
      primes.append(true)
      return true
    }
  }

  @Test func synchronousPrimeForRefreshOfItsOwnIsCalled() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(status: 401), .response(body: Self.body))
    let authorizer = SyncPrimingAuthorizer()
    let fetcher = engine.fetcher("/api")
    fetcher.authorizer = authorizer
    #expect(await fetcher.fetchResult().data == Self.body)
    #expect(authorizer.primes.count == 1)
    #expect(engine.requests.map { $0.header("Authorization") } == ["Bearer stale", "Bearer fresh"])
  }

  /// GTM's form only: the completion handler gives the request or the error.
  fileprivate final class CompletionFormAuthorizer: FetcherAuthorizer {
    let error: TokenError?
    init(error: TokenError? = nil) { self.error = error }
    func authorizeRequest(
      _ request: URLRequest, completionHandler: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
      let error = self.error
      DispatchQueue.global().async {
        if let error {
          completionHandler(.failure(error))
          return
        }
        var request = request
        request.setValue("Bearer from-handler", forHTTPHeaderField: "Authorization")
        completionHandler(.success(request))
        // A second call changes nothing.
        completionHandler(.failure(TokenError(reason: "twice")))
      }
    }
  }

  @Test func completionHandlerFormAuthorizes() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/api")
    fetcher.authorizer = CompletionFormAuthorizer()
    #expect(await fetcher.fetchResult().data == Self.body)
    #expect(engine.requests.map { $0.header("Authorization") } == ["Bearer from-handler"])
  }

  @Test func completionHandlerFormErrorReachesTheCallerAsItself() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/api")
    fetcher.authorizer = CompletionFormAuthorizer(error: TokenError(reason: "handler"))
    do {
      _ = try await fetcher.beginFetch()
      Issue.record("the fetch succeeded")
    } catch {
      #expect(error as? TokenError == TokenError(reason: "handler"))
    }
    #expect(engine.requests.isEmpty)
  }

  /// The `async` form called directly, as another fetch's code might: the default of each form
  /// calls the other.
  @Test func eachFormsDefaultCallsTheOther() async throws {
    let request = URLRequest(url: URL(string: "https://example.com/")!)
    let asyncOnly = RecordingAuthorizer(.token("async"))
    let viaHandler = await withCheckedContinuation { continuation in
      asyncOnly.authorizeRequest(request) { continuation.resume(returning: $0) }
    }
    #expect(try viaHandler.get().value(forHTTPHeaderField: "Authorization") == "Bearer async")
    let handlerOnly = CompletionFormAuthorizer()
    let viaAsync = try await handlerOnly.authorizeRequest(request)
    #expect(viaAsync.value(forHTTPHeaderField: "Authorization") == "Bearer from-handler")
  }

  /// GTM's form, keeping its handler without calling it (a token request still out).
  final class SilentCompletionFormAuthorizer: FetcherAuthorizer {
    let handlers = Recorder<@Sendable (Result<URLRequest, any Error>) -> Void>()
    func authorizeRequest(
      _ request: URLRequest, completionHandler: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
      handlers.append(completionHandler)
    }
  }

  /// Cancelling the `async` form's caller (what a stopped fetch does) ends the wait on a handler
  /// that was not called; calling it later changes nothing.
  @Test func cancellationEndsTheWaitOnTheCompletionForm() async {
    let authorizer = SilentCompletionFormAuthorizer()
    let request = URLRequest(url: URL(string: "https://example.com/")!)
    let waiting = Task { try await authorizer.authorizeRequest(request) }
    #expect(await eventually { authorizer.handlers.count == 1 })
    waiting.cancel()
    let result = await waiting.result
    #expect(throws: CancellationError.self) { try result.get() }
    authorizer.handlers.values.first?(.success(request))
  }

  /// Implements neither form: a clear error that names both, no endless recursion, nothing sent.
  struct FormlessAuthorizer: FetcherAuthorizer {}

  @Test func authorizerWithNeitherFormFailsClearly() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/api", with: .response(body: Self.body))
    let fetcher = engine.fetcher("/api")
    fetcher.authorizer = FormlessAuthorizer()
    let result = await fetcher.fetchResult()
    guard case .authorizationFailed(let text)? = result.fetcherError else {
      Issue.record("expected authorizationFailed, got \(String(describing: result.error))")
      return
    }
    #expect(text.contains("FormlessAuthorizer"))
    #expect(text.contains("authorizeRequest(_:) async throws"))
    #expect(text.contains("authorizeRequest(_:completionHandler:)"))
    #expect(engine.requests.isEmpty)
  }

  /// GTM's optional members: what an authorizer that implements none of them answers.
  @Test func optionalMembersHaveGTMsDefaults() async {
    let authorizer = FormlessAuthorizer()
    let request = URLRequest(url: URL(string: "https://example.com/")!)
    #expect(!authorizer.isAuthorizingRequest(request))
    #expect(!authorizer.isAuthorizedRequest(request))
    #expect(authorizer.userEmail == nil)
    #expect(authorizer.canAuthorize)
    #expect(!authorizer.shouldAuthorizeAllRequests)
    #expect(await authorizer.primeForRefresh() == false)
    authorizer.stopAuthorization()
    authorizer.stopAuthorization(for: request)
  }
}
