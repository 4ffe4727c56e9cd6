import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// What each engine puts on the wire for a request's own framing: a body-less POST, PUT or PATCH
/// says `Content-Length: 0` (servers answer 411 to a POST without a length), a body the caller gave
/// no type goes without one (libcurl's POST mode would type it `application/x-www-form-urlencoded`),
/// and a request's own `Connection: close` ends its connection (RFC 9112 §9.6).
@Suite("Request framing on each engine")
struct RequestFramingTests {
  static var engines: [FetcherEngine] {
    FetcherEngine.libcurl.isAvailable ? [.urlSession, .libcurl] : [.urlSession]
  }

  static func run(
    _ server: TestServer, _ path: String, engine: FetcherEngine, configure: (SessionFetcher) -> Void
  ) async -> RecordedRequest? {
    let fetcher = server.fetcher(path)
    fetcher.engine = engine
    configure(fetcher)
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.error == nil, "\(engine) \(path): \(String(describing: result.error))")
    return server.requests(path: path).last
  }

  @Test(arguments: engines, ["POST", "PUT", "PATCH"])
  func aBodylessMethodThatDefinesABodySaysItsLengthIsZero(engine: FetcherEngine, method: String) async throws
  {
    let server = try TestServer()
    defer { server.stop() }
    let recorded = await Self.run(server, "/echo", engine: engine) { fetcher in
      fetcher.request?.httpMethod = method
    }
    let request = try #require(recorded)
    #expect(request.method == method)
    #expect(request.header("Content-Length") == "0", "\(engine) \(method): \(request.headers)")
    #expect(request.header("Transfer-Encoding") == nil)
    #expect(request.header("Content-Type") == nil, "\(engine) \(method): \(request.headers)")
  }

  @Test(arguments: engines)
  func aBodyWithoutATypeIsSentAsGiven(engine: FetcherEngine) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let recorded = await Self.run(server, "/echo", engine: engine) { fetcher in
      fetcher.bodyData = Data("raw bytes".utf8)
    }
    let request = try #require(recorded)
    #expect(request.method == "POST")
    #expect(request.body == Data("raw bytes".utf8))
    #expect(request.header("Content-Type") == nil, "\(engine): \(request.headers)")
    // A type the caller gave is sent as given on both.
    let typed = await Self.run(server, "/echo?typed", engine: engine) { fetcher in
      fetcher.bodyData = Data("{}".utf8)
      fetcher.request?.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    #expect(typed?.header("Content-Type") == "application/json")
  }

  /// Two GETs one after the other through a service of the test's own, to a server that keeps
  /// its connections open even when the client asks to close (`?ignoreConnectionClose`): kept
  /// alive, they share a connection; the first with its own `Connection: close` makes the second
  /// open a new one, because the client ends the connection itself. The libcurl engine keeps its
  /// connection for the next request every time; FoundationNetworking may open another one on its
  /// own (other tests' fetches share its work queue), so there only the closing case is checked.
  @Test(arguments: engines)
  func aRequestsOwnConnectionCloseEndsItsConnection(engine: FetcherEngine) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = FetcherService()
    service.engine = engine
    service.allowLocalhostRequest = true
    service.callbackQueue = makeCallbackQueue()
    func pair(closing: Bool) async -> [Int] {
      server.resetRecords()
      for index in 0..<2 {
        let fetcher = service.fetcher(url: server.url("/bytes/10?ignoreConnectionClose&\(closing)-\(index)"))
        if closing && index == 0 { fetcher.request?.setValue("close", forHTTPHeaderField: "Connection") }
        let result = await fetcher.fetchResult()
        #expect(result.error == nil, "\(engine): \(String(describing: result.error))")
      }
      return server.requests.map(\.connectionID)
    }
    let kept = await pair(closing: false)
    let closed = await pair(closing: true)
    #expect(kept.count == 2 && closed.count == 2)
    if engine == .libcurl {
      #expect(kept.count == 2 && kept[0] == kept[1], "kept-alive requests on connections \(kept)")
    }
    #expect(closed.count == 2 && closed[0] != closed[1], "\(engine): Connection: close then \(closed)")
  }
}

/// Schemes and hosts are case-insensitive (RFC 3986 §3.1, §3.2.2): an upper-case one reaches the
/// server on both engines (FoundationNetworking refused `HTTP://` as an unsupported URL).
@Suite("Upper-case schemes and hosts on each engine")
struct URLCaseTests {
  @Test(arguments: RequestFramingTests.engines, ["HTTP://127.0.0.1", "Http://LOCALHOST"])
  func anUpperCaseSchemeOrHostIsFetched(engine: FetcherEngine, prefix: String) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let url = try #require(URL(string: "\(prefix):\(server.port)/bytes/10?Case=Kept"))
    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.engine = engine
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(result.error == nil, "\(engine) \(url): \(String(describing: result.error))")
    #expect(result.data?.count == 10)
    // The path and query go as written.
    #expect(server.requests(path: "/bytes/10").first?.target == "/bytes/10?Case=Kept")
  }
}
