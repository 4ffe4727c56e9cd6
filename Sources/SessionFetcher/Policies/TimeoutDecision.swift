import Foundation

/// Whether an attempt has timed out when its timeout check fires: value in, action out, no lock
/// and no I/O. The fetcher reads the attempt's times under its lock, decides here, and either ends
/// the attempt or arms the check again (`SessionFetcher.checkTimeout(token:)`).
///
/// An attempt times out when it has been idle (no byte sent or received, no head) for the idle
/// timeout, or has run for the resource timeout since it began, whichever comes first.
package enum TimeoutDecision {
  package enum Action: Equatable, Sendable {
    /// End the attempt with a timeout.
    case timedOut
    /// Check again after this many seconds, when the sooner of the two limits would be reached.
    case checkAgain(after: TimeInterval)
  }

  /// - Parameters:
  ///   - idleTimeout: the idle timeout (the request's `timeoutInterval`).
  ///   - lastActivity: the attempt's last activity.
  ///   - resourceTimeout: the attempt's deadline (``SessionFetcher/resourceTimeoutInterval``), if any.
  ///   - attemptStart: when the attempt began.
  ///   - now: the time of the check.
  package static func decide(
    idleTimeout: TimeInterval, lastActivity: Date, resourceTimeout: TimeInterval?, attemptStart: Date,
    now: Date
  ) -> Action {
    let idleLeft = idleTimeout - now.timeIntervalSince(lastActivity)
    let deadlineLeft = resourceTimeout.map { $0 - now.timeIntervalSince(attemptStart) } ?? .infinity
    if idleLeft <= 0 || deadlineLeft <= 0 { return .timedOut }
    return .checkAgain(after: min(idleLeft, deadlineLeft))
  }
}
