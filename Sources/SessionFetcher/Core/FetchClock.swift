import Foundation

/// The time a fetch's own timers run on: the timeout check of its attempts and the wait before a
/// retry, armed after a number of seconds and disarmed, and the "now" an attempt's activity is
/// stamped with and its timeouts are checked against.
///
/// A fetch takes its clock from the engine session it runs on (``EngineSession/clock``):
/// ``SystemFetchClock/shared`` on the real engines, a virtual one that a test advances on the
/// scripted engine. The clock is one object for the whole fetch, so a token it gave is always
/// disarmed on the clock that armed it.
///
/// Thread safety: every member may be called from any thread, under the fetcher's lock (a clock
/// never calls back into the fetcher from `arm` or `disarm`). What fires is never called under the
/// clock's own lock, and may arm again.
package protocol FetchClock: AnyObject, Sendable {
  /// Now, on this clock.
  var now: Date { get }

  /// Arms the timeout check of `fetcher` for `delay` seconds from now; returns the token that
  /// disarms it. At the deadline the clock calls `fetcher.checkTimeout(token:)`, once, unless
  /// the token was disarmed first. Holds `fetcher` until then.
  func armTimeoutCheck(of fetcher: SessionFetcher, after delay: TimeInterval) -> UInt64

  /// Disarms a timeout check (nothing if it already fired or was disarmed).
  func disarmTimeoutCheck(_ token: UInt64)

  /// Arms a retry wait: `wake` runs `delay` seconds from now, once, unless the wait is cancelled
  /// first. Returns the token that cancels it.
  func armRetryWait(after delay: TimeInterval, wake: @escaping @Sendable () -> Void) -> UInt64

  /// Cancels a retry wait and releases its `wake`: true when it was still pending (its `wake` has
  /// not run and now never will), false when it had already ended or been cancelled.
  func cancelRetryWait(_ token: UInt64) -> Bool
}

/// The clock of the real engines: the process's monotonic time, with one ``TimeoutClock`` for
/// every fetcher's timeout checks and one for every retry wait, each on a serial queue of its own.
package final class SystemFetchClock: FetchClock {
  /// The one system clock (a fetch on a real engine allocates nothing for its clock).
  package static let shared = SystemFetchClock()

  private init() {}

  package var now: Date { Date() }

  package func armTimeoutCheck(of fetcher: SessionFetcher, after delay: TimeInterval) -> UInt64 {
    SessionFetcher.timeoutClock.arm(fetcher, after: delay)
  }

  package func disarmTimeoutCheck(_ token: UInt64) {
    SessionFetcher.timeoutClock.disarm(token)
  }

  package func armRetryWait(after delay: TimeInterval, wake: @escaping @Sendable () -> Void) -> UInt64 {
    RetryDelay.clock.arm(wake, after: delay)
  }

  package func cancelRetryWait(_ token: UInt64) -> Bool {
    RetryDelay.clock.disarm(token)
  }
}

extension EngineSession {
  /// The real time of the process, for every real engine.
  package var clock: any FetchClock { SystemFetchClock.shared }
}

extension FetchPlan {
  /// The clock of the fetch's timers: its engine session's.
  var clock: any FetchClock { session.engineSession.clock }
}

extension FetcherStorage {
  /// The clock of the fetch's timers: its engine session's once the fetch has a plan (always, while
  /// a timer of the fetch is armed), else the system clock.
  var clock: any FetchClock { plan?.clock ?? SystemFetchClock.shared }
}
