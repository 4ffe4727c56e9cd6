import FetcherService
import FetcherTesting
import Foundation
import MIMEDocument
import SessionFetcher
import Testing

/// Where the real servers of the interop suite run. `.ci/run` starts them on loopback (see
/// `.ci/servers.sh`) and sets these variables; without `SESSIONFETCHER_INTEROP=1` the suite is
/// skipped.
enum Interop {
  static let environment = ProcessInfo.processInfo.environment
  static let isEnabled = environment["SESSIONFETCHER_INTEROP"] == "1"

  /// The proxy-probe executable `.ci/run` builds (Soak/), or nil with an issue recorded.
  static func probe() -> String? {
    guard let probe = environment["SESSIONFETCHER_PROXY_PROBE"],
      FileManager.default.isExecutableFile(atPath: probe)
    else {
      Issue.record(
        "SESSIONFETCHER_PROXY_PROBE does not name the proxy-probe executable (.ci/run builds Soak/)")
      return nil
    }
    return probe
  }

  /// Runs `command` (an absolute path first) with `environment` and returns its exit status (128
  /// plus the signal's number if a signal ended it) and the lines it printed. At most 10 minutes.
  static func run(_ command: [String], environment: [String: String]) async throws -> (
    status: Int32, lines: [String]
  ) {
    #if os(Linux)
      let (exit, lines) = try await ChildProcess.run(command, environment: environment, timeout: 600)
      return (exit.exitCode ?? 128 + (exit.signal ?? 0), lines)
    #else
      throw LinuxOnly(needs: "runs \(command.first ?? "a command") as a child process")
    #endif
  }

  static let skipMessage: Comment =
    "interop servers not running: set SESSIONFETCHER_INTEROP=1 and the SESSIONFETCHER_* URLs (.ci/run does)"

  static func url(_ name: String, _ path: String = "") -> URL {
    URL(string: (environment[name] ?? "http://127.0.0.1:1") + path)!
  }

  static func httpbin(_ path: String) -> URL { url("SESSIONFETCHER_HTTPBIN_URL", path) }
  static func httpbin2(_ path: String) -> URL { url("SESSIONFETCHER_HTTPBIN2_URL", path) }
  static func nginx(_ path: String) -> URL { url("SESSIONFETCHER_NGINX_URL", path) }
  static var nginxRoot: URL {
    URL(fileURLWithPath: environment["SESSIONFETCHER_NGINX_ROOT"] ?? "/nonexistent")
  }

  /// A fetcher allowed to use plain http (127.0.0.2 is not "localhost"), with its own jar.
  static func fetcher(_ url: URL, jar: SessionCookieStorage = SessionCookieStorage()) -> SessionFetcher {
    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.allowedInsecureSchemes = ["http"]
    fetcher.callbackQueue = DispatchQueue(label: "interop.callbacks")
    fetcher.cookieStorage = jar
    return fetcher
  }

  /// The login squid and microsocks ask for.
  static var proxyUser: String { environment["SESSIONFETCHER_PROXY_USER"] ?? "" }
  static var proxyPassword: String { environment["SESSIONFETCHER_PROXY_PASSWORD"] ?? "" }

  /// A fetcher of `url` on the libcurl engine through the proxy at `proxy` (an environment
  /// variable's name), logging in as ``proxyUser`` with `password`.
  static func proxiedFetcher(_ url: URL, proxy: String, password: String) -> SessionFetcher {
    let fetcher = Interop.fetcher(url)
    fetcher.engine = .libcurl
    fetcher.proxySettings = ProxySettings(
      url: Interop.url(proxy),
      credential: URLCredential(user: proxyUser, password: password, persistence: .none))
    return fetcher
  }

  static func json(_ data: Data?) -> [String: Any] {
    (data.flatMap { try? JSONSerialization.jsonObject(with: $0) } as? [String: Any]) ?? [:]
  }

  /// `sha256sum` of a file.
  static func sha256(_ url: URL) async throws -> String {
    #if os(Linux)
      let (_, lines) = try await ChildProcess.run(["/usr/bin/sha256sum", url.path], timeout: 600)
      return lines.first?.split(separator: " ").first.map(String.init) ?? ""
    #else
      throw LinuxOnly(needs: "runs sha256sum as a child process")
    #endif
  }
}

@Suite("Interop with httpbin, nginx and squid", .enabled(if: Interop.isEnabled, Interop.skipMessage))
struct InteropTests {
  // MARK: - httpbin

  @Test("status codes", arguments: [200, 201, 204, 400, 404, 418, 500, 503])
  func statusCodes(_ code: Int) async {
    let result = await Interop.fetcher(Interop.httpbin("/status/\(code)")).fetchResult()
    if (200..<300).contains(code) {
      #expect(result.error == nil)
    } else {
      #expect((result.error as? SessionFetcherError)?.statusCode == code)
    }
  }

  @Test("redirects: relative chain, absolute chain, 303 → GET, 307 resends the body")
  func redirectKinds() async throws {
    let relative = Interop.fetcher(Interop.httpbin("/redirect/3"))
    #expect(await relative.fetchResult().error == nil)
    #expect(relative.response?.url?.path == "/get")
    #expect(relative.timing.redirectCount == 3)

    let absolute = Interop.fetcher(Interop.httpbin("/absolute-redirect/2"))
    #expect(await absolute.fetchResult().error == nil)
    #expect(absolute.timing.redirectCount == 2)

    for (status, method) in [(303, "GET"), (307, "POST"), (308, "POST")] {
      let fetcher = Interop.fetcher(Interop.httpbin("/redirect-to?url=/anything&status_code=\(status)"))
      fetcher.bodyData = Data("payload-\(status)".utf8)
      fetcher.setRequestValue("text/plain", forHTTPHeaderField: "Content-Type")
      let result = await fetcher.fetchResult()
      #expect(result.error == nil)
      let echo = Interop.json(result.data)
      #expect(echo["method"] as? String == method, "\(status)")
      #expect((echo["data"] as? String) == (method == "POST" ? "payload-\(status)" : ""), "\(status)")
    }
  }

  @Test("maximumRedirects: at the limit, one over, and 0", arguments: ["redirect", "absolute-redirect"])
  func redirectLimit(_ route: String) async throws {
    let atLimit = Interop.fetcher(Interop.httpbin("/\(route)/3"))
    atLimit.maximumRedirects = 3
    #expect(await atLimit.fetchResult().error == nil)
    #expect(atLimit.timing.redirectCount == 3)

    let over = Interop.fetcher(Interop.httpbin("/\(route)/4"))
    over.maximumRedirects = 3
    #expect(await over.fetchResult().urlError?.code == .httpTooManyRedirects)
    #expect(over.timing.redirectCount == 3)

    let none = Interop.fetcher(Interop.httpbin("/\(route)/1"))
    none.maximumRedirects = 0
    #expect(await none.fetchResult().fetcherError?.statusCode == 302)
    #expect(none.timing.redirectCount == 0)
  }

  @Test("a cross-host redirect (127.0.0.1 → 127.0.0.2) strips credentials; a same-host one keeps them")
  func crossHostRedirectStripsCredentials() async throws {
    let target = Interop.httpbin2("/headers").absoluteString
    let cross = Interop.fetcher(
      Interop.httpbin(
        "/redirect-to?url=" + target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!))
    cross.setRequestValue("Bearer interop-secret", forHTTPHeaderField: "Authorization")
    cross.setRequestValue("k=interop", forHTTPHeaderField: "Cookie")
    let result = await cross.fetchResult()
    #expect(result.error == nil)
    let headers = Interop.json(result.data)["headers"] as? [String: String] ?? [:]
    #expect(headers["Host"] == "127.0.0.2:\(Interop.httpbin2("").port ?? 0)")
    #expect(headers["Authorization"] == nil)
    #expect(headers["Cookie"] == nil)

    let same = Interop.fetcher(Interop.httpbin("/redirect-to?url=/headers"))
    same.setRequestValue("Bearer interop-secret", forHTTPHeaderField: "Authorization")
    let sameHeaders = Interop.json(await same.fetchResult().data)["headers"] as? [String: String] ?? [:]
    #expect(sameHeaders["Authorization"] == "Bearer interop-secret")
  }

  @Test("cookies persist across fetches on one host and stay off the other host")
  func cookiesAcrossFetchesAndHosts() async throws {
    let jar = SessionCookieStorage()
    let set = await Interop.fetcher(Interop.httpbin("/cookies/set?flavour=oat&size=2"), jar: jar)
      .fetchResult()
    #expect(set.error == nil)
    #expect(Interop.json(set.data)["cookies"] as? [String: String] == ["flavour": "oat", "size": "2"])
    let again = await Interop.fetcher(Interop.httpbin("/cookies"), jar: jar).fetchResult()
    #expect(Interop.json(again.data)["cookies"] as? [String: String] == ["flavour": "oat", "size": "2"])
    let otherHost = await Interop.fetcher(Interop.httpbin2("/cookies"), jar: jar).fetchResult()
    #expect(Interop.json(otherHost.data)["cookies"] as? [String: String] == [:])
    let deleted = await Interop.fetcher(Interop.httpbin("/cookies/delete?flavour"), jar: jar).fetchResult()
    #expect(Interop.json(deleted.data)["cookies"] as? [String: String] == ["size": "2"])
  }

  @Test("Basic auth: right credentials pass; wrong or missing ones end promptly as 401")
  func basicAuth() async throws {
    let right = Interop.fetcher(Interop.httpbin("/basic-auth/user/passwd"))
    right.credential = URLCredential(user: "user", password: "passwd", persistence: .none)
    let ok = await right.fetchResult()
    #expect(ok.error == nil)
    #expect(Interop.json(ok.data)["authenticated"] as? Bool == true)

    for credential in [URLCredential(user: "user", password: "wrong", persistence: .none), nil] {
      let fetcher = Interop.fetcher(Interop.httpbin("/basic-auth/user/passwd"))
      fetcher.credential = credential
      let heads = ResponseCount()
      fetcher.eventMonitors = [heads]
      let result = await fetcher.fetchResult()
      #expect((result.error as? SessionFetcherError)?.statusCode == 401)
      // Promptly: the challenge, and at most one answer to it with the wrong credential.
      #expect((1...2).contains(heads.count.count), "\(heads.count.count) responses")
    }
  }

  /// Counts the response heads a fetch was told of.
  final class ResponseCount: FetcherEventMonitor, @unchecked Sendable {
    let count = Recorder<Bool>()
    func fetcher(_ fetcher: SessionFetcher, didReceiveResponse response: URLResponse) {
      count.append(true)
    }
  }

  @Test("gzip and deflate bodies arrive decoded")
  func compressedBodies() async throws {
    let gzip = await Interop.fetcher(Interop.httpbin("/gzip")).fetchResult()
    #expect(Interop.json(gzip.data)["gzipped"] as? Bool == true)
    let deflate = await Interop.fetcher(Interop.httpbin("/deflate")).fetchResult()
    #expect(Interop.json(deflate.data)["deflated"] as? Bool == true)
    // Every engine here offers br (the libcurl of Debian 12 decodes it).
    let brotli = await Interop.fetcher(Interop.httpbin("/brotli")).fetchResult()
    #expect(Interop.json(brotli.data)["brotli"] as? Bool == true)
  }

  @Test(
    "nginx compresses on the fly: each coding asked for arrives decoded", arguments: ["gzip", "br"])
  func nginxCompressesOnTheFly(_ coding: String) async throws {
    guard coding != "br" || Interop.environment["SESSIONFETCHER_NGINX_BROTLI"] == "1" else { return }
    let expected = try Data(contentsOf: Interop.nginxRoot.appendingPathComponent("text/lines.txt"))
    let fetcher = Interop.fetcher(Interop.nginx("/text/lines.txt"))
    fetcher.setRequestValue(coding, forHTTPHeaderField: "Accept-Encoding")
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect((fetcher.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Encoding") == coding)
    #expect(result.data == expected)
    #expect(fetcher.downloadedLength == Int64(expected.count))
  }

  /// 64 MiB, four times the limit, not the 1 GiB bomb: FoundationNetworking inflates on the work
  /// queue every URLSession of the test process shares, and 1 GiB held every other test's URLSession
  /// fetch for seconds (see Linux notes).
  @Test("a gzip bomb from nginx (64 MiB of zeros) ends at the decoded limit")
  func nginxGzipBomb() async throws {
    let fetcher = Interop.fetcher(Interop.nginx("/bomb/zeros-64m.gz"))
    let limit: Int64 = 16 << 20
    fetcher.maximumResponseBodyLength = limit
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.fetcherError == .responseTooLarge(limit: limit), "\(String(describing: result.error))")
  }

  @Test("chunked streams: deterministic bytes, NDJSON lines, accumulated chunk by chunk")
  func chunkedStreams() async throws {
    let path = "/stream-bytes/100000?seed=7&chunk_size=1000"
    let first = await Interop.fetcher(Interop.httpbin(path)).fetchResult()
    let second = await Interop.fetcher(Interop.httpbin(path)).fetchResult()
    #expect(first.data?.count == 100_000)
    #expect(first.data == second.data)

    let lines = await Interop.fetcher(Interop.httpbin("/stream/5")).fetchResult()
    #expect(String(decoding: lines.data ?? Data(), as: UTF8.self).split(separator: "\n").count == 5)

    let chunks = Recorder<Int>()
    let accumulating = Interop.fetcher(Interop.httpbin(path))
    accumulating.accumulateDataBlock = { chunk in chunks.append(chunk?.count ?? -1) }
    #expect(await accumulating.fetchResult().error == nil)
    #expect(chunks.values.reduce(0, +) == 100_000)
  }

  @Test("delays within the timeout succeed; a delay past it times out promptly")
  func delaysAndTimeouts() async throws {
    let slow = Interop.fetcher(Interop.httpbin("/delay/1"))
    // Far above the delay: a loaded machine (a CI build beside the tests) can add seconds.
    slow.request?.timeoutInterval = 20
    let started = Date()
    let slowResult = await slow.fetchResult()
    #expect(slowResult.error == nil, "\(String(describing: slowResult.error))")
    #expect(Date().timeIntervalSince(started) >= 1)

    // httpbin answers after 10 s (its longest delay): a timed-out result can only come from the
    // 1.5 s timeout, however slow a loaded machine is.
    let tooSlow = Interop.fetcher(Interop.httpbin("/delay/10"))
    tooSlow.request?.timeoutInterval = 1.5
    let result = await tooSlow.fetchResult()
    #expect((result.error as? URLError)?.code == .timedOut)

    // 12 s in all, a byte every 1.2 s: the timeout is for idleness, not for the whole (8 s leave
    // a loaded machine almost 7 s to hand over each byte).
    let drip = Interop.fetcher(Interop.httpbin("/drip?numbytes=10&duration=12&delay=0"))
    drip.request?.timeoutInterval = 8
    let dripResult = await drip.fetchResult()
    #expect(dripResult.data?.count == 10, "\(String(describing: dripResult.error))")
  }

  @Test("multipart/form-data from MIMEDocument, parsed by httpbin")
  func multipartForm() async throws {
    let binary = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
    let document = MIMEDocument()
    document.appendFormField(name: "title", value: "ünïcode title")
    document.appendFormField(name: "count", value: "3")
    document.appendFormFile(name: "upload", filename: "blob.bin", data: binary)
    let fetcher = Interop.fetcher(Interop.httpbin("/post"))
    try fetcher.setBody(document)
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    let echo = Interop.json(result.data)
    #expect(echo["form"] as? [String: String] == ["title": "ünïcode title", "count": "3"])
    let file = (echo["files"] as? [String: String])?["upload"] ?? ""
    let prefix = "data:application/octet-stream;base64,"
    #expect(file.hasPrefix(prefix))
    #expect(Data(base64Encoded: String(file.dropFirst(prefix.count))) == binary)
  }

  // MARK: - nginx

  @Test("ETag → 304 answered from the service cache, proved by nginx's access log")
  func etagCacheWithNginx() async throws {
    let service = FetcherService()
    service.allowedInsecureSchemes = ["http"]
    service.callbackQueue = DispatchQueue(label: "interop.service")
    service.shouldRememberETags = true
    service.shouldCacheETaggedData = true
    let url = Interop.nginx("/1k.bin?probe=\(UUID().uuidString)")
    let first = await service.fetcher(url: url).fetchResult()
    #expect(first.error == nil)
    #expect(first.data?.count == 1024)
    let second = service.fetcher(url: url)
    let cached = await second.fetchResult()
    #expect(cached.error == nil)
    #expect(cached.data == first.data)
    #expect(second.statusCode == 200)
    let logPath = Interop.environment["SESSIONFETCHER_NGINX_ACCESS_LOG"] ?? ""
    let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    let lines = log.split(separator: "\n").filter { $0.contains("GET /1k.bin ") }
    #expect(lines.contains { $0.contains(" 200 1024 \"-\"") })
    // nginx logs the If-None-Match it received (quotes escaped as \x22); "-" would mean none.
    #expect(
      lines.contains { $0.contains(" 304 0 ") && !$0.hasSuffix("\"-\"") },
      "no 304 with If-None-Match in nginx's log")
  }

  @Test(
    "nginx over its Unix socket on the libcurl engine: the file's bytes",
    .enabled(
      if: FetcherEngine.libcurl.isAvailable && Interop.environment["SESSIONFETCHER_NGINX_SOCKET"] != nil))
  func unixSocketToNginx() async throws {
    let fetcher = Interop.fetcher(URL(string: "http://localhost/1k.bin")!)
    fetcher.engine = .libcurl
    fetcher.allowLocalhostRequest = true
    fetcher.unixSocketPath = Interop.environment["SESSIONFETCHER_NGINX_SOCKET"]
    let result = await fetcher.fetchResult(timeout: 30)
    let expected = try Data(contentsOf: Interop.nginxRoot.appendingPathComponent("1k.bin"))
    #expect(result.data == expected, "\(String(describing: result.error))")
  }

  @Test(
    "microsocks through ProxySettings on the libcurl engine: 200 with the login, refused without",
    .enabled(if: FetcherEngine.libcurl.isAvailable && Interop.environment["SESSIONFETCHER_SOCKS_URL"] != nil))
  func proxySettingsThroughMicrosocks() async throws {
    for (secret, succeeds) in [(Interop.proxyPassword, true), ("wrong", false)] {
      let fetcher = Interop.proxiedFetcher(
        Interop.httpbin("/get"), proxy: "SESSIONFETCHER_SOCKS_URL", password: secret)
      let result = await fetcher.fetchResult(timeout: 30)
      if succeeds {
        #expect(fetcher.statusCode == 200, "\(String(describing: result.error))")
      } else {
        #expect(result.urlError != nil, "\(String(describing: result.error))")
      }
    }
  }
}

/// The tests through squid, one at a time: run beside each other, squid once let a wrong password
/// through for the user it had just validated with the right one.
@Suite("Interop: squid", .serialized, .enabled(if: Interop.isEnabled, Interop.skipMessage))
struct InteropProxyTests {
  // MARK: - squid (in a child process: the proxy comes only from its environment)

  @Test("through squid with proxy credentials in http_proxy: 200; without them: 407")
  func proxy() async throws {
    guard let probe = Interop.probe() else { return }
    let proxy = Interop.url("SESSIONFETCHER_PROXY_URL")
    let (user, password) = (Interop.proxyUser, Interop.proxyPassword)
    let targets = [Interop.httpbin("/get").absoluteString, Interop.httpbin2("/headers").absoluteString]
    func run(_ proxyURL: String, extra: [String: String] = [:]) async throws -> [String] {
      var environment = Interop.environment
      for name in ["no_proxy", "NO_PROXY", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"] {
        environment[name] = nil
      }
      environment["http_proxy"] = proxyURL
      environment.merge(extra) { $1 }
      return try await Interop.run([probe] + targets, environment: environment).lines
    }
    let host = "\(proxy.host ?? "127.0.0.1"):\(proxy.port ?? 0)"
    let authorized = try await run("http://\(user):\(password)@\(host)")
    #expect(authorized.count == 2)
    #expect(authorized.allSatisfy { $0.hasPrefix("200 ") }, "\(authorized)")
    let anonymous = try await run("http://\(host)")
    #expect(anonymous.count == 2)
    #expect(anonymous.allSatisfy { $0.hasPrefix("407 ") }, "\(anonymous)")
    let wrong = try await run("http://\(user):wrong@\(host)")
    #expect(wrong.allSatisfy { $0.hasPrefix("407 ") }, "\(wrong)")
    // On the libcurl engine the fetcher's proxyCredential answers squid's 407 challenge
    // (FoundationNetworking does not pass proxy challenges to its delegate).
    if FetcherEngine.libcurl.isAvailable {
      let answered = try await run(
        "http://\(host)",
        extra: ["SESSIONFETCHER_ENGINE": "libcurl", "PROXY_PROBE_CREDENTIAL": "\(user):\(password)"])
      #expect(answered.count == 2)
      #expect(answered.allSatisfy { $0.hasPrefix("200 ") }, "\(answered)")
      let refused = try await run(
        "http://\(host)",
        extra: ["SESSIONFETCHER_ENGINE": "libcurl", "PROXY_PROBE_CREDENTIAL": "\(user):wrong"])
      #expect(refused.allSatisfy { $0.hasPrefix("407 ") }, "\(refused)")
    }
  }

  @Test(
    "squid through ProxySettings on the libcurl engine: 200 with the credential, 407 with a wrong one",
    .enabled(if: FetcherEngine.libcurl.isAvailable))
  func proxySettingsThroughSquid() async throws {
    for (secret, status) in [(Interop.proxyPassword, 200), ("wrong", 407)] {
      let fetcher = Interop.proxiedFetcher(
        Interop.httpbin("/get"), proxy: "SESSIONFETCHER_PROXY_URL", password: secret)
      let result = await fetcher.fetchResult(timeout: 30)
      #expect(fetcher.statusCode == status, "\(String(describing: result.error))")
    }
  }

  @Test(
    "https through squid by CONNECT to nginx's TLS port, on the libcurl engine: the file with the credential, 407 without",
    .enabled(if: FetcherEngine.libcurl.isAvailable && InteropTLS.isEnabled))
  func httpsThroughSquid() async throws {
    let expected = try Data(contentsOf: Interop.nginxRoot.appendingPathComponent("text/lines.txt"))
    for (secret, status) in [("wrong", 407), (Interop.proxyPassword, 200), ("wrong", 407)] {
      let fetcher = Interop.proxiedFetcher(
        InteropTLS.url("/text/lines.txt"), proxy: "SESSIONFETCHER_PROXY_URL", password: secret)
      fetcher.tlsSettings = InteropTLS.settings
      let result = await fetcher.fetchResult(timeout: 30)
      // A refused CONNECT has no response of its own: its status is the error's.
      let answered = status == 200 ? fetcher.statusCode : result.fetcherError?.statusCode
      #expect(answered == status, "\(String(describing: result.error))")
      if status == 200 { #expect(result.data == expected) }
    }
  }

  @Test(
    "bypassHosts: a bypassed host is fetched directly, the other goes through squid (407 without a login)",
    .enabled(if: FetcherEngine.libcurl.isAvailable))
  func bypassThroughSquid() async throws {
    let proxy = ProxySettings(url: Interop.url("SESSIONFETCHER_PROXY_URL"), bypassHosts: ["127.0.0.1"])
    let direct = Interop.fetcher(Interop.httpbin("/get"))
    direct.engine = .libcurl
    direct.proxySettings = proxy
    #expect(await direct.fetchResult(timeout: 30).error == nil)
    let proxied = Interop.fetcher(Interop.httpbin2("/get"))
    proxied.engine = .libcurl
    proxied.proxySettings = proxy
    _ = await proxied.fetchResult(timeout: 30)
    #expect(proxied.statusCode == 407)
  }

  @Test("ProxySettings.direct ignores http_proxy on the libcurl engine; the URLSession engine refuses it")
  func directIgnoresTheEnvironment() async throws {
    guard let probe = Interop.probe() else { return }
    var environment = Interop.environment
    for name in ["no_proxy", "NO_PROXY", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"] {
      environment[name] = nil
    }
    // Nothing listens on port 1: through this proxy every fetch fails to connect.
    environment["http_proxy"] = "http://127.0.0.1:1"
    let target = Interop.httpbin("/get").absoluteString
    func run(_ extra: [String: String]) async throws -> [String] {
      try await Interop.run([probe, target], environment: environment.merging(extra) { $1 }).lines
    }
    let proxied = try await run(["SESSIONFETCHER_ENGINE": "libcurl"])
    #expect(proxied.count == 1 && proxied.allSatisfy { $0.hasPrefix("0 ") }, "\(proxied)")
    if FetcherEngine.libcurl.isAvailable {
      let direct = try await run(["SESSIONFETCHER_ENGINE": "libcurl", "PROXY_PROBE_DIRECT": "1"])
      #expect(direct.count == 1 && direct.allSatisfy { $0.hasPrefix("200 ") }, "\(direct)")
    }
    let refused = try await run(["SESSIONFETCHER_ENGINE": "urlSession", "PROXY_PROBE_DIRECT": "1"])
    #expect(refused.count == 1 && refused.allSatisfy { $0.contains("proxySettings") }, "\(refused)")
  }
}

/// The 1 GiB transfers, run on their own after the main suite (`SESSIONFETCHER_INTEROP_LARGE=1
/// swift test --filter InteropLargeTransferTests`, as `.ci/run` does) so that they do not starve
/// the timing-sensitive tests running in parallel on a 2-core machine.
@Suite(
  "Interop: 1 GiB transfers with nginx", .serialized,
  .enabled(
    if: Interop.isEnabled && Interop.environment["SESSIONFETCHER_INTEROP_LARGE"] == "1",
    "set SESSIONFETCHER_INTEROP_LARGE=1 with the interop servers running (.ci/run does)"))
struct InteropLargeTransferTests {
  @Test("1 GiB download to a file, sha256 equal to nginx's file")
  func gigabyteDownload() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("interop-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("1g.bin")
    let fetcher = Interop.fetcher(Interop.nginx("/1g.bin"))
    fetcher.destinationFileURL = destination
    let result = await fetcher.fetchResult(timeout: 300)
    #expect(result.error == nil)
    #expect(fetcher.downloadedLength == 1 << 30)
    #expect(
      try await Interop.sha256(destination)
        == Interop.sha256(Interop.nginxRoot.appendingPathComponent("1g.bin")))
  }

  @Test("256 MiB download stopped at random points, resumed by token with 206 answers, sha256 equal")
  func bigDownloadResumedFromRandomPoints() async throws {
    let total: Int64 = 256 << 20
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("interop-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("256m.bin")
    var stopPoints = (0..<3).map { _ in Int64.random(in: 1..<total) }.sorted()
    var token: Data?
    var resumedStatuses: [Int] = []
    var contentRanges: [String?] = []
    while true {
      let fetcher: SessionFetcher
      if let token {
        fetcher = try #require(SessionFetcher(resumeData: token))
        fetcher.allowedInsecureSchemes = ["http"]
        fetcher.callbackQueue = DispatchQueue(label: "interop.resume")
      } else {
        fetcher = Interop.fetcher(Interop.nginx("/256m.bin"))
        fetcher.destinationFileURL = destination
        fetcher.keepsPartialDownloadForResume = true
      }
      guard let stopAt = stopPoints.first else {
        let result = await fetcher.fetchResult(timeout: 300)
        #expect(result.error == nil)
        contentRanges.append(
          (fetcher.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Range"))
        resumedStatuses.append(fetcher.statusCode)
        break
      }
      stopPoints.removeFirst()
      // A monitor runs on the delivery path, so the stop always comes before the body ends.
      fetcher.eventMonitors = [StopAtLengthMonitor(stopAt)]
      fetcher.beginFetch { _, _ in }
      #expect(await eventually(timeout: 300) { fetcher.downloadResumeData != nil })
      #expect(!FileManager.default.fileExists(atPath: destination.path))
      contentRanges.append((fetcher.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Range"))
      if token != nil { resumedStatuses.append(fetcher.statusCode) }
      token = fetcher.downloadResumeData
    }
    #expect(contentRanges.first == .some(nil))
    #expect(contentRanges.count == 4)
    #expect(contentRanges.dropFirst().allSatisfy { $0?.hasPrefix("bytes ") == true })
    #expect(resumedStatuses == [206, 206, 206])
    #expect(try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? Int64 == total)
    #expect(
      try await Interop.sha256(destination)
        == Interop.sha256(Interop.nginxRoot.appendingPathComponent("256m.bin")))
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["256m.bin"])
  }

  @Test("a multipart document with a file part, PUT with its Content-Length, byte-equal on nginx's disk")
  func multipartDocumentUpload() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("interop-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let part = folder.appendingPathComponent("part.bin")
    try Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }).write(to: part)
    let document = MIMEDocument()
    document.appendFormField(name: "title", value: "interop")
    document.appendFormFile(name: "file", filename: "part.bin", fileURL: part)
    let expected = try document.generateData().data
    let name = "mime-\(UUID().uuidString).bin"
    var request = URLRequest(url: Interop.nginx("/upload/\(name)"))
    request.httpMethod = "PUT"
    let fetcher = SessionFetcher(request: request)
    fetcher.allowedInsecureSchemes = ["http"]
    fetcher.callbackQueue = DispatchQueue(label: "interop.mime")
    try fetcher.setBody(document)
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(fetcher.statusCode == 201)
    let stored = Interop.nginxRoot.appendingPathComponent("upload/\(name)")
    defer { try? FileManager.default.removeItem(at: stored) }
    #expect(try Data(contentsOf: stored) == expected)
  }

  @Test("1 GiB PUT upload from a file, sha256 equal on nginx's disk")
  func gigabyteUpload() async throws {
    let source = Interop.nginxRoot.appendingPathComponent("1g.bin")
    let name = "put-\(UUID().uuidString).bin"
    var request = URLRequest(url: Interop.nginx("/upload/\(name)"))
    request.httpMethod = "PUT"
    let fetcher = SessionFetcher(request: request)
    fetcher.allowedInsecureSchemes = ["http"]
    fetcher.callbackQueue = DispatchQueue(label: "interop.upload")
    fetcher.bodyFileURL = source
    let sent = Recorder<Int64>()
    fetcher.sendProgressBlock = { _, total, _ in sent.append(total) }
    let result = await fetcher.fetchResult(timeout: 300)
    #expect(result.error == nil)
    #expect(fetcher.statusCode == 201)
    #expect(sent.values.last == 1 << 30)
    let stored = Interop.nginxRoot.appendingPathComponent("upload/\(name)")
    defer { try? FileManager.default.removeItem(at: stored) }
    #expect(try await Interop.sha256(stored) == Interop.sha256(source))
  }
}
