import Foundation

extension SessionFetcher {
  /// Turns a successful response body into a value, off the callback queue (see
  /// ``beginFetch(parsing:completionHandler:)``).
  ///
  /// The data is the response body (empty when it went to ``destinationFileURL`` or to
  /// ``accumulateDataBlock``); the response is the final HTTP response (nil for non-HTTP schemes or a
  /// test block that gave none). Throw to fail the fetch with your error.
  public typealias ResponseParser<Value> = @Sendable (Data, HTTPURLResponse?) throws -> Value

  // MARK: - Parse-then-complete

  /// Begins the fetch and parses a successful body with `parse` on a background queue, then
  /// delivers the parsed value on ``callbackQueue`` — the slow part of handling a response never
  /// blocks the callback queue (FSNetworking's parse-then-complete).
  ///
  /// `completionHandler` runs once on ``callbackQueue`` with:
  /// - `.success(value)` when the fetch succeeded and `parse` returned;
  /// - `.failure(error)` with the error `parse` threw, unchanged (for example a `DecodingError`);
  ///   ``downloadedData`` still holds the body that failed to parse, and ``error`` stays nil (the
  ///   fetch itself succeeded);
  /// - `.failure(error)` with the fetch's error, exactly as
  ///   ``beginFetch(completionHandler:)`` gives it: an HTTP status error is a
  ///   ``SessionFetcherError/status(code:data:)`` carrying the body, and `parse` is not called.
  ///
  /// ``stopFetching()`` behaves as for ``beginFetch(completionHandler:)``, also while `parse`
  /// runs: no completion, unless ``stopFetchingTriggersCompletionHandler`` asks for one with
  /// ``SessionFetcherError/cancelled``. ``waitForCompletion(timeout:)`` waits for the parse too.
  ///
  /// ```swift
  /// fetcher.beginFetch(parsing: { data, response in
  ///   try PropertyListDecoder().decode(Settings.self, from: data)
  /// }) { result in
  ///   switch result {
  ///   case .success(let settings): apply(settings)
  ///   case .failure(let error): report(error)
  ///   }
  /// }
  /// ```
  public func beginFetch<Value: Sendable>(
    parsing parse: @escaping ResponseParser<Value>,
    completionHandler: @escaping @Sendable (Result<Value, any Error>) -> Void
  ) {
    beginParsing(parse, forceCompletionOnStop: false, completionHandler: completionHandler)
  }

  /// Begins the fetch and decodes a successful body as JSON into `type` on a background queue,
  /// then delivers the value on ``callbackQueue``.
  ///
  /// Errors are those of ``beginFetch(parsing:completionHandler:)``: a body that does not decode
  /// fails with the decoder's `DecodingError`, unchanged; an HTTP status error arrives as
  /// ``SessionFetcherError/status(code:data:)`` with the body, undecoded.
  ///
  /// ```swift
  /// struct Repo: Decodable, Sendable { var name: String; var stars: Int }
  /// fetcher.beginFetch(decoding: [Repo].self) { result in
  ///   if case .success(let repos) = result { show(repos) }
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - type: the type to decode.
  ///   - decoder: the decoder, used from the background queue (configure it before the call and do
  ///     not change it while the fetch runs).
  ///   - completionHandler: runs once on ``callbackQueue``.
  public func beginFetch<Value: Decodable & Sendable>(
    decoding type: Value.Type, using decoder: JSONDecoder = JSONDecoder(),
    completionHandler: @escaping @Sendable (Result<Value, any Error>) -> Void
  ) {
    beginParsing(
      SessionFetcher.jsonParser(type, decoder: decoder), forceCompletionOnStop: false,
      completionHandler: completionHandler)
  }

  /// Begins the fetch and returns a successful body decoded as JSON into `type` (decoded on a
  /// background queue).
  ///
  /// ```swift
  /// struct User: Decodable, Sendable { var id: Int; var name: String }
  /// let decoder = JSONDecoder()
  /// decoder.keyDecodingStrategy = .convertFromSnakeCase
  /// let user = try await service.fetcher(urlString: "https://example.com/me")
  ///   .beginFetch(decoding: User.self, using: decoder)
  /// ```
  ///
  /// - Throws: `DecodingError` (unchanged) when the body does not decode;
  ///   ``SessionFetcherError`` (an HTTP status error carries the body) or `URLError` when the fetch
  ///   fails; ``SessionFetcherError/cancelled`` when the task is cancelled.
  public func beginFetch<Value: Decodable & Sendable>(
    decoding type: Value.Type, using decoder: JSONDecoder = JSONDecoder()
  ) async throws -> Value {
    try await awaitParsed(SessionFetcher.jsonParser(type, decoder: decoder))
  }

  // There is deliberately no public `beginFetch(parsing:) async`: a lone closure argument would let
  // `beginFetch { data, error in … }` resolve to it in async code. An async caller parses the
  // result of ``beginFetch()`` instead; it is not on the callback queue.

  // MARK: - Implementation

  private static func jsonParser<Value: Decodable & Sendable>(
    _ type: Value.Type, decoder: JSONDecoder
  ) -> ResponseParser<Value> {
    // `JSONDecoder` is not `Sendable` everywhere; the box hands it to the parse queue, the only
    // place it is used while the fetch runs.
    let box = UncheckedDecoder(decoder: decoder)
    return { data, _ in try box.decoder.decode(Value.self, from: data) }
  }

  /// Parse-then-complete for an awaiting caller: cancellation and ``stopFetching()`` throw
  /// ``SessionFetcherError/cancelled``, also while `parse` runs.
  private func awaitParsed<Value: Sendable>(_ parse: @escaping ResponseParser<Value>) async throws -> Value {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
        if Task.isCancelled {
          stop(forceCompletion: true)
        }
        beginParsing(parse, forceCompletionOnStop: true) { continuation.resume(with: $0) }
      }
    } onCancel: {
      stop(forceCompletion: true)
    }
  }

  private func beginParsing<Value: Sendable>(
    _ parse: @escaping ResponseParser<Value>, forceCompletionOnStop: Bool,
    completionHandler: @escaping @Sendable (Result<Value, any Error>) -> Void
  ) {
    // Written by the parser before the completion is queued, read by the completion.
    let parsed = Locked<Result<Value, any Error>?>(nil)
    begin(
      completion: { _, error in
        if let error {
          completionHandler(.failure(error))
        } else if let result = parsed.withLock({ $0 }) {
          completionHandler(result)
        } else {
          completionHandler(.failure(SessionFetcherError.invalidConfiguration("the body was not parsed")))
        }
      },
      forceCompletionOnStop: forceCompletionOnStop,
      successParser: { [weak self] data in
        let response = self?.response as? HTTPURLResponse
        let result = Result { try parse(data ?? Data(), response) }
        parsed.withLock { $0 = result }
      })
  }
}

/// Carries a `JSONDecoder` to the parse queue. `@unchecked Sendable`: the decoder is only read
/// there, one fetch at a time, after the caller finished configuring it.
private struct UncheckedDecoder: @unchecked Sendable {
  let decoder: JSONDecoder
}
