import FetcherTesting
import Foundation
import SessionFetcher

extension Tour {
  /// A GET of a route that never answers, stopped by cancelling the `Task` that awaits it.
  func showCancellation() async throws -> SectionOutcome {
    Console.detail("GET /hang — the server never answers; the awaiting Task is cancelled after 0.3 s")
    let fetcher = makeFetcher("/hang")
    let start = Date()
    let task = Task { try await fetcher.beginFetch() }
    try await Task.sleep(for: .milliseconds(300))
    task.cancel()

    switch await task.result {
    case .success(let data):
      throw DemoFailure("/hang answered with \(data.count) bytes")
    case .failure(let error):
      guard let fetcherError = error as? SessionFetcherError, fetcherError == .cancelled else {
        throw DemoFailure("expected SessionFetcherError.cancelled, got \(Format.error(error))")
      }
      Console.detail(
        "beginFetch() threw SessionFetcherError.cancelled (\"\(fetcherError)\") after "
          + "\(Format.seconds(Date().timeIntervalSince(start)))")
    }
    Console.detail("isFetching afterwards: \(fetcher.isFetching)")
    try require(!fetcher.isFetching, "the fetcher still runs after cancellation")
    return .shown
  }
}
