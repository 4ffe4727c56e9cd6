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

  // MARK: - Body (at most one)

  /// The request body, sent with a Content-Length. A GET with a body is sent as POST.
  public var bodyData: Data? {
    get { self[config: \.bodyData] }
    set { self[config: \.bodyData] = newValue }
  }

  /// A file streamed from disk as the request body, with a Content-Length.
  ///
  /// See ``sendsBodyFileChunked`` for a faster way to send it on Linux when the server accepts
  /// chunked request bodies. On the URLSession engine on Linux a file of up to 16 MiB is read into
  /// memory and sent from there: FoundationNetworking's own file upload can crash the process when
  /// the upload is cut (see the Linux notes); a larger file still goes through it, so prefer the
  /// libcurl engine or ``sendsBodyFileChunked`` for large uploads over unreliable networks.
  public var bodyFileURL: URL? {
    get { self[config: \.bodyFileURL] }
    set { self[config: \.bodyFileURL] = newValue }
  }

  /// Whether ``bodyFileURL`` is sent with chunked transfer encoding, read from the file in large
  /// blocks, instead of with a Content-Length (default `false`).
  ///
  /// A Content-Length upload goes through `uploadTask(with:fromFile:)`, which FoundationNetworking on
  /// Linux feeds in small dispatch-I/O pieces, with a context switch for each. Sent chunked, the
  /// same file moves several times faster for a fraction of the CPU (the upload rows of the
  /// benchmark in `Benchmarks/`). The file is still read from
  /// disk as it is sent, never loaded whole; a retry or a 307/308 redirect reads it again from the
  /// start; send progress reports the file's size as the expected total (or ``bodyLength`` when
  /// set).
  ///
  /// Turn it on only for servers that accept chunked request bodies (nginx, Apache, most
  /// application servers do); some endpoints, object-store uploads among them, require a
  /// Content-Length and answer 411 Length Required. It was measured on Linux only.
  public var sendsBodyFileChunked: Bool {
    get { self[config: \.sendsBodyFileChunked] }
    set { self[config: \.sendsBodyFileChunked] = newValue }
  }

  /// Makes a fresh stream of the request body for every attempt and for every redirect that
  /// resends the body. The body is sent with chunked transfer encoding (never with a Content-Length
  /// as well: FoundationNetworking would frame it twice). A GET with a body is sent as POST.
  ///
  /// The stream's `read` must return promptly. On Linux the URLSession engine reads it on
  /// FoundationNetworking's work queue, which every URLSession of the process shares: a read that
  /// blocks holds up every fetch of the process on that engine (see <doc:LinuxNotes>). The libcurl
  /// engine reads it on a thread of its own.
  public var bodyStreamProvider: BodyStreamProvider? {
    get { self[config: \.bodyStreamProvider] }
    set {
      storage.withLock {
        $0.config.bodyStreamProvider = newValue
        $0.config.bodyStreamHasExactLength = false
      }
    }
  }

  /// The length of the ``bodyStreamProvider``'s stream, if known: used for send progress.
  public var bodyLength: Int64? {
    get { self[config: \.bodyLength] }
    set {
      storage.withLock {
        $0.config.bodyLength = newValue
        $0.config.bodyStreamHasExactLength = false
      }
    }
  }

  // MARK: - Download (at most one; default: in memory)

  /// Where a successful response body is saved. The file appears only when the fetch succeeds
  /// (written beside it and renamed into place); parent folders are created; an existing file is
  /// replaced; nothing partial is left behind on failure or stop. The completion's data is nil.
  public var destinationFileURL: URL? {
    get { self[config: \.destinationFileURL] }
    set { self[config: \.destinationFileURL] = newValue }
  }

  /// On Linux, the ``destinationFileURL`` body is asked for in Range windows of this many bytes
  /// (default 16 MiB; nil or 0 asks for it whole). Elsewhere nil, and ignored.
  ///
  /// FoundationNetworking cannot slow libcurl down: when the thread writing the file falls behind
  /// the socket (a busy machine, a slow disk), the chunks wait in memory, without bound (see
  /// "Where a download's memory goes" in `Benchmarks/README.md`). Windows bound what can wait to one window:
  /// the next is asked for only once the last one is written.
  ///
  /// The windows are hops of one attempt, like redirects: one Started/Stopped pair, one completion,
  /// and the fetcher's ``response`` is a 200 describing the whole resource. The first request asks
  /// for `bytes=0-(W-1)`; later ones add `If-Range` with the first response's strong ETag or
  /// Last-Modified date. A resource that changes in between makes the server answer that with a
  /// 200 and its whole new body, which replaces what was written (no more windows). A window whose
  /// `Content-Range` names another total length ends the fetch with
  /// ``SessionFetcherError/streamInterrupted(description:)``. A server that ignores ranges answers
  /// 200 and the body comes whole, as without windows; so does a content-coded or open-ended 206.
  /// Windows are not used for a request with a body or its own `Range`, for a resumed download
  /// (``resumeData``), for a retry, or with a ``testBlock``. Each window is one more request: 64
  /// for a GiB at the default.
  public var downloadWindowLength: Int64? {
    get { self[config: \.downloadWindowLength] }
    set { self[config: \.downloadWindowLength] = newValue }
  }

  /// What moves this fetcher's bytes when it has no service (a service's fetchers use
  /// `FetcherService`'s `engine`, read when the service makes its session). Read when the fetch
  /// begins. Default: ``FetcherEngine/default``. A fetch on an engine that is not available here
  /// fails at begin with ``SessionFetcherError/engineUnavailable(_:)``.
  public var engine: FetcherEngine {
    get { self[config: \.engine] }
    set { self[config: \.engine] = newValue }
  }

  /// How this fetch's TLS connections are verified and authenticated (see ``TLSSettings``); a
  /// service's fetchers get the service's `tlsSettings`. Read when the fetch begins, where its
  /// files are checked. Default: `TLSSettings()`, the platform's defaults. Settings other than the
  /// defaults need the libcurl engine on Linux: on the URLSession engine the fetch fails at begin
  /// with ``SessionFetcherError/unsupportedByEngine(_:)`` (after the files are checked, so that an
  /// unusable file is ``SessionFetcherError/invalidTLSSettings(_:)`` on every engine).
  public var tlsSettings: TLSSettings {
    get { self[config: \.tlsSettings] }
    set { self[config: \.tlsSettings] = newValue }
  }

  /// The proxy of this fetch, in place of the environment's (see ``ProxySettings``); a service's
  /// fetchers get the service's `proxySettings`. Read when the fetch begins. nil, the default:
  /// the environment's `http_proxy`, `https_proxy` and `no_proxy`. Any other value needs the
  /// libcurl engine: on the URLSession engine the fetch fails at begin with
  /// ``SessionFetcherError/unsupportedByEngine(_:)``; an unknown proxy scheme fails at begin with
  /// ``SessionFetcherError/invalidConfiguration(_:)``.
  public var proxySettings: ProxySettings? {
    get { self[config: \.proxySettings] }
    set { self[config: \.proxySettings] = newValue }
  }

  /// A Unix domain socket every connection of this fetch goes to (such as
  /// `/var/run/docker.sock`), instead of the URL's host and port; a service's fetchers get the
  /// service's `unixSocketPath`. The URL still gives the scheme, the path and the `Host` header, and
  /// a socket fetch counts as local for ``allowLocalhostRequest``. Read when the fetch begins.
  ///
  /// Needs the libcurl engine (``SessionFetcherError/unsupportedByEngine(_:)`` at begin on the
  /// URLSession engine). A path longer than the platform's socket addresses hold (107 bytes on
  /// Linux), or one naming a file that is not a socket, fails at begin with
  /// ``SessionFetcherError/invalidConfiguration(_:)``; a missing socket fails to connect
  /// (`URLError(.cannotConnectToHost)`, retried like any connection failure).
  ///
  /// ```swift
  /// let fetcher = SessionFetcher.fetcher(urlString: "http://localhost/v1.43/containers/json")
  /// fetcher.engine = .libcurl
  /// fetcher.unixSocketPath = "/var/run/docker.sock"
  /// fetcher.allowLocalhostRequest = true
  /// ```
  public var unixSocketPath: String? {
    get { self[config: \.unixSocketPath] }
    set { self[config: \.unixSocketPath] = newValue }
  }

  /// Receives a successful response body chunk by chunk instead of keeping it, and `nil` when a
  /// new response (a retry) restarts the body. The completion's data is nil.
  public var accumulateDataBlock: (@Sendable (Data?) -> Void)? {
    get { self[config: \.accumulateDataBlock] }
    set { self[config: \.accumulateDataBlock] = newValue }
  }

  // MARK: - Progress

  /// Upload progress: bytes sent now, in total, and expected in total (-1 when unknown).
  public var sendProgressBlock: (@Sendable (Int64, Int64, Int64) -> Void)? {
    get { self[config: \.sendProgressBlock] }
    set { self[config: \.sendProgressBlock] = newValue }
  }

  /// Response body progress: bytes received now and in total.
  public var receivedProgressBlock: (@Sendable (Int64, Int64) -> Void)? {
    get { self[config: \.receivedProgressBlock] }
    set { self[config: \.receivedProgressBlock] = newValue }
  }

  /// Download-to-file progress: bytes written now, in total, and expected (-1 when unknown).
  public var downloadProgressBlock: (@Sendable (Int64, Int64, Int64) -> Void)? {
    get { self[config: \.downloadProgressBlock] }
    set { self[config: \.downloadProgressBlock] = newValue }
  }

  // MARK: - Retry

  /// Whether failed attempts are retried (default false). Retried: 408, 429, 502, 503, 504 and
  /// transient transport errors; for POST and other non-idempotent methods only failures that prove
  /// the request was not processed (connection refused, 408, 429, 503). ``retryBlock`` decides
  /// otherwise.
  public var isRetryEnabled: Bool {
    get { self[config: \.isRetryEnabled] }
    set { self[config: \.isRetryEnabled] = newValue }
  }

  /// The most retries the fetch makes after its first attempt (default nil: as many as the
  /// backoff's window allows, see ``maxRetryInterval``). 0 means none. Only counts when
  /// ``isRetryEnabled`` is set; the retry window still ends retrying earlier. A negative value
  /// fails the fetch at begin with ``SessionFetcherError/invalidConfiguration(_:)``, before any
  /// request is sent.
  ///
  /// ```swift
  /// let fetcher = SessionFetcher.fetcher(urlString: "https://example.com/feed.json")
  /// fetcher.isRetryEnabled = true
  /// fetcher.maxRetryCount = 2  // at most three attempts in all
  /// ```
  public var maxRetryCount: Int? {
    get { self[config: \.maxRetryCount] }
    set { self[config: \.maxRetryCount] = newValue }
  }

  /// Decides whether to retry; called only while the backoff (and ``maxRetryCount``) allows
  /// another retry.
  public var retryBlock: RetryBlock? {
    get { self[config: \.retryBlock] }
    set { self[config: \.retryBlock] = newValue }
  }

  /// The first retry delay: a random 1–2 s unless set (values ≤ 0 restore the random default).
  public var minRetryInterval: TimeInterval {
    get { storage.withLock { $0.config.effectiveMinRetryInterval } }
    set { self[config: \.minRetryInterval] = FetcherConfiguration.retryInterval(newValue) }
  }

  /// The longest retry delay: 60 s for GET and HEAD, 600 s otherwise, unless set (values ≤ 0
  /// restore the default). Retrying ends when the next delay reaches it, or after three times it.
  public var maxRetryInterval: TimeInterval {
    get { storage.withLock { $0.config.effectiveMaxRetryInterval } }
    set { self[config: \.maxRetryInterval] = FetcherConfiguration.retryInterval(newValue) }
  }

  /// The factor between consecutive retry delays (default 2).
  public var retryFactor: Double {
    get { self[config: \.retryFactor] }
    set { self[config: \.retryFactor] = newValue > 0 ? newValue : 2 }
  }

  /// Retries done so far.
  public var retryCount: Int { storage.withLock { $0.timing.retryCount } }

  /// The delay the next retry would wait.
  public var nextRetryInterval: TimeInterval {
    storage.withLock { $0.backoff?.nextInterval ?? $0.config.effectiveMinRetryInterval }
  }

  // MARK: - Security

  /// Schemes allowed besides https (for example `["http"]`). Default: none.
  ///
  /// For the URLs the caller fetches: a redirect never leads to a scheme other than http or https,
  /// even one listed here (a server's `Location` does not switch the fetch to `ftp:` or `file:`).
  public var allowedInsecureSchemes: [String] {
    get { self[config: \.allowedInsecureSchemes] }
    set { self[config: \.allowedInsecureSchemes] = newValue }
  }

  /// Whether plain http to localhost, 127.0.0.1 and ::1 is allowed. Default false.
  ///
  /// Only http: another scheme (`ftp:`, `file:`) needs to be listed in ``allowedInsecureSchemes``
  /// even for localhost. Whatever is allowed, a redirect may only lead to http or https.
  public var allowLocalhostRequest: Bool {
    get { self[config: \.allowLocalhostRequest] }
    set { self[config: \.allowLocalhostRequest] = newValue }
  }

  /// Answers the server's authentication challenge (Basic, or Digest as RFC 7616 describes it:
  /// MD5, SHA-256, their `-sess` forms, `qop=auth`), once, and only for the request's own origin.
  /// Without it, or when the server rejects it, the fetch completes promptly with
  /// ``SessionFetcherError/status(code:data:)`` 401. The fetcher computes the answer itself, so it
  /// behaves the same on every engine; a ``challengeBlock`` takes precedence.
  public var credential: URLCredential? {
    get { self[config: \.credential] }
    set { self[config: \.credential] = newValue }
  }

  /// Answers a proxy's authentication challenge, once. On Linux, proxies come only from the
  /// `http_proxy`/`https_proxy`/`no_proxy` environment variables (process-wide), and proxy
  /// credentials are best given in the proxy URL (`http://user:pass@proxy:3128`).
  public var proxyCredential: URLCredential? {
    get { self[config: \.proxyCredential] }
    set { self[config: \.proxyCredential] = newValue }
  }

  /// Authorizes each attempt's request; see ``FetcherAuthorizer``.
  public var authorizer: (any FetcherAuthorizer)? {
    get { self[config: \.authorizer] }
    set { self[config: \.authorizer] = newValue }
  }

  /// Sees every redirect before it is followed and may change or refuse it (a refusal completes with
  /// the 3xx status error). Credentials were already removed for another origin.
  public var willRedirectBlock: WillRedirectBlock? {
    get { self[config: \.willRedirectBlock] }
    set { self[config: \.willRedirectBlock] = newValue }
  }

  /// The most redirects one attempt follows (default 20). One more completes the fetch with
  /// `URLError(.httpTooManyRedirects)`; 0 follows none, so that a 3xx completes with its
  /// ``SessionFetcherError/status(code:data:)`` error. The count followed is in
  /// ``FetchTiming/redirectCount``. The same on every engine: the fetcher follows redirects itself.
  ///
  /// A value below 0 fails the fetch when it begins with
  /// ``SessionFetcherError/invalidConfiguration(_:)``.
  public var maximumRedirects: Int {
    get { self[config: \.maximumRedirects] }
    set { self[config: \.maximumRedirects] = newValue }
  }

  /// The cookie jar: cookies for the request are added from it, cookies set by responses (redirects
  /// included) go into it. Default: ``SessionCookieStorage/shared``, shared by fetchers made outside
  /// a service; each service has its own.
  public var cookieStorage: SessionCookieStorage {
    get { self[config: \.cookieStorage] }
    set { self[config: \.cookieStorage] = newValue }
  }

  /// Whether the fetch sends and stores cookies (default true).
  public var shouldHandleCookies: Bool {
    get { self[config: \.shouldHandleCookies] }
    set { self[config: \.shouldHandleCookies] = newValue }
  }

  // MARK: - Timeouts and session

  /// A deadline for each attempt as a whole, enforced by the fetcher (URLSession's resource timeout
  /// is ignored on Linux). `nil` (the default) means none. The request's `timeoutInterval` is the
  /// idle timeout, also enforced by the fetcher, sub-second values included.
  public var resourceTimeoutInterval: TimeInterval? {
    get { self[config: \.resourceTimeoutInterval] }
    set { self[config: \.resourceTimeoutInterval] = newValue }
  }

  /// The most bytes of a response body the fetcher keeps in memory (default nil: no limit). A body
  /// that announces a longer `Content-Length`, or grows past the limit while it arrives, cancels
  /// the transfer and fails the fetch with ``SessionFetcherError/responseTooLarge(limit:)`` (not
  /// retried) instead of exhausting memory. Applies to every body held in memory: the default
  /// ``downloadedData``, error and redirect bodies (an error status body of a stream too); not to
  /// bodies streamed to ``destinationFileURL`` or ``accumulateDataBlock``, nor to the body of
  /// ``beginStreaming(highWaterMark:lowWaterMark:)``, whose bytes the consumer takes as they come
  /// (they are never counted against this limit, however long the stream): a stream's memory is
  /// bounded by its high-water mark, ``maximumLineLength`` and ``maximumEventLength``.
  public var maximumResponseBodyLength: Int64? {
    get { self[config: \.maximumResponseBodyLength] }
    set { self[config: \.maximumResponseBodyLength] = newValue.map { max(0, $0) } }
  }

  /// The default ``maximumLineLength``: 1 MiB.
  public static let defaultMaximumLineLength = 1_048_576

  /// The default ``maximumEventLength``: 16 MiB.
  public static let defaultMaximumEventLength = 16 * 1_048_576

  /// The longest line, in bytes without its line end, that a stream's ``FetcherStream/lines``
  /// gives (default 1 MiB). A longer line ends the lines with
  /// ``SessionFetcherError/responseTooLarge(limit:)`` as soon as its bytes pass the limit — an
  /// endless line from a broken or hostile server holds at most this much — and stops the fetch
  /// (the rest of the body is not read). Read when the stream is made; a value of 0 or less fails
  /// the fetch at begin with ``SessionFetcherError/invalidConfiguration(_:)``.
  public var maximumLineLength: Int {
    get { self[config: \.maximumLineLength] }
    set { self[config: \.maximumLineLength] = newValue }
  }

  /// The longest server-sent event that ``FetcherStream/events`` and ``events()`` give: the most
  /// bytes of one event's data (its `data:` values joined with LF), and of one line's value
  /// (default 16 MiB). Past it the events end with ``SessionFetcherError/responseTooLarge(limit:)``
  /// as soon as the bytes pass the limit — `data:` lines that never reach the blank line that ends
  /// an event hold at most this much — and the fetch stops (an ``EventSource`` does not
  /// reconnect). ``maximumLineLength`` does not apply to events. Read when the events are made; a
  /// value of 0 or less fails the fetch at begin with ``SessionFetcherError/invalidConfiguration(_:)``.
  public var maximumEventLength: Int {
    get { self[config: \.maximumEventLength] }
    set { self[config: \.maximumEventLength] = newValue }
  }

  /// A session configuration for this fetcher alone (it then gets its own URLSession, closed when
  /// the fetch ends). Default: the process-wide session shared by standalone fetchers.
  ///
  /// The library's sessions are ephemeral and, on Linux, open at most 4 connections per host
  /// (FoundationNetworking's default of 6 makes libcurl close and reopen connections under load;
  /// see <doc:LinuxNotes>). A configuration set here is used as it is, its
  /// `httpMaximumConnectionsPerHost` included; to change other settings and keep the library's
  /// defaults, set only ``configurationBlock``. The library always turns off the platform's URL
  /// cache and cookie handling (it keeps its own).
  public var configuration: URLSessionConfiguration? {
    get { self[config: \.sessionConfiguration] }
    set { self[config: \.sessionConfiguration] = newValue }
  }

  /// Adjusts the session configuration before this fetcher's own session is made: a copy of
  /// ``configuration``, or of the library's default configuration when that is nil. Setting it
  /// gives the fetcher a session of its own, closed when the fetch ends.
  public var configurationBlock: (@Sendable (URLSessionConfiguration) -> Void)? {
    get { self[config: \.configurationBlock] }
    set { self[config: \.configurationBlock] = newValue }
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
  public var downloadedData: Data? { storage.withLock { $0.downloadedData } }

  /// Bytes of the final response body received (in memory, to the file, or accumulated).
  public var downloadedLength: Int64 { storage.withLock { $0.lifecycle.exchange?.responseBodyLength ?? 0 } }

  /// When the fetch ran and how much it moved.
  public var timing: FetchTiming { storage.withLock { $0.reportedTiming } }

  /// The error the fetch ended with, once it ended (nil on success).
  public var error: (any Error)? { storage.withLock { $0.finalError } }

  /// A one-line account of where the fetch stands (lifecycle, task and its byte counts), for a test
  /// that gave up waiting to print.
  package var diagnosticSummary: String {
    let (state, task, timing, hasPlan) = storage.withLock { storage in
      let phase = storage.lifecycle.phase
      let task = phase == .running ? storage.lifecycle.current.task : nil
      return (phase, task, storage.timing, storage.plan != nil)
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
  package var fetchSession: (session: FetcherSession, owned: Bool)? {
    storage.withLock { $0.plan.map { ($0.session, $0.ownsSession) } }
  }

  /// The hooks of the service that made this fetcher.
  package var serviceHooks: (any FetcherServiceHooks)? {
    get { self[config: \.serviceHooks] }
    set { self[config: \.serviceHooks] = newValue }
  }

  /// Gives the URLSession wrapper for the next task (a service's shared one).
  package var sessionProvider: (@Sendable () -> FetcherSession)? {
    get { self[config: \.sessionProvider] }
    set { self[config: \.sessionProvider] = newValue }
  }

  /// Makes the engine sessions of a fetch with a configuration of its own (``sessionConfiguration``,
  /// ``configurationBlock``) in place of ``engine``'s: a test's scripted engine.
  package var engineSessions: FetcherSession.EngineSessionMaker? {
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
