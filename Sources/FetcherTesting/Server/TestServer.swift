import Foundation

/// An in-process HTTP/1.1 server for tests, with a fixed set of built-in routes, custom routes,
/// a record of every request, and fault injection.
///
/// ```swift
/// let server = try TestServer()          // 127.0.0.1, ephemeral port
/// defer { server.stop() }
/// let (data, _) = try await session.data(from: server.url("/bytes/1000"))
/// #expect(data == TestServer.patternBytes(count: 1000))
/// #expect(server.requestCount(path: "/bytes/1000") == 1)
/// ```
///
/// Each connection is served by its own thread with blocking-style I/O; connections are kept
/// alive unless the client sends `Connection: close`. Request bodies may use `Content-Length` or
/// `Transfer-Encoding: chunked`, and `Expect: 100-continue` is answered with `100 Continue`.
/// Malformed requests get `400` and the connection is closed. Pipelining is not supported.
///
/// ## Built-in routes
/// Query parameters are percent-decoded (`+` stays `+`). Generated bodies are the pattern of
/// ``patternBytes(count:offset:)``, produced while sending, so any length works.
///
/// | Route | Answer |
/// | --- | --- |
/// | `/status/N` | status N, JSON `{"error":{"message":"Server Status N","code":N}}`; `?retryAfter=S` adds `Retry-After: S` |
/// | `/bytes/N` | N pattern bytes, `ETag: "bytes-N"`, `Accept-Ranges: bytes`; `Range` → 206 (or 416), `If-Range`; `?chunked=1&chunkSize=`, `?contentType=` |
/// | `/text?value=V` | `text/plain` body V |
/// | `/echo` | the request body with its `Content-Type`, plus `X-Request-Method`, `X-Body-Length`, `X-Body-Checksum`, `X-Request-Chunked`, `X-Request-Content-Length` |
/// | `/upload` | JSON `{"method":…,"length":N,"checksum":"…","chunked":bool}`; `?discard=1` never keeps the body |
/// | `/headers` | JSON `{"method":…,"path":…,"query":{…},"headers":{…}}`, repeated header names joined with `, ` |
/// | `/delay/S` | waits S seconds (fractions allowed), then `delayed` |
/// | `/hang` | never answers; ends when the client leaves or the server stops |
/// | `/drip?bytes=N&chunks=K&interval=MS` | `Content-Length: N`, sent in K pieces MS milliseconds apart |
/// | `/redirect?to=URL&status=302` | redirect with `Location: URL` verbatim, body `redirecting` |
/// | `/redirect/N` | chain to `/redirect/N-1` … `/redirect/0` (200 `redirect done`); `?status=`, `?absolute=1` |
/// | `/cookies` | JSON `{"cookie":"<Cookie header>"}` |
/// | `/set-cookie?c=V&c=W` | one `Set-Cookie` per `c`; `?redirect=URL` answers 302 to URL |
/// | `/etag/TAG` | `etag body TAG`, `ETag: "TAG"` (`?weak=1`: `W/"TAG"`); matching `If-None-Match` → 304; `?cacheControl=` |
/// | `/basic-auth/USER/PASS` | 200 JSON when `Authorization: Basic` matches, else 401 with `WWW-Authenticate: Basic realm="test"` |
/// | `/digest-auth/QOP/USER/PASS/ALG` | HTTP Digest (RFC 7616), checked server-side: QOP `auth` or `none`, ALG `MD5`, `MD5-sess`, `SHA-256`, `SHA-256-sess`; 200 JSON with `nc` when answered, else 401 with a Digest challenge (`?challenge=VALUE` offers VALUE; `?stale=1` answers a first correct reply with `stale=true`; `?then=URL` redirects once answered) |
/// | `/bearer/TOKEN` | 200 JSON when `Authorization: Bearer TOKEN`, else 401 with `WWW-Authenticate: Bearer realm="test"` |
/// | `/retry-after?status=503&after=S` | that status with `Retry-After: S` |
/// | `/chunked?chunks=K&size=N` | chunked response of K chunks of N pattern bytes |
/// | `/truncate?length=L&send=N` | announces L bytes, sends N, closes (FIN) |
/// | `/reset?length=L&send=N` | announces L bytes, sends N, resets (RST) |
/// | `/stall?length=L&send=N` | announces L bytes, sends N, then waits until the client leaves |
/// | `/empty` | closes without answering |
/// | `/garbage` | sends bytes that are not HTTP, then closes |
/// | `/fail-first?n=N&key=K&status=503&fault=…&retryAfter=S&bytes=M` | the first N requests with key K fail (`fault=status` (default), `reset`, `truncate`, `stall` (half the body, then silence) or `empty`); later ones get 200 with M pattern bytes (default 16). `X-Attempt` tells the attempt number |
/// | `/sse?events=N&interval=MS&id=FIRST&retry=MS&dropAfter=K&event=TYPE` | `text/event-stream`, chunked: N events `id: n` / `data: event n` from FIRST (or after the request's `Last-Event-ID`), one per chunk MS ms apart; `retry` sends `retry: MS` first; `dropAfter=K` closes the connection after K events |
/// | `/stream?bytes=N&chunkSize=S&interval=MS` | N pattern bytes, chunked in S-byte chunks (default 16384) MS ms apart (default 10) |
/// | `/encoded?bytes=N&coding=C&chunked=1` | N pattern bytes (default 1024) in `Content-Encoding` C, `gzip` (default) or `deflate` (see ``ContentCoding``) |
/// | `/bomb?decoded=N&coding=C&chunked=1` | a compression bomb: about N / 159 bytes that decode to at least N zero bytes (default 1 GiB); its trailer is not valid |
/// | `/gzip-members` | gzip members of one byte each, chunked, without end |
/// | `/corrupt-encoding?coding=C&truncate=1` | a `Content-Encoding` C body that does not decode; `truncate=1`: the first half of a valid one |
/// | `/NAME.location` | starts a resumable upload (POST or PUT with `X-Goog-Upload-Protocol: resumable`, `X-Goog-Upload-Command: start`, `X-Goog-Upload-Content-Type` and `X-Goog-Upload-Content-Length`, else 503): `X-Goog-Upload-Status: active`, `X-Goog-Upload-URL: http://host:port/NAME.upload?<the same query>`, and `X-Goog-Upload-Chunk-Granularity` when the request sends `GTM-Upload-Granularity-Request` |
/// | `/NAME.upload` | the upload's commands (404 before a start; 400 without `X-Goog-Upload-Protocol: resumable`, and a chunk of an upload of declared length without that length in `X-Goog-Upload-Content-Length`): `query` → `active` with `X-Goog-Upload-Size-Received` (`?bytesReceived=N` sets it, `?querySizeReceived=V` answers V as written, `?queryStatus=final`, `cancelled` or `error` (502)); `cancel` → `cancelled`; `upload` / `upload, finalize` / `finalize` with `X-Goog-Upload-Offset` (a wrong offset → 503; `?uploadStatus=N` forces N, for the chunk requests listed in `?uploadStatusChunks=1,3` or all; a chunk reaching the declared length without `finalize` → 400) → `active` and the size received (`?sizeReceived=V` answers V as written, for the chunk requests listed in `?sizeReceivedChunks=2` or all), or `final` with JSON `{"length":N,"checksum":"…","contentType":"…"}`. ``resumableUpload(path:)`` gives the assembled bytes |
/// | anything else | 404 `not found` |
///
/// ## Thread safety
/// All members may be called from any thread or task. The server's mutable state (records,
/// custom routes, `/fail-first` counters) is behind one lock, held only briefly; custom route
/// handlers run on the connection's thread, outside the lock, possibly concurrently.
public final class TestServer: Sendable {
  /// Shared with the server's threads; holds all mutable state (see ``ServerCore``).
  let core: ServerCore
  /// The TCP port the server listens on.
  public let port: UInt16
  /// `http://127.0.0.1:PORT` (or `http://[::1]:PORT` for IPv6), without a trailing slash.
  public let baseURL: URL

  /// Starts a server listening on `host` and `port`.
  ///
  /// - Parameters:
  ///   - host: a numeric IPv4 or IPv6 address (`"127.0.0.1"`, `"::1"`) or a host name.
  ///   - port: the port, or `0` (the default) for an ephemeral port; read it from ``port``.
  /// - Throws: ``TestServerError`` when the address cannot be bound.
  ///
  /// The first server ignores SIGPIPE for the whole process, so that a connection closed under a
  /// writer fails that write instead of killing the test run.
  public init(host: String = "127.0.0.1", port: UInt16 = 0) throws {
    POSIX.ignoreBrokenPipes
    let stopSignal = try StopSignal()
    let listener = try Listener(host: host, port: port)
    let hostForURL = host.contains(":") ? "[\(host)]" : host
    guard let baseURL = URL(string: "http://\(hostForURL):\(listener.port)") else {
      POSIX.closeDescriptor(listener.descriptor)
      throw TestServerError.invalidHost(host)
    }
    self.port = listener.port
    self.baseURL = baseURL
    let core = ServerCore(baseURL: baseURL, stopSignal: stopSignal)
    self.core = core
    core.startWorker(name: "TestServer accept :\(listener.port)") {
      core.runAcceptLoop(listener: listener.descriptor)
    }
  }

  deinit {
    stop()
  }

  /// The URL of `pathAndQuery` on this server: `url("/bytes/10?x=1")` is
  /// `http://127.0.0.1:PORT/bytes/10?x=1`. A missing leading `/` is added; characters that
  /// cannot appear in a URL (such as spaces) are percent-encoded.
  public func url(_ pathAndQuery: String) -> URL {
    let suffix = pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
    if let url = URL(string: baseURL.absoluteString + suffix) { return url }
    var allowed = CharacterSet.urlQueryAllowed
    allowed.insert(charactersIn: "%#")
    let escaped = suffix.addingPercentEncoding(withAllowedCharacters: allowed) ?? suffix
    guard let url = URL(string: baseURL.absoluteString + escaped) else {
      preconditionFailure("TestServer.url: cannot make a URL of \(pathAndQuery)")
    }
    return url
  }

  /// Stops the server: closes the listener and every connection (ending hanging and stalled
  /// responses), then waits (up to 5 seconds) for the server's threads to finish.
  ///
  /// Idempotent; also called by `deinit`. Requests already recorded stay readable. A custom
  /// route handler that is still blocked in its own code can delay the return by those 5 seconds
  /// (use ``TestResponse/delay`` rather than sleeping in a handler). A handler may stop its own
  /// server.
  public func stop() {
    core.state.withLock { state in
      state.isStopped = true
      // Handlers may capture the server; dropping them breaks such cycles.
      state.routes = [:]
    }
    core.stopSignal.fire()
    core.workers.waitUntilFinished(timeout: 5)
  }

  /// Every request received since start or the last ``resetRecords()``, in arrival order
  /// (recorded when its body has been read, before it is answered). Malformed requests, answered
  /// with 400, are not recorded.
  public var requests: [RecordedRequest] {
    core.state.withLock { $0.requests }
  }

  /// The number of recorded requests whose path (without the query) equals `path`.
  ///
  /// A query in `path` is ignored: `requestCount(path: "/bytes/1?x=1")` counts `/bytes/1`.
  public func requestCount(path: String) -> Int {
    let path = RequestTarget(path).path
    return core.state.withLock { state in state.requests.lazy.filter { $0.path == path }.count }
  }

  /// The recorded requests whose path (without the query) equals `path`, in arrival order.
  /// A query in `path` is ignored.
  public func requests(path: String) -> [RecordedRequest] {
    let path = RequestTarget(path).path
    return core.state.withLock { state in state.requests.filter { $0.path == path } }
  }

  /// The response bytes (status line, headers and body, as framed on the wire) that the server has
  /// written to its sockets so far for requests whose path equals `path`; a query in `path` is
  /// ignored. Counted as each write reaches the kernel, so a client that stops reading makes it stop
  /// growing once the socket buffers are full.
  public func bytesWritten(path: String) -> Int {
    let path = RequestTarget(path).path
    return core.state.withLock { $0.bytesWritten[path, default: 0] }
  }

  /// Blocks until every connection the server accepted has ended (its thread finished: the client
  /// closed it, a write to it failed, or the server closed it), at most `timeout` seconds; returns
  /// whether they had. Woken by each connection's end, not by polling: a test that a client let go
  /// of its connection waits for exactly that (from async code, through `offThePool`).
  public func waitUntilConnectionsClosed(timeout: TimeInterval) -> Bool {
    // The accept loop is the one worker left while the server runs.
    core.workers.waitUntilLive(atMost: 1, timeout: timeout)
  }

  /// Forgets the recorded requests and resets the `/fail-first` and ``bytesWritten(path:)``
  /// counters. Custom routes stay.
  public func resetRecords() {
    core.state.withLock { state in
      state.requests = []
      state.attempts = [:]
      state.bytesWritten = [:]
    }
  }

  /// Adds (or replaces) a custom route answering requests whose path is exactly `path`
  /// (no query, e.g. `"/login"`), with any method. Custom routes take precedence over built-in
  /// ones.
  ///
  /// The handler runs on the connection's thread after the whole request body has been read;
  /// it may block (the client waits), and it may run concurrently with itself.
  public func route(_ path: String, _ handler: @escaping @Sendable (RecordedRequest) -> TestResponse) {
    core.state.withLock { state in
      guard !state.isStopped else { return }
      state.routes[path] = handler
    }
  }

  /// Makes every request for `path` (exactly, no query) that has a body end in a TCP reset after
  /// the server read `afterBodyBytes` bytes of it (a Content-Length body; a chunked one is reset
  /// right after its head), while the client is still sending; nil stops it. No response is sent.
  public func resetUploads(toPath path: String, afterBodyBytes: Int?) {
    core.state.withLock { state in state.uploadResets[path] = afterBodyBytes }
  }

  /// Removes the custom route for `path`, if any.
  public func removeRoute(_ path: String) {
    core.state.withLock { state in state.routes[path] = nil }
  }

  /// The server's byte pattern: byte `i` is `UInt8((i + offset) % 251)`.
  ///
  /// `/bytes/N` sends `patternBytes(count: N)`; a 206 for `bytes=a-b` sends
  /// `patternBytes(count: b - a + 1, offset: a)`.
  public static func patternBytes(count: Int, offset: Int = 0) -> Data {
    PatternBytes.make(count: count, offset: offset)
  }

  /// The FNV-1a 64-bit hash of `data` as 16 lowercase hexadecimal digits, the form used by
  /// ``RecordedRequest/bodyChecksum``. See ``FNV1a64`` to hash incrementally.
  public static func checksum(_ data: Data) -> String {
    var hash = FNV1a64()
    hash.update(data)
    return hash.hexDigest
  }
}
