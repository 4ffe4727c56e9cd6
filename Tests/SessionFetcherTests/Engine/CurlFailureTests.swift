#if canImport(FoundationNetworking)
  import FetcherTesting
  import Foundation
  import SessionFetcher
  import Testing

  @Suite("Curl engine: transport failures")
  struct CurlFailureTests {
    @Test func resetMidBodyIsNetworkConnectionLost() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let url = server.url("/reset?length=200000&send=100000")
      let (record, task) = try curlExchange(engine, URLRequest(url: url))
      #expect(record.completions.count == 1)
      let error = try #require(record.completions.first! as? URLError)
      #expect(error.code == .networkConnectionLost)
      #expect(error.userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
      #expect(error.userInfo[EngineErrorKeys.curlCode] as? Int != nil)
      #expect(!error.localizedDescription.isEmpty)
      #expect(record.response?.statusCode == 200)
      #expect(task.diagnosticSummary.contains("curl code"))
    }

    @Test func truncatedBodyIsNetworkConnectionLost() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let (record, _) = try curlExchange(engine, URLRequest(url: server.url("/truncate?length=1000&send=10")))
      #expect(record.completions.first!.urlErrorCode == .networkConnectionLost)
    }

    @Test func refusedConnectionIsCannotConnectToHost() throws {
      // Reserved and never listened on: a stopped server's port could be taken by another
      // suite's server running in parallel.
      let port = try closedPort()
      let engine = try makeCurlEngine()
      let url = try #require(URL(string: "http://127.0.0.1:\(port)/bytes/1"))
      let (record, _) = try curlExchange(engine, URLRequest(url: url))
      #expect(record.completions.first!.urlErrorCode == .cannotConnectToHost)
      #expect(record.events == ["complete"])
    }

    @Test func unsupportedSchemeFailsWithoutATransfer() throws {
      let engine = try makeCurlEngine()
      let url = try #require(URL(string: "ftp://127.0.0.1/file"))
      let (record, _) = try curlExchange(engine, URLRequest(url: url))
      #expect(record.completions.first!.urlErrorCode == .unsupportedURL)
    }

    @Test func missingUploadFileFails() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      var request = URLRequest(url: server.url("/echo"))
      request.httpMethod = "PUT"
      let missing = FileManager.default.temporaryDirectory.appendingPathComponent(
        "missing-\(UUID().uuidString)")
      let (record, _) = try curlExchange(engine, request, body: .file(missing))
      #expect(record.completions.first!.urlErrorCode == .fileDoesNotExist)
      #expect(server.requestCount(path: "/echo") == 0)
      #expect(engine.runningTransferCount == 0)
    }
  }
#endif

#if canImport(FoundationNetworking)
  import FetcherTesting
  import Foundation
  import SessionFetcher
  import Testing

  @Suite("Curl engine: oversized heads")
  struct CurlOversizedHeadTests {
    @Test func endlessHeaderBlockFailsOnceWithoutAResponse() throws {
      let server = try TestServer()
      defer { server.stop() }
      server.route("/huge-head") { _ in
        TestResponse(headers: (0..<40).map { ("X-Filler-\($0)", String(repeating: "h", count: 8_000)) })
      }
      let engine = try makeCurlEngine()
      let (record, _) = try curlExchange(engine, URLRequest(url: server.url("/huge-head")))
      #expect(record.completions.count == 1)
      let error = try #require(record.completions.first! as? URLError)
      #expect(error.code == .cannotParseResponse, "\(error.userInfo)")
      #expect(record.response == nil)
    }
  }
#endif
