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

  /// Begins the fetch and returns the body with the final response, its status code and the
  /// fetch's ``timing``.
  ///
  /// Throws exactly what ``beginFetch()`` throws, with the same cancellation: cancelling the
  /// awaiting `Task` stops the fetch (also before the request is on the wire) and throws
  /// ``SessionFetcherError/cancelled``.
  ///
  /// ```swift
  /// let result = try await fetcher.fetchResponse()
  /// if result.response?.value(forHTTPHeaderField: "Content-Type") == "application/json" { … }
  /// ```
  public func fetchResponse() async throws -> FetchResponse {
    let data = try await beginFetch()
    let (response, timing) = storage.withLock {
      ($0.lifecycle.exchange?.response as? HTTPURLResponse, $0.reportedTiming)
    }
    return FetchResponse(data: data, response: response, timing: timing)
  }

  /// Begins the fetch, saves the response body to a file and returns the file's URL: `destination`
  /// when given (it becomes ``destinationFileURL``), else ``destinationFileURL``.
  ///
  /// The file appears only when the fetch succeeds (see ``destinationFileURL``): parent folders are
  /// created, an existing file is replaced, and nothing partial is left behind on failure or
  /// cancellation. Throws what ``beginFetch()`` throws, with the same cancellation; without any
  /// destination it throws ``SessionFetcherError/invalidConfiguration(_:)`` at once and sends
  /// nothing. Use ``progressUpdates`` or ``downloadProgressBlock`` to follow the download.
  ///
  /// ```swift
  /// import SessionFetcher
  ///
  /// func fetchReport(to file: URL) async throws -> URL {
  ///   let fetcher = SessionFetcher.fetcher(urlString: "https://example.com/report.pdf")
  ///   return try await fetcher.download(to: file)
  /// }
  /// ```
  @discardableResult
  public func download(to destination: URL? = nil) async throws -> URL {
    if let destination { destinationFileURL = destination }
    guard let file = destinationFileURL else {
      throw SessionFetcherError.invalidConfiguration(
        "download(to:) needs a destination: pass one or set destinationFileURL")
    }
    _ = try await beginFetch()
    return file
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
