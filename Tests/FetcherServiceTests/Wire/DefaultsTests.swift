import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("Defaults, user agent and test blocks")
struct DefaultsTests {
  @Test func serviceDefaultValues() {
    let service = FetcherService()
    #expect(service.maxRunningFetchersPerHost == 10)
    #expect(service.reuseSession)
    #expect(service.unusedSessionTimeout == 60)
    #expect(service.etagCacheCapacity == 15 * 1024 * 1024)
    #expect(!service.shouldRememberETags && !service.shouldCacheETaggedData)
    #expect(!service.isEarlyRetryEnabled)
    #expect(service.userAgent == nil)
    #expect(service.postsNotifications)
    let standalone = SessionFetcher(request: URLRequest(url: URL(string: "http://example.com/")!))
    #expect(service.downloadWindowLength == standalone.downloadWindowLength)
    #expect(service.callbackQueue.label == DispatchQueue.main.label)
    #expect(!service.isRetryEnabled && !service.allowLocalhostRequest)
    #expect(service.numberOfFetchers == 0)
  }

  #if canImport(FoundationNetworking)
    /// A service's window reaches the wire: 1 MiB windows for 2.5 MiB are three Range requests;
    /// nil is one request without a Range.
    @Test(arguments: [(Int64(1 << 20), 3), (nil, 1)] as [(Int64?, Int)])
    func downloadWindowsFollowTheService(window: Int64?, requests: Int) async throws {
      let server = try TestServer()
      defer { server.stop() }
      let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
      defer { try? FileManager.default.removeItem(at: folder) }
      let service = makeService()
      service.engine = .urlSession  // the URLSession engine's Range windows
      service.downloadWindowLength = window
      let size = (5 << 20) / 2
      let fetcher = service.fetcher(url: server.url("/bytes/\(size)"))
      fetcher.destinationFileURL = folder.appendingPathComponent("file.bin")
      #expect(await fetcher.fetchResult().error == nil)
      #expect(try Data(contentsOf: folder.appendingPathComponent("file.bin")).count == size)
      let ranges = server.requests(path: "/bytes/\(size)").map { $0.header("Range") }
      #expect(ranges.count == requests)
      #expect(ranges.allSatisfy { ($0 != nil) == (window != nil) })
    }
  #endif

  @Test func anInvalidURLStringStillGivesAFetcherThatFails() async {
    let service = makeService()
    let result = await service.fetcher(urlString: "http://").fetchResult()
    #expect(result.fetcherError == .invalidURL("http://"))
    #expect(service.numberOfFetchers == 0)
  }

  /// The original's testFetcherShouldUseStandardUserAgent.
  @Test func standardUserAgentIsSent() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    #expect(await service.fetcher(url: server.url("/headers")).fetchResult().error == nil)
    let agent = try #require(server.requests(path: "/headers").first?.header("User-Agent"))
    #expect(agent == FetcherService.standardUserAgent)
    #expect(agent.wholeMatch(of: try Regex("^.+?/[0-9.a-z]+ .+?/[0-9.]+$")) != nil, "\(agent)")
  }

  /// The service's agent is sent.
  @Test func serviceUserAgentIsSent() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.userAgent = "MyApp/2.0"
    #expect(await service.fetcher(url: server.url("/headers")).fetchResult().error == nil)
    let request = try #require(server.requests(path: "/headers").first)
    #expect(request.header("User-Agent") == "MyApp/2.0")
  }

  /// An agent that would start another header line fails the fetch, naming the header, with
  /// nothing sent: for a fetcher made from a URL (the agent is set at once) and one made from a
  /// request (it is added before each attempt).
  @Test(arguments: ["MyApp/2.0\r\nX-Injected: 1", "MyApp/2.0\u{0B}", "MyApp\u{0}"])
  func serviceUserAgentWithAControlIsRefused(agent: String) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.userAgent = agent
    let fromURL = service.fetcher(url: server.url("/headers"))
    let fromRequest = service.fetcher(request: URLRequest(url: server.url("/headers")))
    for fetcher in [fromURL, fromRequest] {
      let recorder = NotificationRecorder([fetcher])
      let result = await fetcher.fetchResult()
      guard case .invalidConfiguration(let text)? = result.error as? SessionFetcherError else {
        Issue.record("not refused: \(String(describing: result.error))")
        continue
      }
      #expect(text.contains("\"User-Agent\""), "\(text)")
      await drain(fetcher.callbackQueue)
      #expect(recorder.started == recorder.stopped)
    }
    #expect(server.requests(path: "/headers").isEmpty)
  }

  /// The agent the service adds before an attempt (a fetcher made from a request) is checked before
  /// Started is posted: a bad one posts nothing and sends nothing; a good one is sent.
  @Test func anAgentAddedBeforeTheAttemptIsCheckedBeforeStarted() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.userAgent = "MyApp/2.0\r\nX-Injected: 1"
    let refused = service.fetcher(request: URLRequest(url: server.url("/headers")))
    let recorder = NotificationRecorder([refused])
    let result = await refused.fetchResult()
    guard case .invalidConfiguration(let text)? = result.error as? SessionFetcherError else {
      Issue.record("not refused: \(String(describing: result.error))")
      return
    }
    #expect(text.contains("\"User-Agent\""), "\(text)")
    await drain(refused.callbackQueue)
    #expect(recorder.started == 0)
    #expect(recorder.stopped == 0)
    #expect(server.requests(path: "/headers").isEmpty)

    service.userAgent = "MyApp/2.1"
    let sent = service.fetcher(request: URLRequest(url: server.url("/headers")))
    #expect(await sent.fetchResult().error == nil)
    #expect(server.requests(path: "/headers").map { $0.header("User-Agent") } == ["MyApp/2.1"])
  }

  /// The original's testUserAgentFromRequest.
  @Test func theRequestsOwnUserAgentWins() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.userAgent = "MyApp/2.0"
    var request = URLRequest(url: server.url("/headers"))
    request.setValue("Mine/1.0", forHTTPHeaderField: "User-Agent")
    #expect(await service.fetcher(request: request).fetchResult().error == nil)
    let fetcher = service.fetcher(url: server.url("/headers?second=1"))
    fetcher.setRequestValue("Set/3.0", forHTTPHeaderField: "User-Agent")
    #expect(await fetcher.fetchResult().error == nil)
    #expect(server.requests(path: "/headers").map { $0.header("User-Agent") } == ["Mine/1.0", "Set/3.0"])
  }

  /// The original's testUserAgentFromSessionConfiguration.
  @Test func theSessionConfigurationsUserAgentWins() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpAdditionalHeaders = ["User-Agent": "FromConfig/1.0"]
    service.configuration = configuration
    #expect(await service.fetcher(url: server.url("/headers")).fetchResult().error == nil)
    #expect(server.requests(path: "/headers").first?.header("User-Agent") == "FromConfig/1.0")
  }

  /// The original's testFetcherServiceTestBlock.
  @Test func testBlockThroughTheService() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.testBlock = { fetcher, respond in
      let url = fetcher.request?.url ?? URL(string: "http://example.invalid")!
      let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: nil)
      respond(response, Data("stubbed \(url.path)".utf8), nil)
    }
    let fetcher = service.fetcher(url: server.url("/text?value=real"))
    let recorder = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == Data("stubbed /text".utf8))
    #expect(fetcher.statusCode == 200)
    #expect(server.requests.isEmpty)
    await drain(service.callbackQueue)
    #expect(recorder.started == 1 && recorder.stopped == 1)
    // A fetcher's own test block may pass through to the network.
    let passThrough = service.fetcher(url: server.url("/text?value=real"))
    passThrough.testBlock = nil
    #expect(await passThrough.fetchResult().data == Data("real".utf8))
  }

  /// The original's testMockCreationMethod.
  @Test func mockFetcherService() async throws {
    let success = FetcherService.mockFetcherService(fakedData: Data("faked".utf8), fakedError: nil)
    success.callbackQueue = DispatchQueue(label: "test.mock")
    let fetcher = success.fetcher(urlString: "http://example.invalid/x")
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == Data("faked".utf8))
    #expect(fetcher.statusCode == 200)

    let failure = FetcherService.mockFetcherService(
      fakedData: nil, fakedError: URLError(.notConnectedToInternet))
    failure.callbackQueue = DispatchQueue(label: "test.mock")
    let failed = await failure.fetcher(urlString: "http://example.invalid/y").fetchResult()
    #expect((failed.error as? URLError)?.code == .notConnectedToInternet)
  }
}
