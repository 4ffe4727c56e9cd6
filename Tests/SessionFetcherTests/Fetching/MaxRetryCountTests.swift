import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("maxRetryCount")
struct MaxRetryCountTests {
  /// A fetcher whose first `failures` attempts get a 503, with short retry delays.
  private func failingFetcher(_ server: TestServer, failures: Int, key: String) -> SessionFetcher {
    let fetcher = server.fetcher("/fail-first?n=\(failures)&key=\(key)&status=503&bytes=10")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    fetcher.retryFactor = 1.5
    return fetcher
  }

  /// (limit, failures before success) → (requests sent, succeeded)
  @Test(arguments: [
    (Int?.none, 3, 4, true),
    (Int?.some(5), 3, 4, true),
    (Int?.some(3), 3, 4, true),
    (Int?.some(2), 3, 3, false),
    (Int?.some(0), 3, 1, false),
  ])
  func theLimitCapsTheAttempts(limit: Int?, failures: Int, requests: Int, succeeds: Bool) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let key = UUID().uuidString
    let fetcher = failingFetcher(server, failures: failures, key: key)
    fetcher.maxRetryCount = limit
    let result = await fetcher.fetchResult()
    #expect(server.requestCount(path: "/fail-first") == requests)
    #expect(fetcher.retryCount == requests - 1)
    if succeeds {
      #expect(result.error == nil)
    } else {
      #expect(result.fetcherError?.statusCode == 503)
    }
  }

  @Test func theRetryBlockIsNotAskedOnceTheLimitIsReached() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = failingFetcher(server, failures: 5, key: UUID().uuidString)
    fetcher.maxRetryCount = 1
    let asked = Recorder<Bool>()
    fetcher.retryBlock = { suggested, _, respond in
      asked.append(suggested)
      respond(true)
    }
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError?.statusCode == 503)
    #expect(asked.count == 1)
    #expect(server.requestCount(path: "/fail-first") == 2)
  }
}
