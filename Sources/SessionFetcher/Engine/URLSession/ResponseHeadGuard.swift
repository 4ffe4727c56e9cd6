#if FOUNDATION_NETWORKING
  import CCurl
  import Foundation

  /// Keeps responses FoundationNetworking cannot survive (or cannot tell from whole ones) from
  /// reaching it, through the libcurl handle of each task, set before the task's transfer starts.
  ///
  /// FoundationNetworking (swift-corelibs-foundation 6.3) ends the process on two kinds of response:
  ///
  /// - **Trailer fields** (`0\r\nX-Trailer: yes\r\n\r\n` after a chunked body, or a trailing HEADERS
  ///   frame in HTTP/2): libcurl hands each trailer line to the header callback after the body, with
  ///   no blank line after them. FoundationNetworking's header parser takes them for the start of a
  ///   new head, and when the transfer ends with that head incomplete it traps ("Transfer completed,
  ///   but there's no response"). A gate in front of its header callback (`ccurl_header_gate_install`)
  ///   hands lines on only as whole heads, from the status line to the blank line: trailers are
  ///   dropped, and the body is delivered, as curl does.
  /// - **A `Content-Length` of 2^63 − 512 or more**: its header callback reads the length as a
  ///   `Double` and converts it with `Int64(_:)`, which traps for values that round to 2^63.
  ///   `CURLOPT_MAXFILESIZE_LARGE` just below that makes libcurl refuse such a length before the end
  ///   of the head reaches the callback: the task fails with libcurl's "Maximum file size exceeded".
  ///
  /// The gate also refuses a head whose `Content-Length` fields name different lengths (RFC 9112
  /// §6.3; libcurl would read the body by the first), failing the task with
  /// `URLError(.badServerResponse)`, and hands on a line ending in a bare LF with CRLF, which
  /// FoundationNetworking's parser requires (RFC 9112 §2.2 lets a recipient take the bare LF).
  ///
  /// Both are set where no byte of the response can have arrived yet: FoundationNetworking makes a
  /// data task's protocol, and its libcurl handle, inside `resume()` on its work queue, after asking
  /// the session's `URLCache` for a cached response and before it configures the handle and adds it
  /// to its multi handle. The URLSession engine's sessions have a cache of their own (``cache``),
  /// which answers that nothing is cached and then sets up the new handle, still on that queue. The
  /// handle is found by reflection of FoundationNetworking's objects (`_protocolStorage`,
  /// `easyHandle`, `rawHandle`), as for ``ResponseReadPause``; if any of them is not where
  /// swift-corelibs-foundation 6.x keeps it, nothing is changed.
  ///
  /// A gate's memory is freed when its task completes (``taskCompleted(_:)``): FoundationNetworking
  /// has removed the handle from its multi handle by then, so the gate can no longer be called.
  package enum ResponseHeadGuard {
    /// The largest `Content-Length` FoundationNetworking can convert: every larger value rounds to
    /// 2^63 as a `Double`.
    static let largestConvertibleLength: Int64 = 9_223_372_036_854_775_295

    /// The `URLCache` of the URLSession engine's sessions: stores nothing, and sets up each data
    /// task's handle when FoundationNetworking asks it for a cached response.
    static let cache = GuardingCache()

    /// Whether libcurl can be called here.
    static var isAvailable: Bool { ccurl_load() == 0 }

    /// The gates in place, by task, and how many were ever put in place.
    private static let gates = Locked<(byTask: [ObjectIdentifier: Installed], made: Int)>(([:], 0))

    /// How many gates are in place now, and how many were put in place in all (for tests).
    package static var gateCounts: (inPlace: Int, made: Int) { gates.withLock { ($0.byTask.count, $0.made) } }

    /// Sets up the libcurl handle of `task`, whose protocol FoundationNetworking has just made. On
    /// FoundationNetworking's work queue, before the handle is added to its multi handle.
    static func guardHandle(of task: URLSessionDataTask) {
      guard isAvailable, let easyHandle = easyHandle(of: task),
        let raw = FoundationNetworkingMirror.child(easyHandle, "rawHandle") as? UnsafeMutableRawPointer
      else { return }
      _ = ccurl_easy_setopt_off(raw, CCURLOPT_MAXFILESIZE_LARGE, largestConvertibleLength)
      if !HTTP2Offer.offeredByDefault {
        // libcurl's default offers HTTP/2 over TLS; before 8.13 it can pass off a cut HTTP/2 body
        // as a whole one (``HTTP2Offer``). FoundationNetworking sets no HTTP version of its own.
        _ = ccurl_easy_setopt_long(raw, CCURLOPT_HTTP_VERSION, Int(CCURL_HTTP_VERSION_1_1))
      }
      if let request = task.originalRequest, asksToClose(request) {
        // The request's own `Connection: close` (RFC 9112 §9.6): FoundationNetworking sends the
        // header but keeps the connection for the next task when the server does not close it.
        _ = ccurl_easy_setopt_long(raw, CCURLOPT_FORBID_REUSE, 1)
      }
      // FoundationNetworking's header callback is given the `_EasyHandle` itself as its data.
      let headerData = Unmanaged.passUnretained(easyHandle as AnyObject).toOpaque()
      guard let gate = ccurl_header_gate_install(raw, headerData) else { return }
      let installed = Installed(task: task, gate: gate)
      let replaced = gates.withLock { gates in
        gates.made += 1
        return gates.byTask.updateValue(installed, forKey: ObjectIdentifier(task))
      }
      // A task's protocol is made once; a second one would have a handle of its own.
      if let replaced { ccurl_header_gate_free(replaced.gate) }
    }

    /// Whether `request` says `Connection: close` (one of its comma-separated options).
    static func asksToClose(_ request: URLRequest) -> Bool {
      guard let value = request.value(forHTTPHeaderField: "Connection") else { return false }
      return value.split(separator: ",").contains {
        $0.trimmingCharacters(in: .whitespaces).equalsIgnoringASCIICase("close")
      }
    }

    /// Frees the gate of `task`, which completed; returns whether the gate refused the response's
    /// framing (Content-Length fields that disagree), which failed the transfer.
    @discardableResult
    static func taskCompleted(_ task: URLSessionTask) -> Bool {
      guard let installed = gates.withLock({ $0.byTask.removeValue(forKey: ObjectIdentifier(task)) }) else {
        return false
      }
      let refused = ccurl_header_gate_refused_framing(installed.gate) != 0
      ccurl_header_gate_free(installed.gate)
      return refused
    }

    /// The `_EasyHandle` of `task`'s protocol.
    private static func easyHandle(of task: URLSessionTask) -> AnyObject? {
      guard let storage = FoundationNetworkingMirror.child(task, "_protocolStorage"),
        let urlProtocol = FoundationNetworkingMirror.child(storage, "existing"),
        let easy = FoundationNetworkingMirror.unwrapped(
          FoundationNetworkingMirror.child(urlProtocol, "easyHandle"))
      else { return nil }
      return type(of: easy) is AnyClass ? easy as AnyObject : nil
    }

    /// A gate and the task it belongs to (held, so that its identifier is not reused meanwhile).
    private struct Installed: @unchecked Sendable {
      let task: URLSessionTask
      let gate: OpaquePointer
    }

    /// See ``ResponseHeadGuard/cache``. Holds nothing: the fetcher keeps its own ETag cache, and
    /// FoundationNetworking never stores HTTP responses anyway.
    final class GuardingCache: URLCache, @unchecked Sendable {
      init() {
        // Not a directory: FoundationNetworking's cache then has no directory and touches no disk.
        super.init(memoryCapacity: 0, diskCapacity: 0, diskPath: "/dev/null")
      }

      override func getCachedResponse(
        for dataTask: URLSessionDataTask, completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
      ) {
        // Makes the task's protocol and handle (see the type's notes), then sets the handle up.
        completionHandler(nil)
        ResponseHeadGuard.guardHandle(of: dataTask)
      }

      override func cachedResponse(for request: URLRequest) -> CachedURLResponse? { nil }
      override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) {}
      override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for dataTask: URLSessionDataTask)
      {}
      override func removeCachedResponse(for request: URLRequest) {}
      override func removeCachedResponse(for dataTask: URLSessionDataTask) {}
      override func removeAllCachedResponses() {}
      override func removeCachedResponses(since date: Date) {}
    }
  }
#endif
