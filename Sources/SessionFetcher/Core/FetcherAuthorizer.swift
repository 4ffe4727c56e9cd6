import Foundation

/// Adds credentials (for example an OAuth bearer token) to a fetcher's requests.
///
/// The fetcher calls ``authorizeRequest(_:)`` before every attempt, retries included, and sends the
/// request it returns. When the server answers 401, the fetcher asks ``primeForRefresh()`` once per
/// fetch; if it returns true, the fetcher authorizes again (without the old `Authorization` header)
/// and retries once, even when retries are otherwise off.
///
/// ```swift
/// struct TokenAuthorizer: FetcherAuthorizer {
///   let tokens: TokenStore
///   func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
///     var request = request
///     request.setValue("Bearer \(try await tokens.current())", forHTTPHeaderField: "Authorization")
///     return request
///   }
///   func primeForRefresh() async -> Bool { await tokens.expireCurrent(); return true }
/// }
/// ```
public protocol FetcherAuthorizer: Sendable {
  /// Returns `request` with credentials added. Throwing fails the fetch with
  /// ``SessionFetcherError/authorizationFailed(description:)``.
  func authorizeRequest(_ request: URLRequest) async throws -> URLRequest

  /// Called after a 401: prepare fresh credentials and return true to retry once.
  /// The default returns true.
  func primeForRefresh() async -> Bool
}

extension FetcherAuthorizer {
  /// Retries once after a 401 by default.
  public func primeForRefresh() async -> Bool { true }
}
