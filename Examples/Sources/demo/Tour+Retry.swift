import FetcherTesting
import Foundation
import SessionFetcher

extension Tour {
  /// A GET that the server fails twice with 503 before answering; the fetcher retries after
  /// 0.2 s, then 0.4 s (`minRetryInterval` × `retryFactor`).
  func showRetries() async throws -> SectionOutcome {
    let path = "/fail-first?n=2&key=tour-retry&status=503"
    Console.detail("GET \(path) — the server answers 503 to the first two requests")
    let fetcher = makeFetcher(path)
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.2
    fetcher.eventMonitors = [RetryReporter()]

    let data = try await fetcher.beginFetch()

    let timing = fetcher.timing
    Console.detail(
      "attempt \(fetcher.retryCount + 1): HTTP \(fetcher.statusCode), \(data.count) bytes — recovered after "
        + "\(fetcher.retryCount) retries in \(Format.seconds(timing.duration ?? 0))")
    let requests = server.requestCount(path: "/fail-first")
    try require(fetcher.retryCount == 2, "expected 2 retries, saw \(fetcher.retryCount)")
    try require(requests == 3, "expected the server to see 3 requests, it saw \(requests)")
    Console.detail("the server saw \(requests) requests (X-Attempt 1, 2, 3)")
    return .shown
  }
}

/// Prints each failed attempt and the delay before the next one.
///
/// Event monitors run on the fetcher's internal queues; `print`ing from there is fine here.
private final class RetryReporter: FetcherEventMonitor {
  func fetcher(_ fetcher: SessionFetcher, willRetryAfter delay: TimeInterval, error: any Error) {
    Console.detail(
      "attempt \(fetcher.retryCount + 1): \(Format.error(error)) → retrying in \(Format.seconds(delay))")
  }
}
