import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Where tokens come from: the SDK's sign-in. Here, a first token the server no longer takes and
/// the one a refresh gets.
struct TokenSource: Sendable {
  let first: String
  let refreshed: String
}

/// The SDK's authorizer, ported from a `GTMSessionFetcherAuthorizer`: GTM's completion-handler form
/// of `authorizeRequest`, `primeForRefresh` after a 401, `stopAuthorization`, and the service it
/// belongs to.
final class TokenAuthorizer: FetcherAuthorizer, Sendable {
  /// The SDK's "sign in first" error; it reaches the caller as itself.
  struct SignedOut: Error {}

  private struct State {
    var token: String?
    var refreshes = 0
    weak var service: (any FetcherServiceProtocol)?
  }

  private let source: TokenSource
  private let state: ExampleLock<State>

  init(tokens: TokenSource) {
    source = tokens
    state = ExampleLock(State(token: tokens.first))
  }

  /// How many times a 401 made the authorizer refresh its token.
  var refreshCount: Int { state.withLock { $0.refreshes } }

  func signOut() { state.withLock { $0.token = nil } }

  func authorizeRequest(
    _ request: URLRequest, completionHandler: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
  ) {
    let token = state.withLock { $0.token }
    guard let token else {
      completionHandler(.failure(SignedOut()))
      return
    }
    var request = request
    request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    completionHandler(.success(request))
  }

  /// GTM's rule: after a 401, a fetch whose authorizer says it can refresh is authorized again and
  /// sent once more. A real SDK asks its token endpoint here; the answer is the refreshed token.
  func primeForRefresh() -> Bool {
    state.withLock { state in
      guard state.token != nil else { return false }
      state.token = source.refreshed
      state.refreshes += 1
      return true
    }
  }

  func isAuthorizedRequest(_ request: URLRequest) -> Bool {
    let header = request.value(forHTTPHeaderField: "Authorization")
    return state.withLock { state in state.token.map { header == "Bearer \($0)" } ?? false }
  }

  var userEmail: String? { "ada@example.com" }

  var fetcherService: (any FetcherServiceProtocol)? {
    get { state.withLock { $0.service } }
    set { state.withLock { $0.service = newValue } }
  }
}
