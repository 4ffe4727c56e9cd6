import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An engine that cannot run: it makes no task, and records whether it was let go of.
private final class UnavailableTestEngineSession: EngineSession, @unchecked Sendable {
  // `@unchecked Sendable`: `state` is behind its lock.
  private let state = Locked((invalidated: false, tasksAsked: 0))
  var unavailableReason: String? { "the test's engine is unavailable" }
  var pausing: StreamPausing.Method { .suspendTask }
  var enforcesRequestTimeout: Bool { false }
  var tlsSettingsLimitation: String? { nil }
  var routeLimitation: String? { nil }
  var sharesOneSessionAmongStreams: Bool { true }
  func sendsSizedStreams(for request: URLRequest) -> Bool { false }
  func makeTask(
    request: URLRequest, body: EngineBody, tls: TLSSettings, route: TransportRoute,
    handler: any SessionTaskHandler
  ) -> (any EngineTask)? {
    state.withLock { $0.tasksAsked += 1 }
    return nil
  }
  var isInvalidated: Bool { state.withLock { $0.invalidated } }
  var tasksAsked: Int { state.withLock { $0.tasksAsked } }
  func finishTasksAndInvalidate() { state.withLock { $0.invalidated = true } }
  func invalidateAndCancel() { state.withLock { $0.invalidated = true } }
  func invalidateAndCancelWithoutWaiting() { state.withLock { $0.invalidated = true } }
}

/// The engine choice itself: the environment default, availability, and what each engine tells.
@Suite("Fetcher engines")
struct FetcherEngineTests {
  @Test(
    arguments: [
      (nil, nil), ("", nil), ("libcurl", .libcurl), ("LIBCURL", .libcurl), (" curl ", .libcurl),
      ("urlSession", .urlSession), ("urlsession", .urlSession), ("url-session", .urlSession),
      ("nghttp2", nil), ("libcurl2", nil),
    ] as [(String?, FetcherEngine?)])
  func environmentValues(value: String?, engine: FetcherEngine?) {
    #expect(FetcherEngine.parse(value) == engine)
  }

  /// A name read from a command line or a file: the same words as the environment variable, and
  /// each engine's `description` gives it back.
  @Test(
    arguments: [
      ("libcurl", .libcurl), ("Curl", .libcurl), ("urlSession", .urlSession), ("url-session", .urlSession),
      ("", nil), ("ftp", nil),
    ] as [(String, FetcherEngine?)])
  func aNameGivesItsEngine(name: String, engine: FetcherEngine?) {
    #expect(FetcherEngine(name) == engine)
    for each in [FetcherEngine.urlSession, .libcurl] { #expect(FetcherEngine(each.description) == each) }
  }

  @Test func theDefaultFollowsTheEnvironment() {
    let value = ProcessInfo.processInfo.environment["SESSIONFETCHER_ENGINE"]
    #expect(FetcherEngine.default == (FetcherEngine.parse(value) ?? .urlSession))
    #expect(SessionFetcher.fetcher(urlString: "https://example.invalid/").engine == FetcherEngine.default)
  }

  /// A fetch whose engine cannot run fails at begin with the engine's reason, asking it for no
  /// task, whether its session is its own (made from a configuration of its own, then let go of)
  /// or shared (left to its owner).
  @Test(arguments: [true, false])
  func anUnavailableEngineSessionFailsTheFetchAtBegin(ownConfiguration: Bool) async {
    let engine = UnavailableTestEngineSession()
    let fetcher = SessionFetcher.fetcher(urlString: "https://example.invalid/")
    fetcher.callbackQueue = DispatchQueue(label: "test.unavailable-engine")
    if ownConfiguration {
      fetcher.configuration = .ephemeral
      fetcher.engineSessions = { _ in engine }
    } else {
      let shared = SharedSession(configuration: nil, engineSessions: { _ in engine })
      fetcher.sessionProvider = { shared }
    }
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.fetcherError == .engineUnavailable("the test's engine is unavailable"))
    #expect(engine.tasksAsked == 0)
    #expect(engine.isInvalidated == ownConfiguration)
  }

  @Test func urlSessionIsAlwaysAvailable() {
    #expect(FetcherEngine.urlSession.isAvailable)
    #expect(FetcherEngine.urlSession.unavailableReason == nil)
    #expect("\(FetcherEngine.urlSession)" == "urlSession" && "\(FetcherEngine.libcurl)" == "libcurl")
  }

  #if LIBCURL_ENGINE
    /// The libcurl FoundationNetworking links is there on every Linux machine with Swift, and
    /// macOS ships one (`/usr/lib/libcurl.4.dylib`).
    @Test func libcurlIsAvailableOnLinuxAndMacOS() {
      #expect(FetcherEngine.libcurl.isAvailable, "\(FetcherEngine.libcurl.unavailableReason ?? "")")
    }
  #else
    /// iOS, tvOS, watchOS and visionOS ship no libcurl: the engine says so in one sentence.
    @Test func libcurlIsUnavailableWhereNoLibcurlShips() {
      let reason = FetcherEngine.libcurl.unavailableReason ?? ""
      #expect(reason.contains("iOS, tvOS, watchOS and visionOS") && !reason.contains("\n"))
    }
  #endif

  #if LIBCURL_ENGINE

    /// Without a loadable libcurl, a fetch on it fails at begin with the reason, before any
    /// traffic and without notifications; the URLSession engine is unaffected. In a process of its
    /// own: the library is loaded once per process.
    @Test func anUnavailableLibraryFailsTheFetchAtOnce() async throws {
      await #expect(processExitsWith: .success) {
        setenv("SESSIONFETCHER_LIBCURL_PATH", "/nonexistent/libcurl.so.4", 1)
        let server = try TestServer()
        defer { server.stop() }
        let reason = FetcherEngine.libcurl.unavailableReason ?? ""
        let fetcher = server.fetcher("/text?value=hello")
        fetcher.engine = .libcurl
        let started = Recorder<Bool>()
        let observer = NotificationCenter.default.addObserver(
          forName: .sessionFetcherStarted, object: fetcher, queue: nil
        ) { _ in started.append(true) }
        defer { NotificationCenter.default.removeObserver(observer) }
        let result = await fetcher.fetchResult()
        let other = server.fetcher("/text?value=hello")
        other.engine = .urlSession
        let fallback = await other.fetchResult()
        let failedAtOnce: Bool
        if case .engineUnavailable(let text)? = result.fetcherError {
          failedAtOnce = text == reason && text.contains("/nonexistent/libcurl.so.4")
        } else {
          failedAtOnce = false
        }
        let passed =
          !FetcherEngine.libcurl.isAvailable && failedAtOnce && started.values.isEmpty
          && server.requestCount(path: "/text") == 1 && fallback.data == Data("hello".utf8)
        exit(passed ? EXIT_SUCCESS : EXIT_FAILURE)
      }
    }

    /// The phases libcurl measured reach `timing`, and a second fetch reuses the connection.
    @Test func libcurlFetchesReportTransferMetrics() async throws {
      let server = try TestServer()
      defer { server.stop() }
      var metrics: [TransferMetrics] = []
      // A session of the test's own: the process-wide one's connection cache is shared with every
      // test running in parallel, which may close the idle connection between the two fetches.
      let session = SharedSession(configuration: nil, engine: .libcurl)
      defer { session.finishTasksAndInvalidate() }
      for _ in 0..<2 {
        let fetcher = server.fetcher("/bytes/5000")
        fetcher.sessionProvider = { session }
        let result = await fetcher.fetchResult()
        #expect(result.data?.count == 5000)
        if let measured = fetcher.timing.transferMetrics { metrics.append(measured) }
      }
      try #require(metrics.count == 2)
      #expect(metrics.allSatisfy { $0.httpVersion == "HTTP/1.1" && $0.remoteAddress == "127.0.0.1" })
      #expect(metrics.allSatisfy { $0.remotePort == Int(server.port) && $0.responseBytes >= 5000 })
      #expect(metrics.allSatisfy { ($0.firstByte ?? -1) >= 0 && $0.total >= ($0.firstByte ?? 0) })
      #expect(!metrics[0].isReusedConnection && metrics[0].connect != nil)
      #expect(metrics[1].isReusedConnection && metrics[1].connect == nil)
      #expect(Set(server.requests.map(\.connectionID)).count == 1)
    }

    /// A download to a file on libcurl is one request: backpressure needs no Range windows.
    @Test func libcurlDownloadsNeedNoRangeWindows() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let folder = try makeTemporaryFolder()
      defer { try? FileManager.default.removeItem(at: folder) }
      let destination = folder.appendingPathComponent("body.bin")
      let length = 3 * 1024 * 1024
      let fetcher = server.fetcher("/bytes/\(length)")
      fetcher.engine = .libcurl
      fetcher.downloadWindowLength = 1024 * 1024
      fetcher.destinationFileURL = destination
      let result = await fetcher.fetchResult(timeout: 30)
      #expect(result.error == nil)
      let written = try Data(contentsOf: destination)
      #expect(written == TestServer.patternBytes(count: length))
      let requests = server.requests(path: "/bytes/\(length)")
      #expect(requests.count == 1)
      #expect(requests.first?.header("Range") == nil)
    }
  #endif

  #if FOUNDATION_NETWORKING
    /// FoundationNetworking's URLSession measures nothing (Apple's gives `URLSessionTaskMetrics`,
    /// see `URLSessionMetricsMappingTests`).
    @Test func urlSessionFetchesHaveNoTransferMetricsOnFoundationNetworking() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let fetcher = server.fetcher("/bytes/10")
      fetcher.engine = .urlSession
      #expect(await fetcher.fetchResult().data?.count == 10)
      #expect(fetcher.timing.transferMetrics == nil)
    }
  #endif
}
