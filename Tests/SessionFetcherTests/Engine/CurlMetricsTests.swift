#if canImport(FoundationNetworking)
  import FetcherTesting
  import Foundation
  import SessionFetcher
  import Testing

  @Suite("Curl engine: metrics")
  struct CurlMetricsTests {
    @Test func metricsAreSetBeforeCompletionAndShowTheReusedConnection() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let (first, firstTask) = try curlExchange(engine, URLRequest(url: server.url("/bytes/1000")))
      let (second, _) = try curlExchange(engine, URLRequest(url: server.url("/bytes/2000")))
      let one = try #require(first.metricsAtCompletion)
      let two = try #require(second.metricsAtCompletion)
      #expect(firstTask.transferMetrics == one)
      #expect(!one.isReusedConnection)
      #expect(one.connect != nil)
      #expect(one.secureConnection == nil)
      #expect(one.firstByte != nil)
      #expect(one.total > 0)
      #expect(one.total >= (one.firstByte ?? 0))
      #expect(one.httpVersion == "HTTP/1.1")
      #expect(one.remoteAddress == "127.0.0.1")
      #expect(one.remotePort == Int(server.port))
      #expect(one.responseBytes > 1000)
      #expect(one.requestBytes > 0)
      #expect(two.isReusedConnection)
      #expect(two.nameLookup == nil && two.connect == nil)
      #expect(two.responseBytes > 2000)
      let connections = Set(server.requests.map(\.connectionID))
      #expect(connections.count == 1)
    }

    @Test func uploadBytesAreCounted() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      var request = URLRequest(url: server.url("/upload"))
      request.httpMethod = "POST"
      let (record, _) = try curlExchange(engine, request, body: .data(Data(count: 50_000)))
      let metrics = try #require(record.metricsAtCompletion)
      #expect(metrics.requestBytes >= 50_000)
    }
  }
#endif
