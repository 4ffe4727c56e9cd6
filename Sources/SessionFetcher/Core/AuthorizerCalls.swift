import Foundation

/// One fetch's calls of its ``FetcherAuthorizer``, one per attempt, so that a stop reaches the call
/// in progress: its task is cancelled and the authorizer is told, once, which request to stop
/// authorizing (GTM's `stopAuthorizationForRequest:`), whatever else the fetch has to prepare.
///
/// ```
/// idle ──willAuthorize──▶ authorizing(request) ──didAuthorize──▶ idle
///   │                        │
///   └────────stop────────────┴──▶ stopped (stopAuthorization(for: request) if it was authorizing)
/// ```
///
/// Made when a fetch with an authorizer begins. The authorizer is called outside `state`'s lock.
/// `@unchecked Sendable`: the authorizer is fixed; `state` is behind its lock.
final class AuthorizerCalls: @unchecked Sendable {
  let authorizer: any FetcherAuthorizer
  private let state = Locked(State())

  private struct State {
    enum Phase {
      case idle
      case authorizing(URLRequest)
      case stopped
    }
    var phase = Phase.idle
    /// The task of the current attempt's preparation and authorization.
    var task: Task<Void, Never>?
  }

  init(_ authorizer: any FetcherAuthorizer) {
    self.authorizer = authorizer
  }

  /// Keeps `task` as the current attempt's, to cancel it if the fetch stops; cancels it at once if
  /// the fetch stopped already.
  func track(_ task: Task<Void, Never>) {
    let stopped = state.withLock { state -> Bool in
      guard case .stopped = state.phase else {
        state.task = task
        return false
      }
      return true
    }
    if stopped { task.cancel() }
  }

  /// `request` as the authorizer returns it, or as it is when the authorizer says it is authorized
  /// already (``FetcherAuthorizer/isAuthorizedRequest(_:)``), with whether the authorizer made it.
  /// Throws ``AttemptAbandoned`` when the fetch stopped before or during the call (whatever the
  /// authorizer returned or threw is dropped), else what the authorizer threw, as it is.
  func authorize(_ request: URLRequest) async throws -> (request: URLRequest, changed: Bool) {
    LockAudit.userBlock("the authorizer's isAuthorizedRequest")
    if authorizer.isAuthorizedRequest(request) { return (request, false) }
    let proceeds = state.withLock { state -> Bool in
      guard case .idle = state.phase else { return false }
      state.phase = .authorizing(request)
      return true
    }
    guard proceeds else { throw AttemptAbandoned() }
    let result: Result<URLRequest, any Error>
    do {
      LockAudit.userBlock("the authorizer's authorizeRequest")
      result = .success(try await authorizer.authorizeRequest(request))
    } catch {
      result = .failure(error)
    }
    let stillFetching = state.withLock { state -> Bool in
      guard case .authorizing = state.phase else { return false }
      state.phase = .idle
      return true
    }
    guard stillFetching else { throw AttemptAbandoned() }
    return (try result.get(), true)
  }

  /// The fetch stopped: cancels the current attempt's task, and tells the authorizer to stop the
  /// request it is authorizing, if any. Only the first call does anything.
  func stop() {
    let (task, request) = state.withLock { state -> (Task<Void, Never>?, URLRequest?) in
      defer {
        state.phase = .stopped
        state.task = nil
      }
      switch state.phase {
      case .authorizing(let request): return (state.task, request)
      case .idle: return (state.task, nil)
      case .stopped: return (nil, nil)
      }
    }
    task?.cancel()
    if let request {
      LockAudit.userBlock("the authorizer's stopAuthorization(for:)")
      authorizer.stopAuthorization(for: request)
    }
  }
}
