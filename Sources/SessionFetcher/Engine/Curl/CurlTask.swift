#if LIBCURL_ENGINE
  import CCurl
  import Foundation

  /// One HTTP exchange on a ``CurlEngine``: a request, its response head and body, reported to a
  /// ``SessionTaskHandler``.
  ///
  /// Made by ``CurlEngine/makeTask(request:body:tls:route:handler:)``, started by ``resume()``. ``resume()``,
  /// ``suspend()`` and ``cancel()`` may be called from any thread, any number of times, including from
  /// inside a handler callback; they only change the task's state and queue a command for the
  /// engine's loop thread. The handler is called on that loop thread, serially, with
  /// `didCompleteWithError` exactly once and last (from the calling thread only when the engine's
  /// loop is already gone).
  ///
  /// `@unchecked Sendable`: `state` is behind its `Locked` wrapper; every other stored `var` is
  /// confined to the engine's loop thread (touched only in loop commands and libcurl callbacks).
  package final class CurlTask: EngineTask, @unchecked Sendable {
    /// The request as made (a resend to answer a challenge adds only its credential).
    package let originalRequest: URLRequest
    private let loop: CurlLoop
    private let state: Locked<CurlTaskState>

    // Loop thread only.
    private let body: EngineBody
    /// The TLS settings of every transfer of the task.
    private let tls: TLSSettings
    /// The proxy and Unix socket of every transfer of the task.
    private let route: TransportRoute
    /// The transfer on libcurl, while one runs.
    var transfer: CurlTransfer?
    /// How many times the request was sent again with a credential.
    private var challengeResends = 0
    /// Where the loop holds the task.
    var hold = CurlLoop.Hold.none
    /// The origin whose connection limit the task counts against: scheme, host and port of its URL,
    /// and its route.
    private(set) lazy var origin: HostQueue<CurlTask>.Origin = {
      let url = originalRequest.url
      let scheme = url?.scheme?.lowercased() ?? ""
      let route: String? =
        if let socket = self.route.unixSocketPath {
          "unix " + socket
        } else if let proxy = self.route.proxy {
          "proxy " + (proxy.url?.absoluteString ?? "direct")
        } else {
          nil
        }
      return HostQueue.Origin(
        scheme: scheme, host: url?.host?.lowercased() ?? "",
        port: url?.port ?? (scheme == "https" ? 443 : 80),
        route: route)
    }()

    init(
      request: URLRequest, body: EngineBody, tls: TLSSettings = TLSSettings(),
      route: TransportRoute = TransportRoute(), handler: any SessionTaskHandler,
      loop: CurlLoop
    ) {
      originalRequest = request
      self.body = body
      self.tls = tls
      self.route = route
      self.loop = loop
      state = Locked(CurlTaskState(handler: handler))
    }

    // MARK: EngineTask

    package func resume() {
      switch state.withLock({ $0.resume() }) {
      case .none: break
      case .start: loop.send(.start(self))
      case .unpause: loop.send(.unpause(self))
      }
    }

    package func suspend() {
      if state.withLock({ $0.suspend() }) { loop.send(.pause(self)) }
    }

    package func cancel() {
      if state.withLock({ $0.cancel() }) { loop.send(.cancel(self)) }
    }

    /// ``cancel()``, which only queues a command for the engine's loop; libcurl never asks the task
    /// anything once it is cancelled.
    package func letGo() {
      cancel()
    }

    package var response: URLResponse? { state.withLock { $0.response }?.response }

    /// What libcurl measured of the exchange, for the fetcher's `timing`; set before the handler's
    /// `didCompleteWithError`, nil when no transfer ran.
    package var transferMetrics: TransferMetrics? { state.withLock { $0.metrics } }

    package var diagnosticSummary: String {
      state.withLock { state in
        "curl \(state.phase.rawValue)\(state.isCancelled ? " cancelled" : "")"
          + "\(state.isSuspended ? " suspended" : "") sent \(state.bytesSent), received \(state.bytesReceived), "
          + "response \(state.response?.statusCode ?? -1), "
          + "curl code \(state.curlCode.map(String.init) ?? "none")"
      }
    }

    // MARK: Loop thread

    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// The source of a stream body: `stream` for the first request, a fresh one from the handler
    /// for a resend after a challenge.
    private func makeStreamSource(_ stream: InputStream, exactLength: Int64?) throws(URLError)
      -> CurlBodySource
    {
      let onReadable: @Sendable () -> Void = { [weak self] in
        guard let self else { return }
        loop.send(.resumeSending(self))
      }
      if challengeResends == 0 {
        return CurlBodySource(stream: stream, exactLength: exactLength, onReadable: onReadable)
      } else if let fresh = state.withLock({ $0.handler })?.taskNeedsNewBodyStream(self) {
        return CurlBodySource(stream: fresh, exactLength: exactLength, onReadable: onReadable)
      } else {
        throw URLError(.requestBodyStreamExhausted)
      }
    }

    /// Makes the transfer of the first request (or of a resend with `credential`).
    func makeTransfer(
      options: CurlEngineOptions, credential: CurlTransfer.Credential?, pool: CurlEasyPool,
      userdata: UnsafeMutableRawPointer
    ) throws(URLError) -> CurlTransfer {
      let source: CurlBodySource?
      switch body {
      case .none:
        source = nil
      case .data(let data):
        source = CurlBodySource(data: data)
      case .file(let url):
        source = try CurlBodySource(fileURL: url)
      case .stream(let stream):
        source = try makeStreamSource(stream, exactLength: nil)
      case .sizedStream(let stream, let length):
        source = try makeStreamSource(stream, exactLength: length)
      }
      return try CurlTransfer(
        request: originalRequest, body: source, options: options, credential: credential, tls: tls,
        route: route, pool: pool, userdata: userdata)
    }

    /// Ends the task with `error` (the handler's last call), recording `curlCode` and `metrics` first.
    func complete(error: (any Error)?, curlCode: Int32?, metrics: TransferMetrics?) {
      let handler = state.withLock { $0.complete(curlCode: curlCode, metrics: metrics) }
      handler?.task(self, didCompleteWithError: error)
    }

    /// The error of a transfer libcurl ended with `code`.
    func error(curlCode code: Int32, transfer: CurlTransfer) -> (any Error)? {
      if isCancelled { return URLError(.cancelled, userInfo: failingURLInfo) }
      if let refused = transfer.refusedHead { return refused }
      if let failure = transfer.body?.failure { return failure }
      guard code != CCURLE_OK else { return nil }
      if code == CCURLE_SSL_CERTPROBLEM {
        // The client certificate or key cannot be used (a wrong password, a key that is not the
        // certificate's): found before the handshake, so before any request was sent.
        return SessionFetcherError.invalidTLSSettings(
          "clientCertificate, clientKey or clientKeyPassword cannot be used: \(transfer.errorMessage(code: code))"
        )
      }
      let connectStatus = transfer.connectStatus
      if connectStatus >= 300 {
        // The proxy refused the tunnel (a 407 its credential did not satisfy, a 403, a 502): its
        // status, as a proxy's refusal of a plain http request is reported.
        return SessionFetcherError.status(code: connectStatus, data: Data())
      }
      return CurlErrorMapping.urlError(
        code: code, curlMessage: transfer.errorMessage(code: code), url: originalRequest.url,
        bodyIsFile: transfer.body?.isFile ?? false, overHTTP2: transfer.spokeHTTP2,
        bodyIsEncoded: transfer.bodyIsEncoded)
    }

    var failingURLInfo: [String: Any] {
      guard let url = originalRequest.url else { return [:] }
      return [NSURLErrorFailingURLErrorKey: url, EngineErrorKeys.failingURLString: url.absoluteString]
    }

    /// The credential to send the request again with, taken once the challenged transfer ended.
    func takeResend() -> CurlTransfer.Credential? {
      guard let resend = transfer?.resend, !isCancelled else { return nil }
      challengeResends += 1
      return resend
    }

    // MARK: libcurl callbacks (loop thread, inside curl_multi_perform or curl_easy_pause)

    /// One header line. Returns `count` to go on, anything else to abort.
    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) -> Int {
      guard let transfer else { return 0 }
      guard !transfer.deliveredFinalHead, transfer.resend == nil else {
        return isCancelled ? 0 : bytes.count  // trailers
      }
      // Cancellation is looked at once a head is whole, not on every line: the loop removes a
      // cancelled task's transfer when the pass ends, and nothing is handed over before.
      guard let head = transfer.headParser.consume(bytes: bytes) else { return bytes.count }
      guard !isCancelled else { return 0 }
      // libcurl takes a 101 it did not ask for as the final head (the bytes after it become the
      // body): hand it over, and the fetcher refuses it (`ResponseSanity`).
      if head.isInterim && head.statusCode != 101 { return bytes.count }
      guard let url = originalRequest.url else { return 0 }
      if ResponseFraming.contentLengthsDisagree(head.values(named: "Content-Length")) {
        // libcurl would read the body by the first length (RFC 9112 §6.3: unusable framing).
        transfer.refusedHead = URLError(.badServerResponse, userInfo: failingURLInfo)
        return 0
      }
      // The `HTTPURLResponse` is made only when someone asks for it (a challenge, a redirect, the
      // fetcher's `response`): the fetcher's own decisions read the parsed head.
      let response = ResponseHead(parsed: head, url: url)
      let handler = state.withLock { $0.handler }
      guard let handler else { return 0 }
      if let challenge = CurlChallenge.make(
        head: head, response: response, url: url, previousFailureCount: challengeResends,
        proxy: route.proxy)
      {
        let (disposition, credential) = handler.task(self, didReceive: challenge.challenge)
        if disposition == .useCredential, let credential, let user = credential.user, challengeResends < 3 {
          transfer.resend = CurlTransfer.Credential(
            user: user, password: credential.password ?? "", isProxy: challenge.isProxy)
          return bytes.count
        }
        if isCancelled { return 0 }
      }
      if let target = head.redirectTarget(relativeTo: url), let http = response.httpResponse {
        var redirect = URLRequest(url: target)
        redirect.httpMethod = originalRequest.httpMethod
        _ = handler.task(self, willRedirect: http, to: redirect)
        if isCancelled { return 0 }
      }
      transfer.deliveredFinalHead = true
      transfer.bodyIsEncoded = ContentDecoding.isEncoded(response)
      loop.learned(httpVersion: head.httpVersion, from: self)
      state.withLock { $0.response = response }
      handler.task(self, didReceiveHead: response)
      return isCancelled ? 0 : bytes.count
    }

    /// Bytes of the body. Returns `count` when taken, `CCURL_WRITEFUNC_PAUSE` to have libcurl keep
    /// them until unpaused, anything else to abort.
    ///
    /// Bytes less than half of ``CurlTransfer/deliveryChunkSize`` are kept in the transfer and handed
    /// over together with those that follow at once (``deliverKeptBody()``, called by the loop before
    /// it waits, when the transfer ends, and when the kept bytes would pass the chunk size): over TLS
    /// each call brings one record, and every chunk the handler takes costs a `Data`, its lock and
    /// progress work, and a `write` when the body goes to a file.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
      guard let transfer else { return 0 }
      // A challenge answered with a credential: its body is not the response.
      if transfer.resend != nil { return bytes.count }
      let (isCancelled, isSuspended) = state.withLock { ($0.isCancelled, $0.isSuspended) }
      guard !isCancelled else { return 0 }
      if isSuspended {
        // Suspended since the last chunk (often from inside that chunk's callback): libcurl keeps
        // this one, undelivered, and stops reading until resumed.
        transfer.isPaused = true
        return Int(CCURL_WRITEFUNC_PAUSE)
      }
      if transfer.keptBody.count + bytes.count > CurlTransfer.deliveryChunkSize {
        switch deliverKeptBody() {
        case .cancelled: return 0
        case .suspended:
          transfer.isPaused = true
          return Int(CCURL_WRITEFUNC_PAUSE)
        case .delivered: break
        }
      }
      if transfer.keptBody.isEmpty && bytes.count >= CurlTransfer.deliveryChunkSize / 2 {
        // Large enough as it is (plain http reads up to the buffer's size at once).
        guard let handler = count(bytes.count) else { return 0 }
        handler.task(self, didReceive: Data(bytes))
        // Consumed even when the handler suspended meanwhile; cancelled is another matter.
        return self.isCancelled ? 0 : bytes.count
      }
      guard !bytes.isEmpty else { return 0 }
      // No capacity reserved ahead: the `Data` handed over keeps its block, and a few hundred bytes
      // of an event stream must not hold a block of the chunk size each while they wait.
      if !transfer.isListedAsKeeping {
        transfer.isListedAsKeeping = true
        loop.noteKeptBody(of: self)
      }
      // libcurl's `char` bytes, read as the bytes they are.
      transfer.keptBody.append(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), count: bytes.count)
      transfer.keptBodyThisPass = true
      return bytes.count
    }

    /// What ``deliverKeptBody()`` did.
    enum KeptBodyDelivery {
      /// Handed over (or there was nothing to hand).
      case delivered
      /// The task is suspended (the bytes wait for it to be resumed), or the handler suspended it
      /// while taking them: nothing more until it is resumed.
      case suspended
      /// Dropped: the task was cancelled.
      case cancelled
    }

    /// Hands the bytes ``receiveBody(_:)`` kept to the handler, unless the task is suspended (they
    /// wait for `resume`) or cancelled (dropped).
    @discardableResult
    func deliverKeptBody() -> KeptBodyDelivery {
      guard let transfer else { return .delivered }
      transfer.keptBodyThisPass = false
      guard !transfer.keptBody.isEmpty else { return .delivered }
      let status = state.withLock { state -> KeptBodyDelivery in
        state.isCancelled ? .cancelled : state.isSuspended ? .suspended : .delivered
      }
      switch status {
      case .suspended:
        return .suspended
      case .cancelled:
        transfer.keptBody = Data()
        return .cancelled
      case .delivered:
        let data = transfer.keptBody
        transfer.keptBody = Data()
        guard let handler = count(data.count) else { return .cancelled }
        handler.task(self, didReceive: data)
        // Suspended from inside the handler: nothing more until resumed.
        return state.withLock { state in
          state.isCancelled ? .cancelled : state.isSuspended ? .suspended : .delivered
        }
      }
    }

    /// Counts `byteCount` received bytes about to be handed over; the handler, or nil when the task
    /// was cancelled.
    private func count(_ byteCount: Int) -> (any SessionTaskHandler)? {
      state.withLock { state -> (any SessionTaskHandler)? in
        guard !state.isCancelled else { return nil }
        state.bytesReceived += Int64(byteCount)
        return state.handler
      }
    }

    /// Fills `buffer` with the next bytes of the request body.
    func readBody(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
      guard let transfer, !isCancelled else { return Int(CCURL_READFUNC_ABORT) }
      guard let body = transfer.body else { return 0 }
      switch body.read(into: buffer, capacity: capacity) {
      case .bytes(let count):
        return count
      case .wouldBlock:
        // libcurl pauses sending until the loop's `resumeSending`, when the stream has bytes.
        transfer.isSendPaused = true
        return Int(CCURL_READFUNC_PAUSE)
      case .failed:
        return Int(CCURL_READFUNC_ABORT)
      }
    }

    /// Rewinds the request body, for libcurl to send it again (a kept-alive connection that closed).
    func seekBody(offset: Int64, origin: Int32) -> Int32 {
      guard let body = transfer?.body, offset == 0, origin == SEEK_SET else {
        return Int32(CCURL_SEEKFUNC_CANTSEEK)
      }
      return body.rewind() ? Int32(CCURL_SEEKFUNC_OK) : Int32(CCURL_SEEKFUNC_CANTSEEK)
    }

    /// libcurl's progress: reports upload progress when the count of bytes sent changed. Returns
    /// nonzero to abort (the task was cancelled).
    func progress(bytesSent uploaded: Int64) -> Int32 {
      guard let transfer else { return 1 }
      // A chunked body's count includes the chunk framing: never report more than the body itself.
      let bytesSent = transfer.body?.length == nil ? min(uploaded, transfer.body?.bytesRead ?? 0) : uploaded
      guard bytesSent != transfer.reportedBytesSent else { return isCancelled ? 1 : 0 }
      let delta = bytesSent - transfer.reportedBytesSent
      transfer.reportedBytesSent = bytesSent
      let handler = state.withLock { state -> (any SessionTaskHandler)? in
        guard !state.isCancelled else { return nil }
        state.bytesSent += delta
        return state.handler
      }
      guard let handler else { return 1 }
      handler.task(
        self, didSendBodyData: delta, totalBytesSent: bytesSent,
        totalBytesExpectedToSend: transfer.body?.length ?? -1)
      return isCancelled ? 1 : 0
    }
  }

  // The C entry points: each recovers the task from the retained pointer given to libcurl (see
  // CurlLoop.attach) without taking ownership, on the loop thread.

  let curlHeaderCallback: ccurl_write_callback = { buffer, size, count, userdata in
    guard let buffer, let userdata else { return 0 }
    let task = Unmanaged<CurlTask>.fromOpaque(userdata).takeUnretainedValue()
    return task.receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: size * count))
  }

  let curlWriteCallback: ccurl_write_callback = { buffer, size, count, userdata in
    guard let buffer, let userdata else { return 0 }
    let task = Unmanaged<CurlTask>.fromOpaque(userdata).takeUnretainedValue()
    return task.receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
  }

  let curlReadCallback: ccurl_read_callback = { buffer, size, count, userdata in
    guard let buffer, let userdata else { return Int(CCURL_READFUNC_ABORT) }
    let task = Unmanaged<CurlTask>.fromOpaque(userdata).takeUnretainedValue()
    return task.readBody(into: buffer, capacity: size * count)
  }

  let curlSeekCallback: ccurl_seek_callback = { userdata, offset, origin in
    guard let userdata else { return Int32(CCURL_SEEKFUNC_FAIL) }
    let task = Unmanaged<CurlTask>.fromOpaque(userdata).takeUnretainedValue()
    return task.seekBody(offset: offset, origin: origin)
  }

  let curlProgressCallback: ccurl_xferinfo_callback = { userdata, _, _, _, uploaded in
    guard let userdata else { return 1 }
    let task = Unmanaged<CurlTask>.fromOpaque(userdata).takeUnretainedValue()
    return task.progress(bytesSent: uploaded)
  }
#endif
