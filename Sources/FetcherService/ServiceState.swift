import Foundation
import SessionFetcher

/// What a service copies into every fetcher it makes.
struct FetcherDefaults {
  var callbackQueue: DispatchQueue = .main
  var isRetryEnabled = false
  var retryBlock: SessionFetcher.RetryBlock?
  var minRetryInterval: TimeInterval = 0
  var maxRetryInterval: TimeInterval = 0
  var allowedInsecureSchemes: [String] = []
  var allowLocalhostRequest = false
  var credential: URLCredential?
  var proxyCredential: URLCredential?
  var authorizer: (any FetcherAuthorizer)?
  var userAgent: String?
  var stopFetchingTriggersCompletionHandler = false
  var testBlock: SessionFetcher.TestBlock?
  var configuration: URLSessionConfiguration?
  var configurationBlock: (@Sendable (URLSessionConfiguration) -> Void)?
  var properties: [String: any Sendable] = [:]
  var cookieStorage = SessionCookieStorage()
  var reuseSession = true
}

/// The ETag bookkeeping of one attempt: which cache key it uses and which tag it sent.
struct PendingETag {
  var key: String
  var sentTag: String?
}

/// The service's shared session and which fetchers use it.
///
/// A fetcher takes its session when it begins (even one that then waits for a host slot), so a
/// session replaced by `resetSession()` is only invalidated once the last fetcher using it ended:
/// no task is ever created on an invalidated session.
struct SessionBook {
  var current: FetcherSession?
  /// The session each fetcher took.
  var sessionOfFetcher: [ObjectIdentifier: FetcherSession] = [:]
  /// How many fetchers use each session.
  var userCount: [ObjectIdentifier: Int] = [:]
  /// Bumped whenever the current session is used, so a stale idle timer does nothing.
  var idleGeneration = 0
  /// How many shared sessions the service created (for tests).
  var createdCount = 0

  /// Records that `fetcher` uses `session`.
  mutating func assign(_ session: FetcherSession, to fetcher: ObjectIdentifier) {
    guard sessionOfFetcher[fetcher] == nil else { return }
    sessionOfFetcher[fetcher] = session
    userCount[ObjectIdentifier(session), default: 0] += 1
    idleGeneration += 1
  }

  /// What to do once a fetcher ended.
  enum Release {
    case nothing
    /// The current session has no user left: start its idle timer with this generation.
    case startIdleTimer(generation: Int)
    /// A replaced session has no user left: invalidate it.
    case invalidate(FetcherSession)
  }

  mutating func release(_ fetcher: ObjectIdentifier) -> Release {
    guard let session = sessionOfFetcher.removeValue(forKey: fetcher) else { return .nothing }
    let id = ObjectIdentifier(session)
    let remaining = (userCount[id] ?? 1) - 1
    userCount[id] = remaining > 0 ? remaining : nil
    guard remaining == 0 else { return .nothing }
    if session === current {
      idleGeneration += 1
      return .startIdleTimer(generation: idleGeneration)
    }
    return .invalidate(session)
  }

  /// Detaches the current session; returns it if nobody uses it (invalidate it now), else nil (it
  /// is invalidated when its last fetcher ends).
  mutating func detachCurrent() -> FetcherSession? {
    guard let session = current else { return nil }
    current = nil
    idleGeneration += 1
    return userCount[ObjectIdentifier(session)] == nil ? session : nil
  }

  /// Whether the current session is unused and the idle timer of `generation` is still current.
  func isIdle(generation: Int) -> Bool {
    guard let current, generation == idleGeneration else { return false }
    return userCount[ObjectIdentifier(current)] == nil
  }
}

/// Everything mutable of a ``FetcherService``, behind its one lock.
struct ServiceState {
  var defaults = FetcherDefaults()
  var throttle = HostThrottle<SessionFetcher>(maxRunningPerHost: 10)
  /// Fetchers waiting out a retry delay, per host key (for early retry).
  var retryWaiters: [String: Set<SessionFetcher>] = [:]
  var etagCache = ETagCache(capacity: FetcherService.defaultETagCacheCapacity)
  var pendingETags: [ObjectIdentifier: PendingETag] = [:]
  var shouldRememberETags = false
  var shouldCacheETaggedData = false
  var isEarlyRetryEnabled = false
  var unusedSessionTimeout: TimeInterval = 60
  var sessions = SessionBook()
}
