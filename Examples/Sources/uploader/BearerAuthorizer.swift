import FetcherService
import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Adds `Authorization: Bearer TOKEN` to every request of the service it is given to. After a 401
/// the fetcher asks `primeForRefresh()` once: the authorizer trades its refresh token for a new
/// access token at the token endpoint (an OAuth 2 `refresh_token` grant) and the request is sent
/// once more with it.
final class BearerAuthorizer: FetcherAuthorizer, Sendable {
  /// The token endpoint's answer.
  private struct TokenReply: Decodable {
    let accessToken: String
  }

  private struct State {
    var token: String
    var refreshes = 0
    weak var service: (any FetcherServiceProtocol)?
  }

  private let refreshToken: String?
  private let tokenURL: URL
  private let state: UploaderLock<State>

  init(token: String, refreshToken: String?, tokenURL: URL) {
    self.refreshToken = refreshToken
    self.tokenURL = tokenURL
    state = UploaderLock(State(token: token))
  }

  /// How many times a 401 made the authorizer get a new token.
  var refreshCount: Int { state.withLock { $0.refreshes } }

  func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
    var request = request
    request.setValue("Bearer \(state.withLock { $0.token })", forHTTPHeaderField: "Authorization")
    return request
  }

  func primeForRefresh() async -> Bool {
    guard let refreshToken, let service = fetcherService else { return false }
    // A fetcher of the same service (its engine, logging, allowed schemes), without this
    // authorizer: the token endpoint takes the refresh token in the body, not a bearer token.
    let fetcher = service.fetcher(url: tokenURL)
    fetcher.authorizer = nil
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    do {
      try fetcher.setFormBody([("grant_type", "refresh_token"), ("refresh_token", .text(refreshToken))])
      let reply = try await fetcher.beginFetch(decoding: TokenReply.self, using: decoder)
      state.withLock { state in
        state.token = reply.accessToken
        state.refreshes += 1
      }
      return true
    } catch {
      return false  // The 401 is then the fetch's error.
    }
  }

  var fetcherService: (any FetcherServiceProtocol)? {
    get { state.withLock { $0.service } }
    set { state.withLock { $0.service = newValue } }
  }
}
