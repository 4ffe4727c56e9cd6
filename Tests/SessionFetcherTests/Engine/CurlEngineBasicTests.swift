#if canImport(FoundationNetworking)
  import FetcherTesting
  import Foundation
  import SessionFetcher
  import Testing

  @Suite("Curl engine: basic exchanges")
  struct CurlEngineBasicTests {
    @Test func getDeliversHeadThenBodyThenOneCompletion() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let (record, task) = try curlExchange(engine, URLRequest(url: server.url("/bytes/300000")))
      #expect(record.completions.count == 1)
      #expect(record.completions.first! == nil)
      #expect(record.events == ["response 200", "data", "complete"])
      #expect(record.response?.statusCode == 200)
      #expect(record.response?.value(forHTTPHeaderField: "etag") == "\"bytes-300000\"")
      #expect(
        TestServer.checksum(record.body) == TestServer.checksum(TestServer.patternBytes(count: 300_000)))
      #expect((task.response as? HTTPURLResponse)?.statusCode == 200)
      let request = try #require(server.requests(path: "/bytes/300000").first)
      #expect(request.method == "GET")
      #expect(request.header("Expect") == nil)
    }

    @Test func headHasNoBody() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      var request = URLRequest(url: server.url("/bytes/5000"))
      request.httpMethod = "HEAD"
      let (record, _) = try curlExchange(engine, request)
      #expect(record.completions.first! == nil)
      #expect(record.response?.statusCode == 200)
      #expect(record.response?.expectedContentLength == 5000)
      #expect(record.body.isEmpty)
      #expect(server.requests(path: "/bytes/5000").first?.method == "HEAD")
    }

    @Test func postDataIsSentWithContentLength() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let payload = TestServer.patternBytes(count: 1_500_000, offset: 7)
      var request = URLRequest(url: server.url("/echo"))
      request.httpMethod = "POST"
      request.setValue("application/x-test", forHTTPHeaderField: "Content-Type")
      let (record, _) = try curlExchange(engine, request, body: .data(payload))
      #expect(record.completions.first! == nil)
      let headers = record.response?.allHeaderFields as? [String: String] ?? [:]
      #expect(headers["X-Request-Method"] == "POST")
      #expect(headers["X-Body-Length"] == "1500000")
      #expect(headers["X-Request-Content-Length"] == "1500000")
      #expect(headers["X-Request-Chunked"] == "0")
      #expect(headers["X-Body-Checksum"] == TestServer.checksum(payload))
      #expect(record.body == payload)
      #expect(server.requests(path: "/echo").first?.header("Expect") == nil)
      #expect(server.requests(path: "/echo").first?.header("Content-Type") == "application/x-test")
      // Upload progress: increasing totals that end at the body's length, each a change.
      let sent = record.sent
      #expect(sent.last?.total == 1_500_000)
      #expect(sent.allSatisfy { $0.delta > 0 && $0.expected == 1_500_000 })
      #expect(sent.reduce(0) { $0 + $1.delta } == 1_500_000)
    }

    @Test func putFileIsSentWithItsLength() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let payload = TestServer.patternBytes(count: 700_001, offset: 3)
      let file = FileManager.default.temporaryDirectory.appendingPathComponent(
        "curl-put-\(UUID().uuidString)")
      try payload.write(to: file)
      defer { try? FileManager.default.removeItem(at: file) }
      var request = URLRequest(url: server.url("/echo"))
      request.httpMethod = "PUT"
      let (record, _) = try curlExchange(engine, request, body: .file(file))
      #expect(record.completions.first! == nil)
      let headers = record.response?.allHeaderFields as? [String: String] ?? [:]
      #expect(headers["X-Request-Method"] == "PUT")
      #expect(headers["X-Request-Content-Length"] == "700001")
      #expect(headers["X-Request-Chunked"] == "0")
      #expect(headers["X-Body-Checksum"] == TestServer.checksum(payload))
    }

    @Test func streamIsSentChunked() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let payload = TestServer.patternBytes(count: 400_000, offset: 11)
      var request = URLRequest(url: server.url("/echo"))
      request.httpMethod = "POST"
      let (record, _) = try curlExchange(engine, request, body: .stream(InputStream(data: payload)))
      #expect(record.completions.first! == nil)
      let headers = record.response?.allHeaderFields as? [String: String] ?? [:]
      #expect(headers["X-Request-Chunked"] == "1")
      #expect(headers["X-Request-Content-Length"] == nil)
      #expect(headers["X-Body-Checksum"] == TestServer.checksum(payload))
      #expect(record.sent.last?.expected == -1)
      #expect(server.requests(path: "/echo").first?.header("Expect") == nil)
    }

    @Test func deleteWithoutBodyUsesItsMethod() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      var request = URLRequest(url: server.url("/echo"))
      request.httpMethod = "DELETE"
      let (record, _) = try curlExchange(engine, request)
      #expect(record.completions.first! == nil)
      #expect(server.requests(path: "/echo").first?.method == "DELETE")
      #expect(server.requests(path: "/echo").first?.bodyLength == 0)
    }

    @Test func requestHeadersAreSentAsGiven() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      var request = URLRequest(url: server.url("/headers"))
      request.setValue("one", forHTTPHeaderField: "X-Custom")
      request.setValue("gzip", forHTTPHeaderField: "Accept-Encoding")
      _ = try curlExchange(engine, request)
      let recorded = try #require(server.requests(path: "/headers").first)
      #expect(recorded.header("X-Custom") == "one")
      #expect(recorded.headerValues("Accept-Encoding") == ["gzip"])
      #expect(recorded.header("Cookie") == nil)
    }
  }
#endif
