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
        begin(completion: continuation.fetchCompletion, forceCompletionOnStop: true)
      }
    } onCancel: {
      stop(forceCompletion: true)
    }
  }
}

extension CheckedContinuation where T == Data, E == any Error {
  /// A completion handler that resumes the continuation: with the error, else with the data (empty
  /// when the body went elsewhere). For the `async` forms of `beginFetch`.
  package var fetchCompletion: FetcherCompletionHandler {
    { data, error in
      if let error {
        resume(throwing: error)
      } else {
        resume(returning: data ?? Data())
      }
    }
  }
}
