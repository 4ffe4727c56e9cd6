import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `maxRetryCount` on the scripted engine: how many attempts the limit lets the fetcher make. How
/// each real engine carries a retry is in `RetryTests`.
@Suite("maxRetryCount (scripted)")
struct ScriptedMaxRetryCountTests {
  static let body = Data("ten bytes!".utf8)

  /// A fetcher on `engine` whose first `failures` attempts get a 503, with short retry delays.
  static func failingFetcher(_ engine: ScriptedEngine, failures: Int) -> SessionFetcher {
    for _ in 0..<failures { engine.respond(to: "/flaky", with: .response(status: 503)) }
    engine.respond(to: "/flaky", with: .response(body: body))
    let fetcher = engine.fetcher("/flaky")
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
  func theLimitCapsTheAttempts(limit: Int?, failures: Int, requests: Int, succeeds: Bool) async {
    let engine = ScriptedEngine()
    let fetcher = Self.failingFetcher(engine, failures: failures)
    fetcher.maxRetryCount = limit
    let result = await fetcher.fetchResult()
    #expect(engine.requests.count == requests)
    #expect(fetcher.retryCount == requests - 1)
    if succeeds {
      #expect(result.error == nil)
      #expect(result.data == Self.body)
    } else {
      #expect(result.fetcherError?.statusCode == 503)
    }
  }

  @Test func theRetryBlockIsNotAskedOnceTheLimitIsReached() async {
    let engine = ScriptedEngine()
    let fetcher = Self.failingFetcher(engine, failures: 5)
    fetcher.maxRetryCount = 1
    let asked = Recorder<Bool>()
    fetcher.retryBlock = { suggested, _, respond in
      asked.append(suggested)
      respond(true)
    }
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError?.statusCode == 503)
    #expect(asked.values == [true])
    #expect(engine.requests.count == 2)
  }
}
