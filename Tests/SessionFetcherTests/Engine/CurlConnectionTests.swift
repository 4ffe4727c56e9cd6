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
