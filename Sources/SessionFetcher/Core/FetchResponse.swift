import Foundation

/// What a successful fetch gave: the body, the final response and how the fetch went. Returned by
/// ``SessionFetcher/fetchResponse()``.
///
/// ```swift
/// import SessionFetcher
///
/// func feed() async throws -> Data {
///   let fetcher = SessionFetcher.fetcher(urlString: "https://example.com/feed.json")
///   let result = try await fetcher.fetchResponse()
///   print(result.statusCode, result.response?.value(forHTTPHeaderField: "ETag") ?? "-")
///   print(result.timing)
///   return result.data
/// }
/// ```
///
/// `@unchecked Sendable`: the `HTTPURLResponse` it holds is immutable once made (every property
/// read-only), so sharing it between threads is safe; only its `Sendable` conformance differs
/// between Apple's Foundation and swift-corelibs-foundation.
public struct FetchResponse: @unchecked Sendable {
  /// The response body; empty when it went to ``SessionFetcher/destinationFileURL`` or to
  /// ``SessionFetcher/accumulateDataBlock``.
  public var data: Data
  /// The final response (after redirects and retries); nil for a scheme that is not HTTP.
  public var response: HTTPURLResponse?
  /// The final response's status code (200–299, since other statuses throw); 0 without an HTTP
  /// response.
  public var statusCode: Int
  /// When the fetch ran and how much it moved.
  public var timing: FetchTiming

  /// Creates a result; ``statusCode`` comes from `response`.
  public init(data: Data, response: HTTPURLResponse?, timing: FetchTiming) {
    self.data = data
    self.response = response
    self.statusCode = response?.statusCode ?? 0
    self.timing = timing
  }
}
