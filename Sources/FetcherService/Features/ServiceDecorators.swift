import Foundation
import SessionFetcher

extension FetcherService: FetcherServiceProtocol {}

extension FetcherService {
  // MARK: - Decorators

  /// The decorators of the fetches that begin from now on, in the order they run (see
  /// `FetcherDecorator`).
  public var decorators: [any FetcherDecorator] {
    state.withLock { $0.decorators }
  }

  /// Adds `decorator` after the others: it runs for every fetcher this service made that begins
  /// from now on (a fetch already begun keeps the decorators it began with). The service keeps a
  /// strong reference to it until ``removeDecorator(_:)`` (the original library's service held its
  /// decorators weakly).
  ///
  /// ```swift
  /// service.addDecorator(TraceDecorator())
  /// let data = try await service.fetcher(url: feedURL).beginFetch()
  /// ```
  public func addDecorator(_ decorator: any FetcherDecorator) {
    state.withLock { $0.decorators.append(decorator) }
  }

  /// Removes `decorator` (compared by identity, every time it was added) from the fetches that begin
  /// from now on. Removing one that is not there does nothing.
  public func removeDecorator(_ decorator: any FetcherDecorator) {
    state.withLock { $0.decorators.removeAll { $0 === decorator } }
  }

  // MARK: - User agent provider

  /// Gives the `User-Agent` of the service's fetches whose request has none and whose fetcher has no
  /// `SessionFetcher.userAgentProvider` of its own; wins over ``userAgent``. Read when a fetch
  /// begins, so it applies to fetchers already made. See `UserAgentProvider`.
  public var userAgentProvider: (any UserAgentProvider)? {
    get { state.withLock { $0.userAgentProvider } }
    set { state.withLock { $0.userAgentProvider = newValue } }
  }

  // MARK: - Issued fetchers

  /// Every fetcher of the service that runs (a retry delay included) or waits for a slot, those
  /// without a host (`data:` URLs) too: running ones per host, then waiting ones in the order they
  /// will start, then host-less ones.
  public var issuedFetchers: [SessionFetcher] {
    state.withLock { state in
      var fetchers: [SessionFetcher] = []
      for host in state.throttle.running.keys.sorted() { fetchers += state.throttle.running[host] ?? [] }
      let waiting = state.throttle.waitingByHost
      for host in waiting.keys.sorted() { fetchers += waiting[host] ?? [] }
      return fetchers + state.unthrottled
    }
  }

  /// The ``issuedFetchers`` whose current request is for `url` (compared by absolute string).
  public func issuedFetchers(withRequestURL url: URL) -> [SessionFetcher] {
    // Outside the service's lock: a fetcher's request is read under the fetcher's.
    let target = url.absoluteString
    return issuedFetchers.filter { $0.request?.url?.absoluteString == target }
  }

  /// The throttling key of `fetcher`: its `SessionFetcher.serviceHost`, else the host of its URL
  /// (see `hostKey(for:)`).
  static func throttleKey(of fetcher: SessionFetcher) -> String? {
    fetcher.serviceHost ?? hostKey(for: fetcher.request?.url)
  }

  // MARK: - Testing

  /// A service whose fetchers never touch the network: each completes with `fakedData`,
  /// `fakedResponse` and `fakedError` (the original's
  /// `mockFetcherServiceWithFakedData:fakedResponse:fakedError:`).
  ///
  /// Without a response, one for `http://example.invalid` with status 500 when there is an error,
  /// else 200. A response with a status of 300 or more and no error completes with
  /// `SessionFetcherError.status(code:data:)`, as from a server.
  ///
  /// ```swift
  /// let notFound = HTTPURLResponse(
  ///   url: URL(string: "https://example.com/x")!, statusCode: 404, httpVersion: "HTTP/1.1",
  ///   headerFields: ["Content-Type": "application/json"])
  /// let service = FetcherService.mockFetcherService(
  ///   fakedData: Data("{}".utf8), fakedResponse: notFound, fakedError: nil)
  /// ```
  public static func mockFetcherService(
    fakedData: Data?, fakedResponse: HTTPURLResponse?, fakedError: (any Error)?
  ) -> FetcherService {
    let service = FetcherService()
    service.allowedInsecureSchemes = ["http"]
    let box = FakedResult(data: fakedData, response: fakedResponse, error: fakedError)
    service.testBlock = { _, respond in
      let response =
        box.response
        ?? HTTPURLResponse(
          url: URL(string: "http://example.invalid")!, statusCode: box.error == nil ? 200 : 500,
          httpVersion: "HTTP/1.1", headerFields: nil)
      respond(response, box.data, box.error)
    }
    return service
  }
}

/// A faked result captured by the mock service's test block.
struct FakedResult: @unchecked Sendable {
  // `@unchecked Sendable`: immutable after creation; the response and error are only handed on.
  let data: Data?
  let response: HTTPURLResponse?
  let error: (any Error)?
}
