import Foundation

/// Changes or vetoes every request of a fetcher service before it is sent, and sees each fetch end
/// (the original library's `GTMFetcherDecoratorProtocol`).
///
/// Add one to a service with `FetcherService.addDecorator(_:)`: it then runs for every fetcher
/// the service makes, in the order the decorators were added. Both methods have defaults (the
/// request unchanged; nothing), so a decorator implements only what it needs.
///
/// ```swift
/// final class TraceDecorator: FetcherDecorator {
///   func fetcherWillStart(_ fetcher: SessionFetcher, request: URLRequest) async throws -> URLRequest {
///     var request = request
///     request.setValue(UUID().uuidString, forHTTPHeaderField: "X-Trace-Id")
///     return request
///   }
/// }
/// service.addDecorator(TraceDecorator())
/// ```
///
/// **When.** ``fetcherWillStart(_:request:)`` runs before each attempt is sent (the first, every
/// retry, every resend after an authorization refresh), after the service's throttling let the
/// fetch start and before the fetcher's ``SessionFetcher/authorizer``. The request it returns is
/// checked as the caller's own is: a scheme that is not allowed fails the fetch with
/// ``SessionFetcherError/insecureRequest(_:)``, a header with a control character with
/// ``SessionFetcherError/invalidConfiguration(_:)``, nothing sent. Throwing fails the fetch with
/// that error, unchanged, before any byte is sent and without a retry.
/// ``fetcherDidFinish(_:data:error:)`` runs once per fetch that began, after it ended (stopped
/// ones too, with ``SessionFetcherError/cancelled``) and before its completion handler.
///
/// **Threading.** Both run in a task of their own, never on the fetcher's
/// ``SessionFetcher/callbackQueue``, and may run concurrently for different fetchers. A slow
/// decorator delays only its own fetch (which keeps its throttling slot meanwhile).
/// ``SessionFetcher/stopFetching()`` while one runs ends the fetch at once, cancels the task the
/// decorator runs in, and sends nothing, whatever the decorator returns later.
public protocol FetcherDecorator: AnyObject, Sendable {
  /// Before each attempt is sent (the first, every retry, every resend after an auth refresh),
  /// after throttling and before the authorizer: returns the request to send.
  ///
  /// - Parameters:
  ///   - fetcher: The fetcher about to send.
  ///   - request: The request as the previous decorator left it.
  /// - Returns: The request to send (or to give the next decorator).
  /// - Throws: Any error, which ends the fetch with that error, unchanged.
  func fetcherWillStart(_ fetcher: SessionFetcher, request: URLRequest) async throws -> URLRequest

  /// Once per fetch, after it ends and before its completion handler runs.
  ///
  /// - Parameters:
  ///   - fetcher: The fetcher that ended.
  ///   - data: The body the completion handler receives, if any.
  ///   - error: The error it receives; nil on success.
  func fetcherDidFinish(_ fetcher: SessionFetcher, data: Data?, error: (any Error)?) async
}

extension FetcherDecorator {
  /// Returns `request` unchanged.
  public func fetcherWillStart(_ fetcher: SessionFetcher, request: URLRequest) async throws -> URLRequest {
    request
  }

  /// Does nothing.
  public func fetcherDidFinish(_ fetcher: SessionFetcher, data: Data?, error: (any Error)?) async {}
}

/// Gives the `User-Agent` of a fetch, possibly slowly (the original library's
/// `GTMUserAgentProvider`).
///
/// Set one on a fetcher (``SessionFetcher/userAgentProvider``) or on a service
/// (`FetcherService.userAgentProvider`). A fetch asks it at most once, before its first attempt
/// (retries reuse the answer), and only when the request has no `User-Agent` of its own. It is
/// never called on the fetcher's ``SessionFetcher/callbackQueue``; stopping the fetch while it runs
/// ends the fetch at once.
///
/// ```swift
/// struct AppUserAgent: UserAgentProvider {
///   func userAgent() async -> String {
///     "MyApp/\(await Settings.shared.version) \(FetcherService.standardUserAgent)"
///   }
/// }
/// fetcher.userAgentProvider = AppUserAgent()
/// ```
public protocol UserAgentProvider: Sendable {
  /// The `User-Agent` value. May be slow; never called on the callback queue. A value with a
  /// control character fails the fetch with ``SessionFetcherError/invalidConfiguration(_:)``,
  /// nothing sent.
  func userAgent() async -> String
}

/// What can make fetchers: `FetcherService`, or a test double standing in for it (the original
/// library's `GTMSessionFetcherServiceProtocol`).
///
/// A fetcher made by a service names it in ``SessionFetcher/service``, so that a callback can make
/// follow-up fetchers that share the service's settings, session and throttling.
public protocol FetcherServiceProtocol: AnyObject, Sendable {
  /// A fetcher for `request`, carrying the service's defaults.
  func fetcher(request: URLRequest) -> SessionFetcher
  /// A fetcher for a GET of `url`, carrying the service's defaults.
  func fetcher(url: URL) -> SessionFetcher
  /// A fetcher for a GET of `urlString`, carrying the service's defaults; an invalid string still
  /// gives a fetcher, whose fetch fails with ``SessionFetcherError/invalidURL(_:)``.
  func fetcher(urlString: String) -> SessionFetcher
  /// Stops every fetcher of the service.
  func stopAllFetchers()
}

/// A weak reference to a service, as a fetcher keeps it.
package struct WeakFetcherService: @unchecked Sendable {
  // `@unchecked Sendable`: a weak reference to a `Sendable` object, read and written only inside
  // the fetcher's locked configuration.
  package weak var value: (any FetcherServiceProtocol)?

  package init(_ value: (any FetcherServiceProtocol)?) {
    self.value = value
  }
}

extension SessionFetcher {
  /// Gives the `User-Agent` of this fetch when its request has none; wins over the service's
  /// (`FetcherService.userAgentProvider`), which wins over the service's `userAgent` string. Set it
  /// before the fetch begins. See ``UserAgentProvider``.
  public var userAgentProvider: (any UserAgentProvider)? {
    get { self[config: \.userAgentProvider] }
    set { self[config: \.userAgentProvider] = newValue }
  }

  /// The service that made this fetcher (weak: nil once the service is gone, and for a standalone
  /// fetcher). Settable, for example to a test double.
  public var service: (any FetcherServiceProtocol)? {
    get { self[config: \.service].value }
    set { self[config: \.service] = WeakFetcherService(newValue) }
  }

  /// The key the service throttles this fetcher under, in place of the URL's host: fetchers with the
  /// same `serviceHost` share one `FetcherService.maxRunningFetchersPerHost` limit, whatever their
  /// hosts (a host-less `data:` URL included). nil (the default): the URL's lowercased host. Set it
  /// before the fetch begins.
  public var serviceHost: String? {
    get { self[config: \.serviceHost] }
    set { self[config: \.serviceHost] = newValue }
  }

  /// The `User-Agent` the service put on the request when it made the fetcher
  /// (`FetcherService.fetcher(url:)`): not the request's own, so a ``userAgentProvider`` replaces it.
  package var presetUserAgent: String? {
    get { self[config: \.presetUserAgent] }
    set { self[config: \.presetUserAgent] = newValue }
  }
}

extension FetcherServiceHooks {
  /// No decorators, for hooks that have none.
  package var decorators: [any FetcherDecorator] { [] }
  /// No provider, for hooks that have none.
  package var userAgentProvider: (any UserAgentProvider)? { nil }
}
