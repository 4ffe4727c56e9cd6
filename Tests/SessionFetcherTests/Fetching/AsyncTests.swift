import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// The `async` form over a real connection. What it throws, and how a cancelled task or a stop
/// ends it, are in `ScriptedAsyncTests`.
@Suite("async/await")
struct AsyncTests {
  @Test func beginFetchReturnsTheBody() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let data = try await server.fetcher("/bytes/1234").beginFetch()
    #expect(data == TestServer.patternBytes(count: 1234))
  }

}

extension Result {
  var error: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
