import Foundation

extension SessionFetcher {
  /// Encodes `value` as JSON and makes it the request body (``bodyData``), with
  /// `Content-Type: application/json` unless the request already has a `Content-Type`. A GET with
  /// a body is sent as POST; set the request's `httpMethod` for PUT or PATCH.
  ///
  /// Encoding happens now, once: every attempt sends the same bytes. A value that fails to encode
  /// throws the encoder's error (an `EncodingError`) and changes nothing: the body and the headers
  /// stay as they were. Replaces ``bodyFileURL`` and ``bodyStreamProvider`` when it succeeds (a
  /// fetcher sends one body).
  ///
  /// ```swift
  /// import SessionFetcher
  ///
  /// struct NewNote: Encodable {
  ///   var title: String
  /// }
  ///
  /// func post(_ note: NewNote) async throws -> Data {
  ///   let fetcher = SessionFetcher.fetcher(urlString: "https://example.com/notes")
  ///   try fetcher.setJSONBody(note)
  ///   return try await fetcher.beginFetch()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - value: what to send.
  ///   - encoder: the encoder to use (for its date, key and output strategies); `using:` as in
  ///     ``beginFetch(decoding:using:)``.
  /// - Throws: the error `encoder` throws; nothing is changed then.
  public func setJSONBody(_ value: some Encodable, using encoder: JSONEncoder = JSONEncoder()) throws {
    let body = try encoder.encode(value)
    storage.withLock { storage in
      storage.config.bodyData = body
      storage.config.bodyFileURL = nil
      storage.config.bodyStreamProvider = nil
      storage.config.bodyLength = nil
      storage.config.bodyStreamHasExactLength = false
      if storage.config.request?.value(forHTTPHeaderField: "Content-Type") == nil,
        storage.lifecycle.phase == .idle
      {
        storage.config.request?.setValue("application/json", forHTTPHeaderField: "Content-Type")
      }
    }
  }

  /// The former spelling of ``setJSONBody(_:using:)``.
  @available(*, deprecated, renamed: "setJSONBody(_:using:)")
  public func setJSONBody(_ value: some Encodable, encoder: JSONEncoder) throws {
    try setJSONBody(value, using: encoder)
  }
}
