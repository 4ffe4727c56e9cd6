import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("StubResponse answers test blocks")
struct StubResponseTests {
  private func stubbedFetcher(_ testBlock: @escaping SessionFetcher.TestBlock) -> SessionFetcher {
    let fetcher = SessionFetcher.fetcher(urlString: "https://stub.example/items?id=1")
    fetcher.callbackQueue = DispatchQueue(label: "test.stub")
    fetcher.testBlock = testBlock
    return fetcher
  }

  @Test func json() async throws {
    let fetcher = stubbedFetcher(StubResponse.json(#"{"a":1}"#, headers: ["ETag": "\"v1\""]).testBlock)
    let result = try await fetcher.fetchResponse()
    #expect(result.data == Data(#"{"a":1}"#.utf8))
    #expect(result.statusCode == 200)
    #expect(result.response?.url == URL(string: "https://stub.example/items?id=1"))
    #expect(result.response?.value(forHTTPHeaderField: "Content-Type") == "application/json")
    #expect(result.response?.value(forHTTPHeaderField: "ETag") == "\"v1\"")
  }

  @Test func encodedJSONAndText() async throws {
    let encoded = try StubResponse.json(encoding: ["b": 2, "a": 1], status: 201)
    #expect(encoded.body == Data(#"{"a":1,"b":2}"#.utf8))
    #expect(encoded.status == 201)
    let text = try await stubbedFetcher(StubResponse.text("hello").testBlock).fetchResponse()
    #expect(text.data == Data("hello".utf8))
    #expect(text.response?.value(forHTTPHeaderField: "Content-Type") == "text/plain; charset=utf-8")
  }

  @Test func aStatusFailsTheFetchAsTheServerWould() async throws {
    let fetcher = stubbedFetcher(StubResponse.status(404, body: Data("gone".utf8)).testBlock)
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .status(code: 404, data: Data("gone".utf8)))
  }

  @Test func anErrorReachesTheFetchAsATransportError() async throws {
    let fetcher = stubbedFetcher(StubResponse.error(URLError(.notConnectedToInternet)).testBlock)
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .notConnectedToInternet)
    #expect(fetcher.response == nil)
  }

  @Test func aBlockAnswersEachRequestFromItsFetcher() async throws {
    let block = StubResponse.testBlock { fetcher in
      fetcher.request?.url?.path == "/items" ? .text("item") : .status(404)
    }
    #expect(try await stubbedFetcher(block).beginFetch() == Data("item".utf8))
    let other = SessionFetcher.fetcher(urlString: "https://stub.example/other")
    other.callbackQueue = DispatchQueue(label: "test.stub.other")
    other.testBlock = block
    #expect(await other.fetchResult().fetcherError?.statusCode == 404)
  }

  /// One `TestResponse` answers a server route and a test block alike.
  @Test func oneTestResponseAnswersTheServerAndTheTestBlock() async throws {
    let answer = TestResponse.json(#"{"ok":true}"#, status: 202).adding(header: "X-Kind", "shared")
    let server = try TestServer()
    defer { server.stop() }
    server.route("/shared") { _ in answer }
    let wire = SessionFetcher.fetcher(url: server.url("/shared"))
    wire.allowLocalhostRequest = true
    wire.callbackQueue = DispatchQueue(label: "test.stub.wire")
    let fromServer = try await wire.fetchResponse()
    let fromStub = try await stubbedFetcher(StubResponse(answer).testBlock).fetchResponse()
    for result in [fromServer, fromStub] {
      #expect(result.data == Data(#"{"ok":true}"#.utf8))
      #expect(result.statusCode == 202)
      #expect(result.response?.value(forHTTPHeaderField: "X-Kind") == "shared")
      #expect(result.response?.value(forHTTPHeaderField: "Content-Type") == "application/json")
    }
  }

  @Test(arguments: [
    (TestResponse.Fault.closeWithoutResponse, URLError.Code.networkConnectionLost),
    (.truncate(announcedLength: 10), .networkConnectionLost),
    (.reset(announcedLength: 10), .networkConnectionLost),
    (.stall(announcedLength: 10), .timedOut),
  ])
  func faultsBecomeTheErrorsAClientSees(fault: TestResponse.Fault, code: URLError.Code) {
    #expect(StubResponse(.fault(fault)).error?.code == code)
    #expect(StubResponse(.fault(fault)).httpResponse(for: URL(string: "https://x.example/")!) == nil)
  }
}
