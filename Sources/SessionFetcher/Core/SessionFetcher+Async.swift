import Foundation

extension SessionFetcher {
  /// Begins the fetch and returns the body (empty when it went to ``destinationFileURL`` or to
  /// ``accumulateDataBlock``).
  ///
  /// Cancelling the awaiting `Task` stops the fetch, also when it happens before the request is on
  /// the wire, and throws ``SessionFetcherError/cancelled``. ``stopFetching()`` also throws
  /// `.cancelled` here, whatever ``stopFetchingTriggersCompletionHandler`` says, so an `await`
  /// never hangs.
  ///
  /// ```swift
  /// let data = try await service.fetcher(urlString: "https://example.com/a.json").beginFetch()
  /// ```
  ///
  /// - Throws: ``SessionFetcherError`` (an HTTP status error carries the body) or `URLError`.
  public func beginFetch() async throws -> Data {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
        if Task.isCancelled {
          stop(forceCompletion: true)
        }
        begin(
          completion: { data, error in
            if let error {
              continuation.resume(throwing: error)
            } else {
              continuation.resume(returning: data ?? Data())
            }
          }, forceCompletionOnStop: true)
      }
    } onCancel: {
      stop(forceCompletion: true)
    }
  }
}
