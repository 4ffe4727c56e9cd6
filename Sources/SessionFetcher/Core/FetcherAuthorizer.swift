import Foundation

/// Adds credentials (for example an OAuth bearer token) to a fetcher's requests: the Swift form of
/// GTMSessionFetcher's `GTMSessionFetcherAuthorizer` (`GTMFetcherAuthorizationProtocol`).
///
/// Before every attempt, retries included, the fetcher asks ``isAuthorizedRequest(_:)``: a request
/// the authorizer calls authorized already is sent as it is. Otherwise it calls
/// ``authorizeRequest(_:)`` and sends the request that returns. Implement that `async` form or
/// GTM's completion-handler form, ``authorizeRequest(_:completionHandler:)``: each one's default
/// calls the other (an authorizer that implements neither fails every fetch with
/// ``SessionFetcherError/authorizationFailed(description:)``, which names both).
///
/// An error the authorizer throws (or passes to the completion handler) ends the fetch with that
/// very error, before anything is sent: `catch let error as MyTokenError` works on the
/// ``SessionFetcher/beginFetch()`` of the fetcher, and the completion handler's error is it too.
///
/// When the server answers 401, the fetcher asks ``primeForRefresh()`` once per fetch; if it
/// returns true, the fetcher authorizes again (without the old `Authorization` header) and retries
/// once, even when retries are otherwise off. An authorizer without its own `primeForRefresh` is
/// not retried, as in GTMSessionFetcher.
///
/// A fetch stopped while its authorizer works cancels the `Task` that awaits the authorizer and
/// calls ``stopAuthorization(for:)`` once with the request being authorized. Whatever the
/// authorizer returns or throws after that is dropped: the stop is the fetch's only outcome.
///
/// Every member but ``authorizeRequest(_:)`` has a default. A member with a default is used only
/// when it matches the requirement exactly (a synchronous `primeForRefresh() -> Bool` matches; a
/// `weak var fetcherService: FetcherService?` of a concrete type does not, and the default is used).
///
/// ```swift
/// struct TokenAuthorizer: FetcherAuthorizer {
///   let tokens: TokenStore
///   func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
///     var request = request
///     request.setValue("Bearer \(try await tokens.current())", forHTTPHeaderField: "Authorization")
///     return request
///   }
///   func primeForRefresh() async -> Bool { await tokens.expireCurrent(); return true }
/// }
/// ```
public protocol FetcherAuthorizer: Sendable {
  /// Returns `request` with credentials added. An error thrown here is the fetch's error, as it is.
  ///
  /// The default calls ``authorizeRequest(_:completionHandler:)``.
  func authorizeRequest(_ request: URLRequest) async throws -> URLRequest

  /// GTM's form: calls `completionHandler` once, with `request` and its credentials or with the
  /// error that is to end the fetch. Any thread, any time later.
  ///
  /// The default calls ``authorizeRequest(_:)`` in a `Task`.
  func authorizeRequest(
    _ request: URLRequest, completionHandler: @escaping @Sendable (Result<URLRequest, any Error>) -> Void)

  /// Called after a 401: prepare fresh credentials and return true to retry once.
  /// The default returns false: no retry (GTM calls it only when the authorizer implements it).
  /// A synchronous `func primeForRefresh() -> Bool` implements it too.
  func primeForRefresh() async -> Bool

  /// Stops every authorization in progress (GTM's `stopAuthorization`). The fetcher never calls it;
  /// it is for the authorizer's users. The default does nothing.
  func stopAuthorization()

  /// Stops authorizing `request`: called once by a fetch stopped while its authorizer works, with
  /// the request it passed to ``authorizeRequest(_:)``. The default does nothing.
  func stopAuthorization(for request: URLRequest)

  /// Whether `request` is being authorized now. The default returns false.
  func isAuthorizingRequest(_ request: URLRequest) -> Bool

  /// Whether `request` carries this authorizer's credentials already: such a request is sent as it
  /// is, without calling ``authorizeRequest(_:)``. The default returns false (always authorize).
  func isAuthorizedRequest(_ request: URLRequest) -> Bool

  /// The signed-in user's email address, when the authorizer knows it. The default is nil.
  var userEmail: String? { get }

  /// Whether authorization may be attempted at all (credentials may still be refused). The
  /// default is true.
  var canAuthorize: Bool { get }

  /// For development only: whether the authorizer adds credentials to requests that are not https.
  /// The fetcher does not read it. The default is false.
  var shouldAuthorizeAllRequests: Bool { get }

  /// The service this authorizer was given to, to make its own fetches (a token refresh) with.
  ///
  /// A `FetcherService` sets it to itself when it is given the authorizer (`service.authorizer =
  /// authorizer`, after the service's lock is released) and back to nil when it is given another
  /// one; a fetcher's own ``SessionFetcher/authorizer`` sets nothing. Keep it weak, as GTM does
  /// (the service holds the authorizer): in a class, `weak var fetcherService: (any
  /// FetcherServiceProtocol)?` behind a lock. The default keeps nothing: it is always nil.
  ///
  /// A fetcher the service makes carries this authorizer, like every fetcher of the service: set
  /// its ``SessionFetcher/authorizer`` to nil for a token request, or that request is sent with the
  /// expired token, and a 401 from the token endpoint asks ``primeForRefresh()`` for another refresh.
  var fetcherService: (any FetcherServiceProtocol)? { get nonmutating set }
}

extension FetcherAuthorizer {
  public func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
    try await AuthorizerForms.bridge(request, of: self)
  }

  public func authorizeRequest(
    _ request: URLRequest, completionHandler: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
  ) {
    if AuthorizerForms.isBridging(Self.self) {
      completionHandler(.failure(AuthorizerForms.neitherImplemented(Self.self)))
      return
    }
    Task {
      // Cleared: another authorizer of this type called from in here is a call of its own.
      await AuthorizerForms.$bridgingType.withValue(nil) {
        do {
          completionHandler(.success(try await self.authorizeRequest(request)))
        } catch {
          completionHandler(.failure(error))
        }
      }
    }
  }

  /// No retry after a 401, as GTMSessionFetcher does for an authorizer without `primeForRefresh`.
  public func primeForRefresh() async -> Bool { false }

  /// Does nothing.
  public func stopAuthorization() {}

  /// Does nothing.
  public func stopAuthorization(for request: URLRequest) {}

  /// False.
  public func isAuthorizingRequest(_ request: URLRequest) -> Bool { false }

  /// False: every request is authorized.
  public func isAuthorizedRequest(_ request: URLRequest) -> Bool { false }

  /// Nil.
  public var userEmail: String? { nil }

  /// True.
  public var canAuthorize: Bool { true }

  /// False.
  public var shouldAuthorizeAllRequests: Bool { false }

  /// Always nil; setting it keeps nothing.
  public var fetcherService: (any FetcherServiceProtocol)? {
    get { nil }
    nonmutating set {}
  }
}

/// The two forms of ``FetcherAuthorizer/authorizeRequest(_:)``, each one's default calling the
/// other: a task-local mark says the `async` default is waiting on the completion default of the
/// same type, which then fails instead of calling back (an authorizer that implements neither).
enum AuthorizerForms {
  @TaskLocal static var bridgingType: ObjectIdentifier?

  static func bridge<Authorizer: FetcherAuthorizer>(
    _ request: URLRequest, of authorizer: Authorizer
  ) async throws -> URLRequest {
    // Resumed once: by the handler's first call, or by cancellation (a stopped fetch), whichever
    // comes first; a handler called again or late changes nothing.
    let pending = Locked<CheckedContinuation<URLRequest, any Error>?>(nil)
    let resume: @Sendable (Result<URLRequest, any Error>) -> Void = { result in
      let continuation = pending.withLock { pending in
        defer { pending = nil }
        return pending
      }
      continuation?.resume(with: result)
    }
    return try await withTaskCancellationHandler {
      try await $bridgingType.withValue(ObjectIdentifier(Authorizer.self)) {
        try await withCheckedThrowingContinuation { continuation in
          pending.withLock { $0 = continuation }
          if Task.isCancelled {
            resume(.failure(CancellationError()))
            return
          }
          authorizer.authorizeRequest(request, completionHandler: resume)
        }
      }
    } onCancel: {
      resume(.failure(CancellationError()))
    }
  }

  static func isBridging<Authorizer: FetcherAuthorizer>(_ type: Authorizer.Type) -> Bool {
    bridgingType == ObjectIdentifier(type)
  }

  static func neitherImplemented<Authorizer: FetcherAuthorizer>(_ type: Authorizer.Type)
    -> SessionFetcherError
  {
    .authorizationFailed(
      description: "\(type) implements neither authorizeRequest(_:) async throws -> URLRequest nor "
        + "authorizeRequest(_:completionHandler:) with a @Sendable (Result<URLRequest, any Error>) -> Void "
        + "handler; implement one of them")
  }
}
