import Foundation

extension SessionFetcher {
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
  public var retryCount: Int { storage.withLock { $0.lifecycle.begunRun?.timing.retryCount ?? 0 } }

  /// The delay the next retry would wait.
  public var nextRetryInterval: TimeInterval {
    storage.withLock { $0.lifecycle.begunRun?.backoff?.nextInterval ?? $0.config.effectiveMinRetryInterval }
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
}
