import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// nginx over TLS with HTTP/2 (`.ci/servers.sh`: a private CA made at run time).
enum InteropTLS {
  static let isEnabled = Interop.isEnabled && Interop.environment["SESSIONFETCHER_NGINX_TLS_URL"] != nil
  static func url(_ path: String) -> URL { Interop.url("SESSIONFETCHER_NGINX_TLS_URL", path) }

  /// Debian's CA bundle, the file libcurl (and so FoundationNetworking) trusts by default.
  static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"

  /// Whether this process may start a child in a mount namespace of its own and bind-mount
  /// there (root with CAP_SYS_ADMIN: a CI machine, not every container).
  static let canMakeMountNamespace: Bool = {
    #if !os(Linux)
      return false
    #else
      guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
        FileManager.default.fileExists(atPath: systemBundle)
      else { return false }
      let attempt = try? ChildProcess.spawn(
        [
          "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
          "mount --bind \"$1\" \"$1\"", "sh", systemBundle,
        ], environment: ProcessInfo.processInfo.environment, output: URL(fileURLWithPath: "/dev/null"))
      guard let attempt else { return false }
      return ChildProcess.wait(attempt, timeout: 30).exitCode == 0
    #endif
  }()

  static var settings: TLSSettings {
    var settings = TLSSettings()
    settings.additionalTrustRoots = [URL(fileURLWithPath: Interop.environment["SESSIONFETCHER_TLS_CA"] ?? "")]
    // These tests are about HTTP/2 with nginx: offered whatever libcurl's version (HTTP2Offer).
    settings.offersHTTP2 = true
    return settings
  }

  /// The TLS server's access log: `method uri status protocol connection requests-on-connection`.
  static func accessLog(uriPrefix: String) -> [[Substring]] {
    let path = Interop.environment["SESSIONFETCHER_NGINX_TLS_ACCESS_LOG"] ?? ""
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").map { $0.split(separator: " ") }.filter {
      $0.count == 6 && $0[1].hasPrefix(uriPrefix)
    }
  }
}

@Suite(
  "Interop: nginx over TLS and HTTP/2", .serialized,
  .enabled(if: InteropTLS.isEnabled && FetcherEngine.libcurl.isAvailable, Interop.skipMessage))
struct InteropTLSTests {
  /// 16 fetches at once to one host over TLS on the libcurl engine: HTTP/2 by ALPN, all on one
  /// connection (nginx logs the protocol and the connection of each request).
  @Test func http2IsNegotiatedAndMultiplexed() async throws {
    let service = FetcherService()
    service.engine = .libcurl
    service.tlsSettings = InteropTLS.settings
    service.maxRunningFetchersPerHost = 16
    service.callbackQueue = DispatchQueue(label: "interop.tls")
    // nginx logs the path without the query; the suite is serialized, so the new lines are ours
    // (the log also holds the HTTP/1.1 requests of the default-settings test and of earlier runs).
    let linesBefore = InteropTLS.accessLog(uriPrefix: "/1k.bin").count
    let tag = UUID().uuidString
    let fetchers = (0..<16).map { service.fetcher(url: InteropTLS.url("/1k.bin?\(tag)-\($0)")) }
    let results = await withTaskGroup(of: FetchResult.self) { group in
      for fetcher in fetchers { group.addTask { await fetcher.fetchResult(timeout: 30) } }
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(results.allSatisfy { $0.error == nil && $0.data?.count == 1024 })
    #expect(fetchers.allSatisfy { $0.timing.transferMetrics?.httpVersion == "HTTP/2" })
    #expect(fetchers.allSatisfy { ($0.response as? HTTPURLResponse)?.statusCode == 200 })
    let lines = InteropTLS.accessLog(uriPrefix: "/1k.bin").dropFirst(linesBefore)
    #expect(lines.count == 16, "\(lines)")
    #expect(lines.allSatisfy { $0[3] == "HTTP/2.0" }, "\(lines)")
    // One connection for all of them (HTTP/2 multiplexing; libcurl waits for ALPN: PIPEWAIT).
    #expect(Set(lines.map { $0[4] }).count == 1, "\(lines)")
  }

  #if canImport(FoundationNetworking)
    /// The libcurl engine queues exchanges past the per-host connection limit only for hosts that
    /// take one exchange per connection (HTTP/1.x); an HTTPS host answering in HTTP/2 multiplexes
    /// them over one connection and is not held. With a limit of 1: one fetch, whose response
    /// shows HTTP/2, then 16 at once, which run together on its connection.
    @Test func http2ExchangesAreNotHeldToTheConnectionLimit() throws {
      let configuration = URLSessionConfiguration.ephemeral
      configuration.httpMaximumConnectionsPerHost = 1
      let engine = try CurlEngine(configuration: configuration)
      defer { engine.invalidateAndCancel() }
      // nginx logs the path without the query; the suite is serialized, so the new lines are ours.
      let linesBefore = InteropTLS.accessLog(uriPrefix: "/1k.bin").count
      let tag = UUID().uuidString
      func round(_ count: Int) throws {
        let handlers = (0..<count).map { _ in EngineCompletionHandler() }
        for (index, handler) in handlers.enumerated() {
          let request = URLRequest(url: InteropTLS.url("/1k.bin?\(tag)-\(count)-\(index)"))
          let task = try #require(
            engine.makeTask(request: request, body: .none, tls: InteropTLS.settings, handler: handler))
          task.resume()
        }
        for handler in handlers {
          #expect(handler.waitForCompletion())
          let outcome = handler.outcome
          #expect(outcome.error == nil)
          #expect(outcome.bytes == 1024)
          #expect(outcome.metrics?.httpVersion == "HTTP/2")
        }
      }
      try round(1)
      #expect(engine.mostTransfersAtOnce == 1)
      try round(16)
      #expect(engine.mostTransfersAtOnce > 1, "HTTP/2 exchanges were held to one at a time")
      let lines = InteropTLS.accessLog(uriPrefix: "/1k.bin").dropFirst(linesBefore)
      #expect(lines.count == 17)
      #expect(lines.allSatisfy { $0[3] == "HTTP/2.0" })
      #expect(Set(lines.map { $0[4] }).count == 1, "\(lines)")
    }
  #endif

  /// The URLSession engine cannot trust the private CA on Linux (FoundationNetworking has no TLS
  /// configuration, and the test never installs into the machine's store): the failure arrives with
  /// Apple's code and libcurl's text.
  @Test func theURLSessionEngineReportsAnUnknownRoot() async throws {
    let fetcher = SessionFetcher.fetcher(url: InteropTLS.url("/1k.bin"))
    fetcher.engine = .urlSession
    fetcher.callbackQueue = DispatchQueue(label: "interop.tls.urlsession")
    fetcher.isRetryEnabled = true
    let result = await fetcher.fetchResult(timeout: 30)
    let error = result.error as? URLError
    #expect(error?.code == .serverCertificateHasUnknownRoot, "\(String(describing: result.error))")
    #expect(error?.localizedDescription.contains("certificate") == true)
    #expect(fetcher.timing.retryCount == 0)
  }

  /// Each engine's success path over TLS with the default settings (the system's roots), in a
  /// child process of its own mount namespace where the system's CA bundle is, for that process
  /// alone, the system's roots plus the test CA (a bind mount that nothing outside the child sees;
  /// the machine's store is not touched). Both offer HTTP/2 by default where libcurl is 8.13 or later
  /// (nginx logs the protocol of each request).
  @Test(
    .enabled(
      if: InteropTLS.canMakeMountNamespace,
      "needs Linux and a private mount namespace (root, unshare(1), mount) and the system's CA bundle"),
    arguments: [FetcherEngine.urlSession, .libcurl])
  func theSystemsRootsAreTrustedByDefault(engine: FetcherEngine) async throws {
    guard let probe = Interop.probe() else { return }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("interop-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let bundle = folder.appendingPathComponent("bundle.pem")
    let ca = try Data(contentsOf: URL(fileURLWithPath: Interop.environment["SESSIONFETCHER_TLS_CA"] ?? ""))
    try (Data(contentsOf: URL(fileURLWithPath: InteropTLS.systemBundle)) + Data("\n".utf8) + ca).write(
      to: bundle)
    let targets = (0..<2).map { InteropTLS.url("/1k.bin?\(engine)-\($0)").absoluteString }
    // nginx logs the path without the query; the suite is serialized, so the new lines are ours.
    let loggedBefore = InteropTLS.accessLog(uriPrefix: "/1k.bin").count

    var environment = Interop.environment
    environment["SESSIONFETCHER_ENGINE"] = engine == .libcurl ? "libcurl" : "urlSession"
    let (status, lines) = try await Interop.run(
      [
        "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
        "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"", "sh", bundle.path, InteropTLS.systemBundle,
        probe,
      ] + targets, environment: environment)
    #expect(status == 0, "\(lines)")
    #expect(lines == ["200 1024 -", "200 1024 -"])
    let logged = InteropTLS.accessLog(uriPrefix: "/1k.bin").dropFirst(loggedBefore)
    #expect(logged.count == 2)
    // HTTP/2 by default only where libcurl reports cut HTTP/2 bodies (HTTP2Offer).
    let protocolName = HTTP2Offer.offeredByDefault ? "HTTP/2.0" : "HTTP/1.1"
    #expect(logged.allSatisfy { $0[3] == protocolName }, "\(logged)")
  }
}

/// 1 GiB over TLS on the libcurl engine (run with the large transfers, see `InteropLargeTransferTests`).
@Suite(
  "Interop: 1 GiB transfers with nginx over TLS", .serialized,
  .enabled(
    if: InteropTLS.isEnabled && FetcherEngine.libcurl.isAvailable
      && Interop.environment["SESSIONFETCHER_INTEROP_LARGE"] == "1",
    "set SESSIONFETCHER_INTEROP_LARGE=1 with the interop servers running (.ci/run does)"))
struct InteropLargeTransferTestsOverTLS {
  @Test func gigabyteDownloadOverTLS() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("interop-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("1g.bin")
    let fetcher = SessionFetcher.fetcher(url: InteropTLS.url("/1g.bin"))
    fetcher.engine = .libcurl
    fetcher.tlsSettings = InteropTLS.settings
    fetcher.callbackQueue = DispatchQueue(label: "interop.tls.download")
    fetcher.destinationFileURL = destination
    let result = await fetcher.fetchResult(timeout: 300)
    #expect(result.error == nil)
    #expect(fetcher.downloadedLength == 1 << 30)
    #expect(
      try await Interop.sha256(destination)
        == Interop.sha256(Interop.nginxRoot.appendingPathComponent("1g.bin")))
  }

  @Test func gigabyteUploadOverTLS() async throws {
    let source = Interop.nginxRoot.appendingPathComponent("1g.bin")
    let name = "put-tls-\(UUID().uuidString).bin"
    var request = URLRequest(url: InteropTLS.url("/upload/\(name)"))
    request.httpMethod = "PUT"
    let fetcher = SessionFetcher(request: request)
    fetcher.engine = .libcurl
    fetcher.tlsSettings = InteropTLS.settings
    fetcher.callbackQueue = DispatchQueue(label: "interop.tls.upload")
    fetcher.bodyFileURL = source
    let result = await fetcher.fetchResult(timeout: 300)
    #expect(result.error == nil)
    #expect(fetcher.statusCode == 201)
    let stored = Interop.nginxRoot.appendingPathComponent("upload/\(name)")
    defer { try? FileManager.default.removeItem(at: stored) }
    #expect(try await Interop.sha256(stored) == Interop.sha256(source))
  }
}
