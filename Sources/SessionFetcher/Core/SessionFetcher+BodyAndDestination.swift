import Foundation

extension SessionFetcher {
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
}
