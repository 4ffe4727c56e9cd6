#if LIBCURL_ENGINE
  import CCurl
  import Foundation

  /// One libcurl easy handle with what it needs while it runs: its header list, error buffer, body
  /// source and the response head being read. A ``CurlTask`` has one at a time (a second one when it
  /// sends the request again with a credential).
  ///
  /// Confined to the engine's loop thread: made, run and closed there only.
  final class CurlTransfer {
    /// A request sent again to answer an authentication challenge.
    struct Credential {
      var user: String
      var password: String
      var isProxy: Bool
    }

    let easy: UnsafeMutableRawPointer
    /// Where the handle goes back when the transfer is closed.
    private let pool: CurlEasyPool
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    let body: CurlBodySource?
    /// The response heads being read from the header callback.
    var headParser = CurlResponseHeadParser()
    /// Whether the final head was handed over (later header lines are trailers).
    var deliveredFinalHead = false
    /// Whether the final head declared a content coding (libcurl decodes the body).
    var bodyIsEncoded = false
    /// Set when the header callback refused the head (framing that cannot be used): the transfer's
    /// error.
    var refusedHead: URLError?
    /// The final head was a challenge answered with a credential: its body is dropped and the
    /// request sent again once this transfer ends.
    var resend: Credential?
    /// Bytes sent as last reported to the handler.
    var reportedBytesSent: Int64 = 0
    /// Whether `curl_easy_pause` paused receiving (or the write callback asked libcurl to).
    var isPaused = false
    /// Whether sending is paused because the body stream had no bytes yet (the read callback
    /// returned `CURL_READFUNC_PAUSE`).
    var isSendPaused = false
    /// The `curl_easy_pause` bits for the current pause flags.
    var pauseBits: Int32 {
      (isPaused ? Int32(CCURLPAUSE_RECV) : 0) | (isSendPaused ? Int32(CCURLPAUSE_SEND) : 0)
    }
    /// Body bytes taken from libcurl and not yet handed to the handler (see
    /// `CurlTask.receiveBody`): over TLS each write callback brings one record (16 KiB at most), and
    /// the bytes of records that arrive back to back go to the handler together.
    var keptBody = Data()
    /// Whether the write callback kept bytes since the loop last looked (see `CurlLoop`).
    var keptBodyThisPass = false
    /// Whether the loop's list of transfers with kept bytes holds this one.
    var isListedAsKeeping = false
    /// libcurl's result, for a transfer that ended while its last bytes wait for the task to be
    /// resumed: the task completes once they are delivered.
    var endedWithCode: Int32?
    /// The trust bundle file this transfer uses (`CurlTrustStore`), given back when it closes.
    private var trustFile: String?
    private var isClosed = false
    /// What the handle keeps set for the next transfer when this one is over; nil when the handle
    /// must be reset (see ``CurlEasyPool``).
    private var keptSetup: CurlKeptSetup?

    /// Takes an easy handle from `pool` and sets it up for `request`.
    ///
    /// - Parameter userdata: the retained task pointer given to every callback and to
    ///   `CURLOPT_PRIVATE` (see ``CurlLoop``'s ownership rule).
    init(
      request: URLRequest, body: CurlBodySource?, options: CurlEngineOptions, credential: Credential?,
      tls: TLSSettings = TLSSettings(), route: TransportRoute = TransportRoute(),
      pool: CurlEasyPool, userdata: UnsafeMutableRawPointer
    ) throws(URLError) {
      guard let url = request.url, let scheme = url.scheme?.lowercased(),
        scheme == "http" || scheme == "https"
      else {
        body?.close()
        throw URLError(
          .unsupportedURL, userInfo: request.url.map { [NSURLErrorFailingURLErrorKey: $0] } ?? [:])
      }
      // libcurl writes the method and each header line as given: a request that breaks the rule
      // every engine shares (a CR or LF, a `:` in a name) would put other headers or another
      // request on the wire. The fetcher refuses such requests before they reach an engine.
      if let problem = RequestValidation.problem(in: request) {
        body?.close()
        throw URLError(
          .badURL, userInfo: [NSLocalizedDescriptionKey: problem, NSURLErrorFailingURLErrorKey: url])
      }
      guard let (easy, kept) = pool.take() else {
        body?.close()
        throw URLError(.cannotLoadFromNetwork)
      }
      self.easy = easy
      self.pool = pool
      self.body = body
      errorBuffer = .allocate(capacity: Int(CCURL_ERROR_SIZE) + 1)
      errorBuffer.initialize(repeating: 0, count: Int(CCURL_ERROR_SIZE) + 1)

      setString(CCURLOPT_URL, url.absoluteString)
      ccurl_easy_setopt_ptr(easy, CCURLOPT_ERRORBUFFER, errorBuffer)
      ccurl_easy_setopt_ptr(easy, CCURLOPT_PRIVATE, userdata)
      if kept == nil {
        // What every transfer sets the same way: a kept handle has it already.
        ccurl_easy_setopt_long(easy, CCURLOPT_NOSIGNAL, 1)
        ccurl_easy_setopt_long(easy, CCURLOPT_FOLLOWLOCATION, 0)
        ccurl_easy_setopt_long(easy, CCURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        ccurl_easy_setopt_long(easy, CCURLOPT_TCP_NODELAY, 1)
        ccurl_easy_setopt_long(easy, CCURLOPT_BUFFERSIZE, Self.receiveBufferSize)
        ccurl_easy_setopt_long(easy, CCURLOPT_UPLOAD_BUFFERSIZE, Self.sendBufferSize)
        ccurl_easy_setopt_write_function(easy, CCURLOPT_HEADERFUNCTION, curlHeaderCallback)
        ccurl_easy_setopt_write_function(easy, CCURLOPT_WRITEFUNCTION, curlWriteCallback)
        ccurl_easy_setopt_read_function(easy, CCURLOPT_READFUNCTION, curlReadCallback)
        ccurl_easy_setopt_seek_function(easy, CCURLOPT_SEEKFUNCTION, curlSeekCallback)
        ccurl_easy_setopt_xferinfo_function(easy, CCURLOPT_XFERINFOFUNCTION, curlProgressCallback)
        ccurl_easy_setopt_long(easy, CCURLOPT_NOPROGRESS, 0)
      }
      ccurl_easy_setopt_ptr(easy, CCURLOPT_HEADERDATA, userdata)
      ccurl_easy_setopt_ptr(easy, CCURLOPT_WRITEDATA, userdata)
      ccurl_easy_setopt_ptr(easy, CCURLOPT_READDATA, userdata)
      ccurl_easy_setopt_ptr(easy, CCURLOPT_SEEKDATA, userdata)
      ccurl_easy_setopt_ptr(easy, CCURLOPT_XFERINFODATA, userdata)
      // Whether the handle may be kept as it is for the next transfer: no option past a plain
      // exchange's was set (see `CurlEasyPool`).
      var plain = true
      let offersHTTP2 = HTTP2Offer.offers(setting: tls.offersHTTP2, libcurlVersion: ccurl_version_number())
      let httpVersion = Int(offersHTTP2 ? CCURL_HTTP_VERSION_2TLS : CCURL_HTTP_VERSION_1_1)
      if kept?.httpVersion != httpVersion { ccurl_easy_setopt_long(easy, CCURLOPT_HTTP_VERSION, httpVersion) }
      // Wait for a connection being made rather than open another, in case it multiplexes (HTTP/2
      // by ALPN). Never for plain http: libcurl would wait there too (HTTP_VERSION 2TLS counts as
      // wanting HTTP/2), serializing requests that 16 HTTP/1.1 connections would run at once.
      let pipeWait = scheme == "https" && offersHTTP2
      if pipeWait != (kept?.pipeWait ?? false) {
        ccurl_easy_setopt_long(easy, CCURLOPT_PIPEWAIT, pipeWait ? 1 : 0)
      }
      if let proxy = route.proxy {
        plain = false
        applyProxy(proxy, tunnels: scheme == "https")
      } else if let proxy = options.proxyURL(forScheme: scheme) {
        plain = false
        setString(CCURLOPT_PROXY, proxy)
      }
      if let path = route.unixSocketPath {
        plain = false
        setString(CCURLOPT_UNIX_SOCKET_PATH, path)
      }

      // As given, like the URLSession engine: methods are case-sensitive (RFC 9110 §9.1), and
      // `URLRequest` already spells the standard ones (GET, HEAD, POST…) in capitals.
      let method = request.httpMethod ?? "GET"
      if body != nil || method != "GET" { plain = false }
      if let body {
        // POST mode for every method with a body: libcurl then reads it from the read callback, with
        // a Content-Length when the size is known, chunked (HTTP/1.1) when it is -1.
        ccurl_easy_setopt_long(easy, CCURLOPT_POST, 1)
        ccurl_easy_setopt_off(easy, CCURLOPT_POSTFIELDSIZE_LARGE, body.length ?? -1)
        if method != "POST" { setString(CCURLOPT_CUSTOMREQUEST, method) }
      } else if method == "GET" {
        ccurl_easy_setopt_long(easy, CCURLOPT_HTTPGET, 1)
      } else if method == "HEAD" {
        ccurl_easy_setopt_long(easy, CCURLOPT_NOBODY, 1)
      } else {
        setString(CCURLOPT_CUSTOMREQUEST, method)
      }

      var acceptEncoding = ""
      let headers = RequestHeaderFields(request)
      for (name, value) in headers.all {
        if name.equalsIgnoringASCIICase("Accept-Encoding") {
          acceptEncoding = value
          continue
        }
        if credential?.isProxy == false, name.equalsIgnoringASCIICase("Authorization") { continue }
        // "Name;" is how libcurl sends a header with an empty value ("Name:" would remove it).
        appendHeader(value.isEmpty ? "\(name);" : "\(name): \(value)")
      }
      if headers.value("User-Agent") == nil {
        // libcurl sends none of its own; a server sees the one FoundationNetworking sends, whichever
        // engine (RFC 9110 §10.1.5: a user agent should send one).
        appendHeader("User-Agent: \(Self.defaultUserAgent)")
      }
      // An empty Expect removes libcurl's `Expect: 100-continue` (a round trip per upload), unless
      // the request asks for one itself.
      if headers.value("Expect") == nil { appendHeader("Expect:") }
      if body != nil, headers.value("Content-Type") == nil {
        // POST mode would add `Content-Type: application/x-www-form-urlencoded`: a body the caller
        // gave no type goes without one (RFC 9110 §8.3 lets the recipient sniff or treat it as
        // bytes), as curl sends an upload.
        appendHeader("Content-Type:")
      }
      if body == nil, ["POST", "PUT", "PATCH"].contains(method),
        headers.value("Content-Length") == nil
      {
        // A method that defines a body, sent without one: the length says so (RFC 9110 §8.6);
        // servers answer 411 Length Required to a POST without it.
        appendHeader("Content-Length: 0")
      }
      if headers.value("Connection")?.split(separator: ",").contains(where: {
        $0.trimmingCharacters(in: .whitespaces).equalsIgnoringASCIICase("close")
      }) == true {
        // The caller asked that this connection end with the exchange (RFC 9112 §9.6): it is not
        // kept for the next request.
        plain = false
        ccurl_easy_setopt_long(easy, CCURLOPT_FORBID_REUSE, 1)
      }
      if let credential {
        plain = false
        if credential.isProxy {
          setString(CCURLOPT_PROXYUSERNAME, credential.user)
          setString(CCURLOPT_PROXYPASSWORD, credential.password)
          ccurl_easy_setopt_long(easy, CCURLOPT_PROXYAUTH, Int(CCURLAUTH_BASIC))
          if url.scheme?.lowercased() == "https" { forbidReuseOfAuthenticatedConnection() }
        } else {
          let token = Data("\(credential.user):\(credential.password)".utf8).base64EncodedString()
          appendHeader("Authorization: Basic \(token)")
        }
      }
      ccurl_easy_setopt_slist(easy, CCURLOPT_HTTPHEADER, headerList)
      if !tls.isDefault {
        plain = false
        do {
          try applyTLS(tls)
        } catch {
          close()
          throw error
        }
      }
      // "" asks for every encoding the loaded libcurl can decode; a request's own value is kept.
      if kept?.acceptEncoding != acceptEncoding { setString(CCURLOPT_ACCEPT_ENCODING, acceptEncoding) }
      if plain {
        keptSetup = CurlKeptSetup(
          httpVersion: httpVersion, pipeWait: pipeWait, acceptEncoding: acceptEncoding)
      }
    }

    /// The `User-Agent` of a request that has none: the form FoundationNetworking sends
    /// (`<process> (unknown version) curl/<version>`).
    static let defaultUserAgent =
      "\(ProcessInfo.processInfo.processName) (unknown version) curl/\(CurlLibrary.version ?? "unknown")"

    /// 128 KiB: fewer callbacks for large bodies, and the bound on what one write callback brings.
    static let receiveBufferSize = 128 * 1024
    /// The most body bytes handed to the handler at once when the write callback brings less at a
    /// time (TLS records): the receive buffer's size, so that a chunk is never larger than before.
    static let deliveryChunkSize = receiveBufferSize

    /// 512 KiB (libcurl's largest upload buffer): fewer read callbacks and writes for uploads.
    static let sendBufferSize = 512 * 1024

    /// The text for a failure: libcurl's error buffer, else its text for `code`.
    func errorMessage(code: Int32) -> String {
      let message = String(cString: errorBuffer)
      return message.isEmpty ? CurlLibrary.describe(code: code) : message
    }

    /// Gives the easy handle (already removed from the multi handle) back to its pool, frees its
    /// header list and buffer, and closes the body. Idempotent.
    func close() {
      guard !isClosed else { return }
      isClosed = true
      pool.give(easy, keeping: keptSetup)
      if let headerList { ccurl_slist_free_all(headerList) }
      headerList = nil
      errorBuffer.deallocate()
      body?.close()
      if let trustFile { CurlTrustStore.release(trustFile) }
      trustFile = nil
    }

    /// Sets `tls` on the handle (the fetcher checked its files when the fetch began).
    ///
    /// Trust: libcurl takes one CA file, so the roots go in as one PEM file (`CurlTrustStore`) —
    /// the system's bundle (libcurl's own default file) followed by
    /// ``TLSSettings/additionalTrustRoots`` — with no CA folder, so that libcurl builds one
    /// certificate store for all connections; in memory (a blob) only when no file can be written.
    private func applyTLS(_ tls: TLSSettings) throws(URLError) {
      if !tls.additionalTrustRoots.isEmpty || !tls.trustsSystemRoots {
        let bundle = CurlTrustStore.bundleFile(for: tls, easy: easy)
        trustFile = bundle.path
        let code: Int32
        if let path = bundle.path {
          code = path.withCString {
            ccurl_easy_setopt_ptr(easy, CCURLOPT_CAINFO, UnsafeMutableRawPointer(mutating: $0))
          }
          // The file holds the system's roots when they are trusted; without a CA folder as well,
          // libcurl keeps one certificate store for all connections (its CA cache).
          ccurl_easy_setopt_ptr(easy, CCURLOPT_CAPATH, nil)
        } else {
          code = bundle.pem.withUnsafeBytes {
            ccurl_easy_setopt_blob(easy, CCURLOPT_CAINFO_BLOB, $0.baseAddress, $0.count)
          }
        }
        guard code == CCURLE_OK else {
          throw URLError(
            .secureConnectionFailed,
            userInfo: [
              NSLocalizedDescriptionKey:
                "this libcurl cannot take trust roots in memory (CURLOPT_CAINFO_BLOB needs 7.77.0 or later)"
            ])
        }
        if !tls.trustsSystemRoots { ccurl_easy_setopt_ptr(easy, CCURLOPT_CAPATH, nil) }
      } else if CurlTrustStore.defaultCAFile(of: easy) != nil {
        // The system's roots as libcurl's default CA file holds them, without the CA folder beside
        // it (the same certificates on Debian and Fedora), so that libcurl's CA cache applies.
        ccurl_easy_setopt_ptr(easy, CCURLOPT_CAPATH, nil)
      }
      if let certificate = tls.clientCertificate {
        setString(CCURLOPT_SSLCERT, certificate.path)
        setString(CCURLOPT_SSLKEY, (tls.clientKey ?? certificate).path)
        if let password = tls.clientKeyPassword { setString(CCURLOPT_KEYPASSWD, password) }
      }
      if !tls.pinnedPublicKeys.isEmpty {
        setString(CCURLOPT_PINNEDPUBLICKEY, tls.pinnedPublicKeys.joined(separator: ";"))
      }
      let version = tls.minimumVersion == .tls13 ? CCURL_SSLVERSION_TLSv1_3 : CCURL_SSLVERSION_TLSv1_2
      ccurl_easy_setopt_long(easy, CCURLOPT_SSLVERSION, Int(version))
    }

    /// Sets `proxy` in place of the environment's: the URL without its credential (libcurl reads the
    /// kind of proxy from its scheme), the bypass list (empty: none, not the environment's), and the
    /// credential, sent with Basic (or SOCKS5 username/password) from the first request.
    ///
    /// - Parameter tunnels: whether the request goes through an HTTP proxy by CONNECT (https).
    private func applyProxy(_ proxy: ProxySettings, tunnels: Bool) {
      // "" turns the environment's proxy off.
      setString(CCURLOPT_PROXY, proxy.url == nil ? "" : proxy.redactedURLString ?? "")
      setString(CCURLOPT_NOPROXY, proxy.bypassHosts.joined(separator: ","))
      if let login = proxy.userAndPassword {
        setString(CCURLOPT_PROXYUSERNAME, login.user)
        setString(CCURLOPT_PROXYPASSWORD, login.password)
        ccurl_easy_setopt_long(easy, CCURLOPT_PROXYAUTH, Int(CCURLAUTH_BASIC))
        if tunnels { forbidReuseOfAuthenticatedConnection() }
      }
    }

    /// Closes the connection when the transfer ends, for a CONNECT tunnel the proxy admitted by a
    /// login: libcurl (7.88) matches a pooled tunnel by the proxy's host and port, not its login, so
    /// a later fetch with another login, a wrong one or none would go through it unchallenged. Plain
    /// http through an HTTP proxy needs no such care (the proxy checks the login of every request),
    /// nor SOCKS5 (libcurl matches its login).
    private func forbidReuseOfAuthenticatedConnection() {
      ccurl_easy_setopt_long(easy, CCURLOPT_FORBID_REUSE, 1)
    }

    /// Whether the transfer's connection spoke HTTP/2 (negotiated by ALPN), read when it has ended.
    var spokeHTTP2: Bool {
      var version = 0
      ccurl_easy_getinfo_long(easy, CCURLINFO_HTTP_VERSION, &version)
      return version == Int(CCURL_HTTP_VERSION_2_0)
    }

    /// The status of the proxy's answer to CONNECT, or 0 when no CONNECT was answered.
    var connectStatus: Int {
      var status = 0
      ccurl_easy_getinfo_long(easy, CCURLINFO_HTTP_CONNECTCODE, &status)
      return status
    }

    private func setString(_ option: Int32, _ value: String) {
      _ = value.withCString { ccurl_easy_setopt_ptr(easy, option, UnsafeMutableRawPointer(mutating: $0)) }
    }

    /// Appends one header line; its name and value passed ``RequestValidation`` in `init`.
    private func appendHeader(_ line: String) {
      if let list = line.withCString({ ccurl_slist_append(headerList, $0) }) { headerList = list }
    }
  }
#endif
