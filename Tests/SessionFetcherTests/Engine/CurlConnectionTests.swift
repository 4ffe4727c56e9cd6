#if canImport(FoundationNetworking)
  import FetcherTesting
  import Foundation
  import SessionFetcher
  import Testing
  import TestTraits

  @Suite("Curl engine: connections", .ownThreads)
  struct CurlConnectionTests {
    /// Runs `count` exchanges at once and returns their records.
    private func concurrentRound(_ engine: CurlEngine, _ url: URL, count: Int) throws -> [CurlRecordingHandler
      .Record]
    {
      let handlers = (0..<count).map { _ in CurlRecordingHandler() }
      let tasks = try handlers.map { handler in
        try #require(engine.makeTask(request: URLRequest(url: url), body: .none, handler: handler))
      }
      tasks.forEach { $0.resume() }
      for handler in handlers { try #require(handler.waitForCompletion()) }
      return handlers.map(\.current)
    }

    @Test func sixteenInFlightKeepSixteenConnectionsForTheNextRound() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine(perHost: 16)
      let url = server.url("/delay/0.3")
      let first = try concurrentRound(engine, url, count: 16)
      #expect(first.allSatisfy { $0.completions.first! == nil && $0.response?.statusCode == 200 })
      let firstConnections = Set(server.requests.map(\.connectionID))
      #expect(firstConnections.count == 16)
      server.resetRecords()
      let second = try concurrentRound(engine, url, count: 16)
      #expect(second.allSatisfy { $0.metricsAtCompletion?.isReusedConnection == true })
      let secondConnections = Set(server.requests.map(\.connectionID))
      #expect(secondConnections.isSubset(of: firstConnections))
    }

    /// More connections than the starting cache of 64 (no per-host cap, 96 at once): the cache grows
    /// with the transfers, so the next round reuses every one instead of reopening 32.
    @Test func moreInFlightThanTheStartingCacheKeepTheirConnections() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine(perHost: 0)
      let url = server.url("/delay/1")
      let first = try concurrentRound(engine, url, count: 96)
      #expect(first.allSatisfy { $0.completions.first! == nil && $0.response?.statusCode == 200 })
      let firstConnections = Set(server.requests.map(\.connectionID))
      // More than the starting cache (on a loaded machine a few may have shared a connection).
      #expect(firstConnections.count > 64)
      server.resetRecords()
      let second = try concurrentRound(engine, url, count: 96)
      #expect(second.allSatisfy { $0.completions.first! == nil })
      let secondConnections = Set(server.requests.map(\.connectionID))
      #expect(
        secondConnections.isSubset(of: firstConnections),
        "reopened \(secondConnections.subtracting(firstConnections).count)")
    }

    /// The engine keeps easy handles between transfers (reset, then set up again): nothing of an
    /// exchange reaches the next one — not its method, body, headers, HEAD's "no body", or its
    /// credential — across enough exchanges in a row that every one after the first runs on a
    /// handle used before.
    @Test func aKeptHandleCarriesNothingToTheNextExchange() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine(perHost: 1)
      for round in 0..<3 {
        var post = URLRequest(url: server.url("/echo?round=\(round)"))
        post.httpMethod = "POST"
        post.setValue("one", forHTTPHeaderField: "X-One")
        post.setValue("Basic dXNlcjpwYXNz", forHTTPHeaderField: "Authorization")
        let (posted, _) = try curlExchange(engine, post, body: .data(Data("first body".utf8)))
        #expect(posted.completions.first! == nil)
        var head = URLRequest(url: server.url("/bytes/10?round=\(round)"))
        head.httpMethod = "HEAD"
        let (headed, _) = try curlExchange(engine, head)
        #expect(headed.completions.first! == nil)
        #expect(headed.body.isEmpty)
        let (got, _) = try curlExchange(engine, URLRequest(url: server.url("/bytes/10?round=\(round)&get")))
        #expect(got.completions.first! == nil)
        #expect(got.body.count == 10)
      }
      let requests = server.requests
      #expect(requests.count == 9)
      for request in requests where request.method != "POST" {
        #expect(request.bodyLength == 0, "\(request.method) \(request.target)")
        #expect(!request.headers.contains { $0.name.lowercased() == "x-one" }, "\(request.target)")
        #expect(!request.headers.contains { $0.name.lowercased() == "authorization" }, "\(request.target)")
      }
      #expect(requests.filter { $0.method == "POST" }.allSatisfy { $0.bodyText == "first body" })
      #expect(requests.filter { $0.method == "GET" }.count == 3)
      #expect(requests.filter { $0.method == "HEAD" }.count == 3)
    }

    /// A handle kept as its plain `GET` left it (no reset) sets again only what differs: a request's
    /// own `Accept-Encoding` is not sent by the exchange after it, which sends libcurl's list.
    @Test func aHandleKeptWithoutAResetSetsWhatDiffers() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine(perHost: 1)
      for (round, encoding) in [nil, "identity", nil, nil, "identity", "identity", nil].enumerated() {
        var request = URLRequest(url: server.url("/bytes/10?round=\(round)"))
        request.setValue(encoding, forHTTPHeaderField: "Accept-Encoding")
        let (got, _) = try curlExchange(engine, request)
        #expect(got.completions.first! == nil)
        #expect(got.body.count == 10)
        let sent = server.requests.last?.headers.first { $0.name.lowercased() == "accept-encoding" }?.value
        if let encoding {
          #expect(sent == encoding, "round \(round)")
        } else {
          #expect(sent?.contains("gzip") == true, "round \(round): \(sent ?? "none")")
        }
      }
    }

    @Test func perHostCapLimitsConnections() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine(perHost: 4)
      let records = try concurrentRound(engine, server.url("/delay/0.1"), count: 16)
      #expect(records.allSatisfy { $0.completions.first! == nil })
      #expect(Set(server.requests.map(\.connectionID)).count <= 4)
      #expect(server.requests.count == 16)
    }
  }
#endif
