import FetcherService
import FetcherTesting
import Foundation
import HTTPBinAPI
import HTTPTypes
import OpenAPIRuntime
import SessionFetcher
import SessionFetcherOpenAPI
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite("SessionFetcherTransport against the in-process server")
struct TransportTests {
  @Test("The generated client sends JSON and a header and decodes the JSON answer")
  func generatedClientJSONRoundTrip() async throws {
    let server = try TestServer()
    defer { server.stop() }
    server.route("/anything") { request in
      let greeting = (try? JSONSerialization.jsonObject(with: request.body)) ?? [:]
      let body: [String: Any] = [
        "method": request.method, "json": greeting,
        "headers": ["Content-Type": request.header("Content-Type") ?? ""],
      ]
      return TestResponse(
        headers: [("Content-Type", "application/json")],
        body: try! JSONSerialization.data(withJSONObject: body))
    }
    let client = Client(
      serverURL: server.baseURL, transport: SessionFetcherTransport(service: makeTestService()))
    let output = try await client.echoJSON(body: .json(.init(message: "hello", count: 3)))
    let json = try output.ok.body.json
    #expect(json.method == "POST")
    #expect(json.json == .init(message: "hello", count: 3))
    #expect(json.headers.additionalProperties["Content-Type"] == "application/json; charset=utf-8")
    let recorded = try #require(server.requests(path: "/anything").first)
    #expect(recorded.wasChunked == false)  // small known-length body: sent with Content-Length

    let headers = try await client.getHeaders(headers: .init(X_hyphen_Greeting: "hi-there"))
    let echoed = try headers.ok.body.json.headers
    #expect(server.requests(path: "/headers").first?.header("X-Greeting") == "hi-there")
    #expect(echoed.additionalProperties.isEmpty == false)
  }

  @Test("Every HTTP status is a response for the client to match, after the service's retries")
  func statusesAreResponses() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let attempts = Box(0)
    server.route("/status/503") { _ in
      let attempt = attempts.mutate { count -> Int in
        count += 1
        return count
      }
      return attempt == 1 ? TestResponse.status(503) : .status(200)
    }
    let client = Client(
      serverURL: server.baseURL, transport: SessionFetcherTransport(service: makeTestService(retries: true)))
    let notFound = try await client.getStatus(path: .init(code: 404))
    guard case .notFound = notFound else {
      Issue.record("expected 404, got \(notFound)")
      return
    }
    let teapot = try await client.getStatus(path: .init(code: 418))
    guard case .default(let code, _) = teapot else {
      Issue.record("expected the default response, got \(teapot)")
      return
    }
    #expect(code == 418)
    // The service retried the 503 (GET, retryable) and the client saw the final 200.
    let retried = try await client.getStatus(path: .init(code: 503))
    guard case .ok = retried else {
      Issue.record("expected 200, got \(retried)")
      return
    }
    #expect(server.requestCount(path: "/status/503") == 2)
  }

  @Test("A single-pass streamed request body is never replayed: the retry the service would do is refused")
  func singlePassBodyIsNotReplayed() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let attempts = Box(0)
    server.route("/submit") { _ in
      let attempt = attempts.mutate { count -> Int in
        count += 1
        return count
      }
      return attempt == 1 ? TestResponse.status(503) : .status(200)
    }
    let transport = SessionFetcherTransport(service: makeTestService(retries: true))
    let produced = Box(0)
    let body = HTTPBody(
      GeneratedChunks(count: 8, size: 16 * 1024, produced: produced), length: .unknown,
      iterationBehavior: .single)
    let (response, _) = try await transport.send(
      HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/submit"), body: body,
      baseURL: server.baseURL, operationID: "submit")
    #expect(response.status.code == 503)
    #expect(server.requestCount(path: "/submit") == 1)
    #expect(server.requests(path: "/submit").first?.bodyLength == 8 * 16 * 1024)
  }

  @Test("A replayable streamed request body is sent again, whole, on a retry")
  func multiPassBodyIsReplayed() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let attempts = Box(0)
    server.route("/submit") { _ in
      let attempt = attempts.mutate { count -> Int in
        count += 1
        return count
      }
      return attempt == 1 ? TestResponse.status(503) : .status(200)
    }
    let transport = SessionFetcherTransport(
      service: makeTestService(retries: true),
      configuration: .init(maximumBufferedRequestBodyLength: 0))
    let payload = TestServer.patternBytes(count: 200_000)
    let (response, _) = try await transport.send(
      HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/submit"), body: HTTPBody(payload),
      baseURL: server.baseURL, operationID: "submit")
    #expect(response.status.code == 200)
    let requests = server.requests(path: "/submit")
    #expect(requests.count == 2)
    #expect(requests.allSatisfy { $0.body == payload && $0.wasChunked })
  }

  @Test("A large request body is pulled as the network takes it, never collected whole")
  func requestBodyIsStreamed() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let sent = Box<Int64>(0)
    let produced = Box(0)
    let maxLead = Box(0)
    let transport = SessionFetcherTransport(
      service: makeTestService(),
      configuration: .init(prepareFetcher: { fetcher, _ in
        fetcher.sendProgressBlock = { _, total, _ in sent.mutate { $0 = max($0, total) } }
      }))
    let chunkSize = 64 * 1024
    let count = 512  // 32 MiB
    let watcher = Task {
      while !Task.isCancelled {
        let lead = produced.value - Int(sent.value)
        maxLead.mutate { $0 = max($0, lead) }
        try? await Task.sleep(nanoseconds: 2_000_000)
      }
    }
    let body = HTTPBody(
      GeneratedChunks(count: count, size: chunkSize, produced: produced), length: .unknown,
      iterationBehavior: .single)
    let (response, responseBody) = try await transport.send(
      HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/upload?discard=1"), body: body,
      baseURL: server.baseURL, operationID: "upload")
    watcher.cancel()
    #expect(response.status.code == 200)
    let answer = try await String(collecting: try #require(responseBody), upTo: 10_000)
    #expect(answer.contains("\"length\":\(count * chunkSize)"))
    // Buffering the body first would put all 32 MiB ahead of the network.
    #expect(maxLead.value < 8 * 1024 * 1024, "ran \(maxLead.value) bytes ahead of the network")
  }

  @Test("The operation returns while the response body is still arriving, and the body streams")
  func responseStreamsAfterReturn() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeTestService()
    let transport = SessionFetcherTransport(service: service)
    // Announces 1 MB, sends 1000 bytes, then waits: a transport that buffered the body would hang.
    let (response, body) = try await withTimeout(seconds: 10) {
      try await transport.send(
        HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/stall?length=1000000&send=1000"),
        body: nil, baseURL: server.baseURL, operationID: "stall")
    }
    #expect(response.status.code == 200)
    let responseBody = try #require(body)
    #expect(responseBody.length == .known(1_000_000))
    var iterator = responseBody.makeAsyncIterator()
    let first = try await iterator.next()
    #expect(first?.count ?? 0 > 0)
    #expect(first.map { Data($0) } == TestServer.patternBytes(count: first?.count ?? 0))
    #expect(service.numberOfFetchers == 1)
  }

  @Test("Cancelling the calling task stops the fetch")
  func cancellationStopsTheFetch() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeTestService()
    let transport = SessionFetcherTransport(service: service)
    let task = Task {
      try await transport.send(
        HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/hang"), body: nil,
        baseURL: server.baseURL, operationID: "hang")
    }
    #expect(await waitUntil { service.numberOfRunningFetchers == 1 })
    let start = Date()
    task.cancel()
    let result = await task.result
    #expect(Date().timeIntervalSince(start) < 3)
    #expect(throws: CancellationError.self) { try result.get() }
    #expect(await waitUntil { service.numberOfFetchers == 0 })
  }

  @Test("A body the generated client cannot decode surfaces as the runtime's ClientError")
  func undecodableBody() async throws {
    let server = try TestServer()
    defer { server.stop() }
    server.route("/anything") { _ in .json(#"{"method": 5, "headers": "#) }
    let client = Client(
      serverURL: server.baseURL, transport: SessionFetcherTransport(service: makeTestService()))
    let error = await #expect(throws: ClientError.self) {
      _ = try await client.echoJSON(body: .json(.init(message: "x", count: 1)))
    }
    #expect(error?.operationID == "echoJSON")
    #expect(error?.response?.status.code == 200)
  }

  @Test("A content type the document does not declare surfaces as the runtime's ClientError")
  func undeclaredContentType() async throws {
    let server = try TestServer()
    defer { server.stop() }
    server.route("/headers") { _ in
      TestResponse(headers: [("Content-Type", "text/html")], body: Data("<html></html>".utf8))
    }
    let client = Client(
      serverURL: server.baseURL, transport: SessionFetcherTransport(service: makeTestService()))
    let error = await #expect(throws: ClientError.self) {
      _ = try await client.getHeaders().ok.body.json
    }
    #expect(error?.operationID == "getHeaders")
    #expect("\(error.map { $0.causeDescription } ?? "")".localizedCaseInsensitiveContains("content type"))
  }
}

/// Runs `body`, failing with `FetchTimeout` when it takes longer than `seconds`.
func withTimeout<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () async throws -> T)
  async throws -> T
{
  try await withThrowingTaskGroup(of: T.self) { group in
    group.addTask { try await body() }
    group.addTask {
      try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
      throw FetchTimeout()
    }
    let first = try await group.next()!
    group.cancelAll()
    return first
  }
}
