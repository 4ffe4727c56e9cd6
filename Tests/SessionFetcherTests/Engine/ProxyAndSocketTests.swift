import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `ProxySettings` and `unixSocketPath`: the rules checked at begin, the URLSession engine's
/// refusal, and the libcurl engine through in-process proxies and a Unix socket.
@Suite("Proxies and Unix sockets")
struct ProxyAndSocketTests {
  static let secret = "s3cret-pw"

  // MARK: Pure rules

  @Test(
    arguments: [
      (ProxySettings(url: URL(string: "http://proxy:3128")), nil),
      (ProxySettings(url: URL(string: "HTTPS://proxy:3128")), nil),
      (ProxySettings(url: URL(string: "socks5://proxy:1080")), nil),
      (ProxySettings(url: URL(string: "socks5h://proxy")), nil),
      (ProxySettings(url: nil, bypassHosts: ["*"]), nil),
      (ProxySettings(url: URL(string: "ftp://u:\(secret)@proxy:21")), "unknown proxy scheme \"ftp\""),
      (ProxySettings(url: URL(string: "socks4://proxy:1080")), "unknown proxy scheme \"socks4\""),
      (ProxySettings(url: URL(string: "http:///nohost")), "names no host"),
      (ProxySettings(url: URL(string: "http://proxy"), bypassHosts: ["a.com,b.com"]), "holds a comma"),
      (ProxySettings(url: URL(string: "http://proxy"), bypassHosts: [""]), "is empty"),
    ] as [(ProxySettings, String?)])
  func proxyProblems(settings: ProxySettings, expected: String?) {
    let problem = settings.problem
    #expect(
      expected.map { problem?.contains($0) == true } ?? (problem == nil), "\(String(describing: problem))")
    #expect(problem?.contains(Self.secret) != true)
  }

  @Test func theCredentialIsNeverShown() {
    let settings = ProxySettings(
      url: URL(string: "http://alice:\(Self.secret)@proxy.internal:3128"), bypassHosts: [".internal"])
    let withCredential = ProxySettings(
      url: URL(string: "socks5h://proxy:1080"),
      credential: URLCredential(user: "bob", password: Self.secret, persistence: .none))
    for text in [
      settings.description, settings.debugDescription, String(reflecting: settings), "\(settings)",
      withCredential.description, String(reflecting: withCredential),
    ] {
      #expect(!text.contains(Self.secret), "\(text)")
    }
    var dumped = ""
    dump(withCredential, to: &dumped)
    #expect(!dumped.contains(Self.secret), "\(dumped)")
    #expect(settings.description.contains("http://proxy.internal:3128"))
    #expect(settings.description.contains("credential set"))
    #expect(settings.userAndPassword?.user == "alice" && settings.userAndPassword?.password == Self.secret)
    #expect(withCredential.userAndPassword?.user == "bob")
    #expect(ProxySettings.direct.url == nil && ProxySettings.direct.description.contains("direct"))
    // Percent-encoded user info is decoded.
    let encoded = ProxySettings(url: URL(string: "http://a%40b:p%3Aw@proxy:1"))
    #expect(encoded.userAndPassword?.user == "a@b" && encoded.userAndPassword?.password == "p:w")
  }

  @Test func socketPathRules() throws {
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let regular = folder.appendingPathComponent("plain")
    try Data("x".utf8).write(to: regular)
    #expect(TransportRoute.socketPathProblem("")?.contains("empty") == true)
    let long = "/tmp/" + String(repeating: "s", count: 103)
    #expect(long.utf8.count == 108)
    #expect(TransportRoute.socketPathProblem(long)?.contains(long) == true)
    #expect(TransportRoute.socketPathProblem(String(long.dropLast())) == nil)
    #expect(TransportRoute.socketPathProblem(regular.path)?.contains("not a socket") == true)
    #expect(TransportRoute.socketPathProblem(folder.appendingPathComponent("missing").path) == nil)
  }

  @Test(arguments: [
    ("User was rejected by the SOCKS5 server (1 1).", URLError.Code.userAuthenticationRequired),
    ("Unable to receive initial SOCKS5 response.", .cannotConnectToHost),
    ("Can't complete SOCKS5 connection to localhost. (5)", .cannotConnectToHost),
  ])
  func proxyHandshakeFailures(message: String, code: URLError.Code) {
    #expect(CurlErrorMapping.errorCode(code: 97, curlMessage: message) == code)
  }

  // MARK: URLSession engine

  /// Any proxy setting (`.direct` included) and any socket are refused at begin, before any byte.
  @Test func theURLSessionEngineRefusesThem() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let changes: [(String, (SessionFetcher) -> Void)] = [
      ("proxySettings", { $0.proxySettings = .direct }),
      ("proxySettings", { $0.proxySettings = ProxySettings(url: URL(string: "http://127.0.0.1:9")) }),
      ("unixSocketPath", { $0.unixSocketPath = "/var/run/docker.sock" }),
    ]
    for (name, change) in changes {
      let fetcher = server.fetcher("/text?value=x")
      fetcher.engine = .urlSession
      change(fetcher)
      let result = await fetcher.fetchResult()
      guard case .unsupportedByEngine(let text)? = result.fetcherError else {
        Issue.record("\(name): \(String(describing: result.error))")
        continue
      }
      #expect(text.contains(name) && text.contains("libcurl"), "\(text)")
    }
    #expect(server.requestCount(path: "/text") == 0)
  }
}

/// The libcurl engine through the in-process relays.
@Suite(
  "Proxies and Unix sockets on the libcurl engine",
  .enabled(if: FetcherEngine.libcurl.isAvailable, "needs libcurl"))
struct ProxyAndSocketWireTests {
  static let secret = ProxyAndSocketTests.secret

  func fetcher(_ url: URL, timeout: TimeInterval = 20) -> SessionFetcher {
    var request = URLRequest(url: url)
    request.timeoutInterval = timeout
    let fetcher = SessionFetcher(request: request)
    fetcher.engine = .libcurl
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.cookieStorage = SessionCookieStorage()
    return fetcher
  }

  func proxy(_ scheme: String, _ port: UInt16, login: String? = nil) -> URL {
    URL(string: "\(scheme)://\(login.map { $0 + "@" } ?? "")127.0.0.1:\(port)")!
  }

  @Test func plainHTTPGoesThroughAnHTTPProxy() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let relay = try RelayServer(.httpProxy(login: nil))
    defer { relay.stop() }
    let fetcher = fetcher(server.url("/text?value=proxied"))
    fetcher.proxySettings = ProxySettings(url: proxy("http", relay.port))
    let result = await fetcher.fetchResult()
    #expect(result.data == Data("proxied".utf8), "\(String(describing: result.error))")
    #expect(relay.log == ["GET \(server.url("/text?value=proxied").absoluteString)"])
  }

  /// Basic `Proxy-Authorization` from the credential or the URL; a wrong one ends at once with the
  /// proxy's 407, asked once.
  @Test func anHTTPProxysCredential() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let relay = try RelayServer(.httpProxy(login: "alice:\(Self.secret)"))
    defer { relay.stop() }
    let byCredential = fetcher(server.url("/text?value=a"))
    byCredential.proxySettings = ProxySettings(
      url: proxy("http", relay.port),
      credential: URLCredential(user: "alice", password: Self.secret, persistence: .none))
    #expect(await byCredential.fetchResult().data == Data("a".utf8))
    let byURL = fetcher(server.url("/text?value=b"))
    byURL.proxySettings = ProxySettings(url: proxy("http", relay.port, login: "alice:\(Self.secret)"))
    #expect(await byURL.fetchResult().data == Data("b".utf8))
    #expect(relay.log.count == 2 && !relay.log.contains("407"), "\(relay.log)")

    for url in [server.url("/text?value=c"), URL(string: "https://127.0.0.1:\(server.port)/text")!] {
      let wrong = fetcher(url)
      wrong.isRetryEnabled = true
      wrong.minRetryInterval = 0.05
      wrong.proxySettings = ProxySettings(url: proxy("http", relay.port, login: "alice:wrong"))
      let result = await wrong.fetchResult()
      #expect(result.fetcherError?.statusCode == 407, "\(url): \(String(describing: result.error))")
      #expect(wrong.timing.retryCount == 0)
    }
    #expect(relay.log.filter { $0 == "407" }.count == 2, "\(relay.log)")
    #expect(server.requestCount(path: "/text") == 2)
  }

  /// Without a credential in the settings, the fetcher's `proxyCredential` answers the 407 of the
  /// fetch's own proxy (its protection space names that proxy, not the environment's).
  @Test func proxyCredentialAnswersTheFetchsOwnProxy() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let relay = try RelayServer(.httpProxy(login: "carol:\(Self.secret)"))
    defer { relay.stop() }
    let fetcher = fetcher(server.url("/text?value=p"))
    fetcher.proxySettings = ProxySettings(url: proxy("http", relay.port))
    fetcher.proxyCredential = URLCredential(user: "carol", password: Self.secret, persistence: .none)
    let result = await fetcher.fetchResult()
    #expect(result.data == Data("p".utf8), "\(String(describing: result.error))")
    #expect(relay.log == ["407", "GET \(server.url("/text?value=p").absoluteString)"], "\(relay.log)")
  }

  /// https goes through the proxy by CONNECT; a proxy answering CONNECT with 200 and then garbage
  /// fails the handshake promptly.
  @Test(.enabled(if: TLSFixtures.isAvailable, "needs openssl"))
  func httpsGoesThroughByConnect() async throws {
    let fixtures = try await TLSFixtures.make()
    let tlsServer = try await TLSFixtures.Server.start(fixtures, certificate: "server")
    defer { tlsServer.stop() }
    let relay = try RelayServer(.httpProxy(login: nil))
    defer { relay.stop() }
    let fetcher = fetcher(tlsServer.url())
    fetcher.tlsSettings.additionalTrustRoots = [fixtures.file("ca.pem")]
    fetcher.proxySettings = ProxySettings(url: proxy("http", relay.port))
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(fetcher.statusCode == 200)
    #expect(relay.log == ["CONNECT 127.0.0.1:\(tlsServer.port)"])
  }

  @Test func aTunnelAnsweringGarbageFailsPromptly() async throws {
    let liar = try HostileServer { _ in
      .bytesThenStall(Data("HTTP/1.1 200 Connection established\r\n\r\nthis is not TLS at all\r\n".utf8))
    }
    defer { liar.stop() }
    let fetcher = fetcher(URL(string: "https://127.0.0.1:9/x")!, timeout: 10)
    fetcher.proxySettings = ProxySettings(url: liar.baseURL)
    let result = await fetcher.fetchResult(timeout: 30)
    #expect(result.urlError != nil && !(result.error is FetchTimeout), "\(String(describing: result.error))")
    #expect(result.urlError?.code != .timedOut)
    #expect(String(decoding: liar.receivedBytes, as: UTF8.self).hasPrefix("CONNECT 127.0.0.1:9 "))
  }

  @Test func socks5WithALogin() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let relay = try RelayServer(.socks5(login: (user: "bob", password: Self.secret)))
    defer { relay.stop() }
    let credential = URLCredential(user: "bob", password: Self.secret, persistence: .none)
    // socks5: the name is resolved here, the proxy gets the address.
    let local = fetcher(URL(string: "http://localhost:\(server.port)/text?value=s")!)
    local.proxySettings = ProxySettings(url: proxy("socks5", relay.port), credential: credential)
    #expect(await local.fetchResult().data == Data("s".utf8))
    // socks5h: the proxy resolves the name.
    let remote = fetcher(URL(string: "http://localhost:\(server.port)/text?value=h")!)
    remote.proxySettings = ProxySettings(url: proxy("socks5h", relay.port), credential: credential)
    #expect(await remote.fetchResult().data == Data("h".utf8))
    let logged = relay.log
    #expect(logged.count == 2, "\(logged)")
    #expect(logged.first.map { $0 == "socks 127.0.0.1:\(server.port)" || $0.hasPrefix("socks ::1") } == true)
    #expect(logged.last == "socks localhost:\(server.port)")

    let wrong = fetcher(server.url("/text?value=w"))
    wrong.proxySettings = ProxySettings(url: proxy("socks5", relay.port, login: "bob:wrong"))
    let result = await wrong.fetchResult()
    #expect(result.urlError?.code == .userAuthenticationRequired, "\(String(describing: result.error))")
    #expect(relay.log.last == "socks login rejected")
    #expect(!String(describing: result.error).contains("wrong"))
  }

  /// A SOCKS5 session the proxy admitted by one login is not reused by a fetch with another (libcurl
  /// matches a pooled SOCKS connection by its login; a CONNECT tunnel it does not, which the interop
  /// suite shows with squid and nginx, a server that keeps its connections).
  @Test func aSOCKSSessionIsNotReusedByAnotherLogin() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let relay = try RelayServer(.socks5(login: (user: "dave", password: Self.secret)))
    defer { relay.stop() }
    let right = fetcher(server.url("/text?value=r"))
    right.proxySettings = ProxySettings(url: proxy("socks5", relay.port, login: "dave:\(Self.secret)"))
    #expect(await right.fetchResult().data == Data("r".utf8))
    let wrong = fetcher(server.url("/text?value=w"))
    wrong.proxySettings = ProxySettings(url: proxy("socks5", relay.port, login: "dave:wrong"))
    let result = await wrong.fetchResult()
    #expect(result.urlError?.code == .userAuthenticationRequired, "\(String(describing: result.error))")
    #expect(relay.log.last == "socks login rejected", "\(relay.log)")
    #expect(server.requestCount(path: "/text") == 1)
  }

  @Test func aSOCKSServerThatClosesTheHandshake() async throws {
    let relay = try RelayServer(.socks5(login: nil, closeAfterGreeting: true))
    defer { relay.stop() }
    let fetcher = fetcher(URL(string: "http://127.0.0.1:9/x")!, timeout: 10)
    fetcher.proxySettings = ProxySettings(url: proxy("socks5", relay.port))
    let result = await fetcher.fetchResult(timeout: 30)
    // Not the request's timeout: the closed handshake itself ends the fetch (no wall-clock bound).
    #expect(result.urlError?.code == .cannotConnectToHost, "\(String(describing: result.error))")
    #expect(relay.log == ["socks closed"])
  }

  /// An unreachable proxy cannot connect (and is retried like any connection failure); hosts on the
  /// bypass list go direct.
  @Test func bypassAndAnUnreachableProxy() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let deadProxy = URL(string: "http://127.0.0.1:\(try closedPort())")!
    let unreachable = fetcher(server.url("/text?value=x"))
    unreachable.proxySettings = ProxySettings(url: deadProxy)
    unreachable.isRetryEnabled = true
    unreachable.minRetryInterval = 0.05
    unreachable.maxRetryInterval = 2
    let failed = await unreachable.fetchResult()
    #expect(failed.urlError?.code == .cannotConnectToHost, "\(String(describing: failed.error))")
    #expect(unreachable.timing.retryCount > 0)
    #expect(server.requestCount(path: "/text") == 0)

    var bypasses = [["127.0.0.1"], ["*"], ["example.com", "127.0.0.1"]]
    if CurlLibrary.versionNumber >= 0x07_56_00 { bypasses.append(["127.0.0.0/8"]) }
    for bypass in bypasses {
      let direct = fetcher(server.url("/text?value=d"))
      direct.proxySettings = ProxySettings(url: deadProxy, bypassHosts: bypass)
      let result = await direct.fetchResult()
      #expect(result.data == Data("d".utf8), "\(bypass): \(String(describing: result.error))")
    }
    // A bypass entry for another host leaves the proxy in the way.
    let other = fetcher(server.url("/text?value=o"))
    other.proxySettings = ProxySettings(url: deadProxy, bypassHosts: ["example.com", ".internal"])
    #expect(await other.fetchResult().urlError?.code == .cannotConnectToHost)
    #expect(server.requestCount(path: "/text") == bypasses.count)
  }

  @Test func anUnknownSchemeIsRefusedAtBegin() async throws {
    let fetcher = fetcher(URL(string: "http://127.0.0.1:9/x")!)
    fetcher.proxySettings = ProxySettings(url: URL(string: "gopher://u:\(Self.secret)@127.0.0.1:70"))
    let result = await fetcher.fetchResult()
    guard case .invalidConfiguration(let text)? = result.fetcherError else {
      Issue.record("\(String(describing: result.error))")
      return
    }
    #expect(text.contains("gopher") && !text.contains(Self.secret), "\(text)")
  }

  // MARK: Unix sockets

  @Test func aFetchOverAUnixSocket() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("api.sock").path
    let relay = try RelayServer(.unixForward(path: path, port: server.port))
    defer { relay.stop() }
    // Any host: the URL gives the Host header and the path, the socket the connection; http over
    // a socket counts as local.
    let fetcher = fetcher(URL(string: "http://docker.invalid/text?value=u")!)
    fetcher.unixSocketPath = path
    let result = await fetcher.fetchResult()
    #expect(result.data == Data("u".utf8), "\(String(describing: result.error))")
    #expect(relay.log == ["unix"])
    let host = server.requests(path: "/text").first?.headers.first { $0.name.lowercased() == "host" }?.value
    #expect(host == "docker.invalid")

    // Without allowLocalhostRequest, plain http is refused as anywhere else.
    let refused = self.fetcher(URL(string: "http://docker.invalid/text?value=u")!)
    refused.allowLocalhostRequest = false
    refused.unixSocketPath = path
    guard case .insecureRequest? = await refused.fetchResult().fetcherError else {
      Issue.record("http over a socket without allowLocalhostRequest was not refused")
      return
    }
  }

  @Test func badSocketPaths() async throws {
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let regular = folder.appendingPathComponent("file")
    try Data("x".utf8).write(to: regular)
    let missing = fetcher(URL(string: "http://localhost/x")!)
    missing.unixSocketPath = folder.appendingPathComponent("missing.sock").path
    #expect(await missing.fetchResult().urlError?.code == .cannotConnectToHost)

    let long = "/tmp/" + String(repeating: "l", count: 120)
    for (path, expected) in [(regular.path, "not a socket"), (long, "longer than")] {
      let fetcher = fetcher(URL(string: "http://localhost/x")!)
      fetcher.unixSocketPath = path
      guard case .invalidConfiguration(let text)? = await fetcher.fetchResult().fetcherError else {
        Issue.record("\(path) was not refused")
        continue
      }
      #expect(text.contains(path) && text.contains(expected), "\(text)")
    }
  }
}
