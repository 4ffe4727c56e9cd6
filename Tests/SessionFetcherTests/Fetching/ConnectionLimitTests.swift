import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The per-host connection limit of the library's sessions: on Linux 4 for URLSession, where libcurl
/// closes and reopens connections above it, and 16 for the libcurl engine; the platform's own
/// elsewhere.
@Suite("Connection limits")
struct ConnectionLimitTests {
  #if canImport(FoundationNetworking)
    static let defaultLimit = EngineSessionFactory.defaultConnectionsPerHost(.default)
  #else
    static let defaultLimit = URLSessionConfiguration.ephemeral.httpMaximumConnectionsPerHost
  #endif

  /// Begins `count` fetchers at once and returns the distinct connections the server saw.
  static func connections(
    count: Int, on server: TestServer, path: String = "/delay/0.3",
    _ make: (String) -> SessionFetcher
  ) async -> Int {
    let fetchers = (0..<count).map { index in make("\(path)?n=\(index)") }
    let results = await withTaskGroup(of: FetchResult.self) { group in
      for fetcher in fetchers { group.addTask { await fetcher.fetchResult() } }
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(results.allSatisfy { $0.error == nil })
    return Set(server.requests.map(\.connectionID)).count
  }

  @Test func standaloneFetchersShareAtMostTheDefaultNumberOfConnections() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // More slow requests at once than the limit: without it each would take a connection of its own.
    let count = await Self.connections(count: Self.defaultLimit + 6, on: server) { server.fetcher($0) }
    #expect(count <= Self.defaultLimit)
  }

  @Test func aConfigurationBlockKeepsTheDefaultLimit() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let count = await Self.connections(count: 10, on: server) { path in
      let fetcher = server.fetcher(path)
      // A session of the fetcher's own, from the library's default configuration.
      fetcher.configurationBlock = { $0.httpAdditionalHeaders = ["X-Block": "yes"] }
      return fetcher
    }
    // One session per fetcher: one connection each, whatever the limit. The header shows that the
    // block ran; the limit of the configuration it was given is checked below.
    #expect(count == 10)
    #expect(server.requests.allSatisfy { $0.header("X-Block") == "yes" })
    let limits = Recorder<Int>()
    let fetcher = server.fetcher("/text")
    fetcher.configurationBlock = { limits.append($0.httpMaximumConnectionsPerHost) }
    #expect(await fetcher.fetchResult().error == nil)
    #expect(limits.values == [Self.defaultLimit])
  }

  @Test func aConfigurationOfYourOwnIsUsedAsItIs() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let limits = Recorder<Int>()
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = 9
    let fetcher = server.fetcher("/text")
    fetcher.configuration = configuration
    fetcher.configurationBlock = { limits.append($0.httpMaximumConnectionsPerHost) }
    #expect(await fetcher.fetchResult().error == nil)
    #expect(limits.values == [9])
  }

  /// Event streams and other long-lived streams get a session of their own: however many are
  /// open, short requests to the same host do not wait behind them.
  @Test func openStreamsDoNotHoldTheSharedConnections() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let streamCount = Self.defaultLimit + 1
    // Each stream sends an event every 200 ms for more than three minutes.
    let streamers = (0..<streamCount).map { server.fetcher("/sse?events=1000&interval=200&n=\($0)") }
    defer { for fetcher in streamers { fetcher.stopFetching() } }
    var streams: [FetcherStream] = []
    for fetcher in streamers {
      streams.append(try await bounded { try await fetcher.beginStreaming() })
    }
    #expect(streams.allSatisfy { $0.httpResponse?.statusCode == 200 })
    #expect(streamers.allSatisfy { $0.isFetching })
    let result = await server.fetcher("/text?value=short").fetchResult(timeout: 60)
    #expect(result.error == nil)
    #expect(result.data == Data("short".utf8))
  }
}
