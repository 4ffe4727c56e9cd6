import Foundation
import SessionFetcher

/// The ETag bookkeeping of one attempt: which cache key it uses and which tag it sent.
struct PendingETag {
  /// Where the response is stored (see ``ETagCacheRules``).
  var key: ETagCacheRules.RequestKey
  /// The entry whose tag was sent, if one was.
  var entryKey: String?
  var sentTag: String?
  /// The request headers a response's `Vary` may name, as sent.
  var request: URLRequest
}

/// The service's shared session and which fetchers use it.
///
/// A fetcher takes its session when it begins (even one that then waits for a host slot), so a
/// session replaced by `resetSession()` is only invalidated once the last fetcher using it ended:
/// no task is ever created on an invalidated session.
struct SessionBook {
  var current: SharedSession?
  /// The session each fetcher took.
  var sessionOfFetcher: [ObjectIdentifier: SharedSession] = [:]
  /// How many fetchers use each session.
  var userCount: [ObjectIdentifier: Int] = [:]
  /// When the current session lost its last user (seconds on a monotonic clock); nil while it is
  /// in use.
  var idleSince: TimeInterval?
  /// Whether an idle check is queued. One at most, however many fetches end: a check per fetch
  /// would stay queued for the whole timeout (at 1,000 fetches a second, 60,000 of them).
  var idleCheckQueued = false
  /// How many shared sessions the service created (for tests).
  var createdCount = 0

  /// Records that `fetcher` uses `session`.
  mutating func assign(_ session: SharedSession, to fetcher: ObjectIdentifier) {
    guard sessionOfFetcher[fetcher] == nil else { return }
    sessionOfFetcher[fetcher] = session
    userCount[ObjectIdentifier(session), default: 0] += 1
    if session === current { idleSince = nil }
  }

  /// What to do once a fetcher ended.
  enum Release {
    case nothing
    /// The current session has no user left: check again after this many seconds.
    case checkIdle(after: TimeInterval)
    /// A replaced session has no user left: invalidate it.
    case invalidate(SharedSession)
  }

  /// `fetcher` ended at `now`; the current session is dropped once unused for `timeout` seconds.
  mutating func release(_ fetcher: ObjectIdentifier, now: TimeInterval, timeout: TimeInterval) -> Release {
    guard let session = sessionOfFetcher.removeValue(forKey: fetcher) else { return .nothing }
    // Not sized for the largest burst of fetchers for the service's life.
    sessionOfFetcher.releaseSparseStorage()
    let id = ObjectIdentifier(session)
    let remaining = (userCount[id] ?? 1) - 1
    userCount[id] = remaining > 0 ? remaining : nil
    guard remaining == 0 else { return .nothing }
    guard session === current else { return .invalidate(session) }
    idleSince = now
    guard !idleCheckQueued else { return .nothing }
    idleCheckQueued = true
    return .checkIdle(after: timeout)
  }

  /// What a queued idle check found.
  enum IdleCheck {
    /// In use again, or no session: nothing to do (the next release queues a check).
    case nothing
    /// Unused, but not for `timeout` yet: check again after this many seconds.
    case checkAgain(after: TimeInterval)
    /// Unused for `timeout`: detached; invalidate it.
    case invalidate(SharedSession)
  }

  /// The queued idle check runs at `now`.
  mutating func checkIdle(now: TimeInterval, timeout: TimeInterval) -> IdleCheck {
    idleCheckQueued = false
    guard let session = current, userCount[ObjectIdentifier(session)] == nil, let idleSince else {
      return .nothing
    }
    let idleFor = now - idleSince
    guard idleFor >= timeout else {
      idleCheckQueued = true
      return .checkAgain(after: timeout - idleFor)
    }
    current = nil
    self.idleSince = nil
    return .invalidate(session)
  }

  /// Detaches the current session; returns it if nobody uses it (invalidate it now), else nil (it
  /// is invalidated when its last fetcher ends).
  mutating func detachCurrent() -> SharedSession? {
    guard let session = current else { return nil }
    current = nil
    idleSince = nil
    return userCount[ObjectIdentifier(session)] == nil ? session : nil
  }
}

/// Everything mutable of a ``FetcherService``, behind its one lock.
struct ServiceState {
  /// The settings every fetcher the service makes takes, handed over whole when it is made (see
  /// `FetcherService.configure(_:)`). The session settings (`sessionConfiguration`,
  /// `configurationBlock`, `engine`, `engineSessions`) also make the shared session.
  var defaults = ServiceState.initialDefaults
  /// The service's User-Agent (see `FetcherService.addUserAgent(to:)`): added to
  /// requests, never a fetcher setting.
  var userAgent: String?
  /// Supplies the User-Agent of the service's fetches (see `FetcherService.userAgentProvider`); a
  /// fetcher's own provider replaces it.
  var userAgentProvider: (any UserAgentProvider)?
  /// Whether the service's fetchers share one session (see `FetcherService.reuseSession`).
  var reuseSession = true
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
  /// The decorators of fetches that begin from now on, in the order they run.
  var decorators: [any FetcherDecorator] = []
  /// Running fetchers the throttle does not count (no host and no `serviceHost`).
  var unthrottled: Set<SessionFetcher> = []

  /// A fetcher's defaults, but with a cookie jar of the service's own in place of
  /// `SessionCookieStorage.shared`.
  private static var initialDefaults: FetcherConfiguration {
    var defaults = FetcherConfiguration(request: nil)
    defaults.cookieStorage = SessionCookieStorage()
    return defaults
  }
}

/// A one-shot timer that can be armed again and cancelled for good: the service's idle check.
///
/// `@unchecked Sendable`: `source` is immutable, and a dispatch source may be used from any thread.
package final class IdleTimer: @unchecked Sendable {
  private let source: any DispatchSourceTimer

  /// What the handler holds while the timer exists (for tests: released once the timer is
  /// cancelled and libdispatch has let go of its handler).
  package final class Mark: Sendable {}

  private let mark = Mark()

  /// A disarmed timer that calls `handler` on `queue` each time an `arm(after:)` runs out.
  init(queue: DispatchQueue, handler: @escaping @Sendable () -> Void) {
    source = DispatchSource.makeTimerSource(queue: queue)
    source.setEventHandler { [mark] in
      withExtendedLifetime(mark) { handler() }
    }
    source.schedule(deadline: .distantFuture)
    source.activate()
  }

  /// Fires once, `delay` seconds from now (replacing any earlier deadline).
  func arm(after delay: TimeInterval) {
    source.schedule(deadline: .now() + delay, repeating: .never)
  }

  /// Stops the timer for good and lets go of its handler.
  func cancel() {
    source.cancel()
  }

  /// The handler's mark, to watch weakly.
  package var handlerMark: AnyObject { mark }
}
