import Foundation
import Testing

@testable import SessionFetcher

/// `TimeoutDecision`: the idle timeout and the attempt's deadline, whichever comes first (the
/// scripted engine's `ScriptedTimeoutTests` check that the fetcher acts on each answer).
@Suite("Timeout decision")
struct TimeoutDecisionTests {
  struct Row: Sendable, CustomTestStringConvertible {
    var name: String
    var idleTimeout: TimeInterval
    /// Seconds since the last activity.
    var idle: TimeInterval
    var resourceTimeout: TimeInterval?
    /// Seconds since the attempt began.
    var running: TimeInterval
    var expected: TimeoutDecision.Action
    var testDescription: String { "\(name) → \(expected)" }
  }

  static let rows: [Row] = [
    Row(
      name: "idle for less than the timeout", idleTimeout: 60, idle: 10, running: 10,
      expected: .checkAgain(after: 50)),
    Row(name: "idle for exactly the timeout", idleTimeout: 60, idle: 60, running: 60, expected: .timedOut),
    Row(name: "idle past the timeout", idleTimeout: 60, idle: 61, running: 61, expected: .timedOut),
    Row(
      name: "activity moves the check on", idleTimeout: 60, idle: 5, running: 500,
      expected: .checkAgain(after: 55)),
    Row(
      name: "the deadline comes before the idle limit", idleTimeout: 60, idle: 5, resourceTimeout: 100,
      running: 90, expected: .checkAgain(after: 10)),
    Row(
      name: "the deadline reached while busy", idleTimeout: 60, idle: 0, resourceTimeout: 100, running: 100,
      expected: .timedOut),
    Row(
      name: "the idle limit before the deadline", idleTimeout: 60, idle: 50, resourceTimeout: 100,
      running: 50,
      expected: .checkAgain(after: 10)),
    Row(
      name: "an infinite idle timeout, no deadline", idleTimeout: .infinity, idle: 1e9, running: 1e9,
      expected: .checkAgain(after: .infinity)),
    Row(
      name: "an infinite idle timeout, a deadline", idleTimeout: .infinity, idle: 1e6, resourceTimeout: 30,
      running: 29.5, expected: .checkAgain(after: 0.5)),
  ]

  @Test(arguments: rows)
  func decision(_ row: Row) {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let action = TimeoutDecision.decide(
      idleTimeout: row.idleTimeout, lastActivity: now.addingTimeInterval(-row.idle),
      resourceTimeout: row.resourceTimeout, attemptStart: now.addingTimeInterval(-row.running), now: now)
    #expect(action == row.expected)
  }
}
