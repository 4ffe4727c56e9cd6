import Foundation

/// A pending wait before a fetch's next attempt: armed on the fetch's ``FetchClock`` (on the real
/// engines, one ``TimeoutClock`` that every fetcher and upload fetcher of the process shares), and
/// cancelled with everything it holds released at once. Only the token is kept (a fetcher's
/// lifecycle holds it inline): the wait is cancelled on the clock it was armed on, which the caller
/// names each time (no default: a wait cancelled on another clock would silently stay armed).
///
/// A `DispatchWorkItem` scheduled with `asyncAfter` cannot be withdrawn: cancelled, it stayed with
/// libdispatch, its closure included, until its deadline (minutes, for a long backoff), and a
/// process that exited before then had left it allocated.
package struct RetryDelay: Sendable, Equatable {
  /// Where retry delays end: a serial queue of its own, which libdispatch serves from its
  /// overcommitting pool (as the timeouts' queue), so that a program that keeps the global queues
  /// busy does not hold up its fetches' retries.
  package static let queue = DispatchQueue(label: "SessionFetcher.retries")

  /// The retry waits of ``SystemFetchClock``.
  static let clock = TimeoutClock<@Sendable () -> Void>(queue: queue) { wake, _ in wake() }

  private let token: UInt64

  /// Starts a wait of `seconds` on `clock`; `wake` then runs (on ``queue`` for the system clock)
  /// unless the wait is cancelled first.
  package init(
    seconds: TimeInterval, on clock: any FetchClock,
    wake: @escaping @Sendable () -> Void
  ) {
    token = clock.armRetryWait(after: seconds, wake: wake)
  }

  /// Cancels the wait, armed on `clock`, and releases its `wake`. Returns true when the wait was
  /// still pending (its `wake` has not run and now never will), false when it had already ended or
  /// been cancelled.
  @discardableResult
  package func cancel(on clock: any FetchClock) -> Bool {
    clock.cancelRetryWait(token)
  }
}
