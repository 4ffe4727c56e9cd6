import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Retries where the transport matters: how each real engine reports a reset, a truncated body, an
/// empty reply or a refused connection, and that the fetcher retries it. What the fetcher decides
/// from an answer (statuses, methods, delays, `Retry-After`, `retryBlock`, stops during the delay)
/// is in `ScriptedRetryTests`.
@Suite("Retries")
struct RetryTests {
  static func key() -> String { UUID().uuidString }

  /// The default first delay is random between 1 and 2 s, drawn once per fetcher: every read, and
  /// a reset to the default, give the same value.
  @Test func theDefaultFirstDelayIsRandomAndStable() {
    let fetcher = SessionFetcher.fetcher(urlString: "https://example.invalid/")
    let first = fetcher.minRetryInterval
    #expect((1...2).contains(first))
    #expect(fetcher.minRetryInterval == first)
    fetcher.minRetryInterval = 5
    #expect(fetcher.minRetryInterval == 5)
    fetcher.minRetryInterval = 0
    #expect(fetcher.minRetryInterval == first)
  }

  @Test(arguments: ["reset", "truncate", "empty"])
  func transientTransportFailuresAreRetried(_ fault: String) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/fail-first?n=1&key=\(Self.key())&fault=\(fault)&bytes=5000")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data == TestServer.patternBytes(count: 5000))
    #expect(fetcher.retryCount == 1)
  }

  @Test func connectionRefusedIsRetried() async throws {
    let port = try closedPort()
    let fetcher = SessionFetcher.fetcher(urlString: "http://127.0.0.1:\(port)/")
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    // A count, not the elapsed-time rule (3 × maxRetryInterval), ends the retries: on a loaded
    // machine the refused attempts can take seconds to report.
    fetcher.maxRetryInterval = 600
    fetcher.maxRetryCount = 2
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .cannotConnectToHost)
    #expect(fetcher.retryCount == 2)
  }
}
