import Foundation
import SessionFetcher

/// Virtual time for the timers a fetch runs itself on a ``ScriptedEngine``: its timeout checks
/// (the request's idle timeout, `resourceTimeoutInterval`, a challenge block's wait) and its waits
/// before a retry. No timer fires until the test advances the clock, and then in the order of
/// their deadlines, so a test of what the fetcher decides when time passes neither sleeps nor
/// depends on the machine's load.
///
/// ```swift
/// let clock = ScriptedClock()
/// let engine = ScriptedEngine(clock: clock)
/// engine.respond(to: "/silent", with: .stall)
/// var request = URLRequest(url: engine.url("/silent"))
/// request.timeoutInterval = 30
/// let fetcher = engine.fetcher("/silent")
/// fetcher.request = request
/// let pending = Task { await fetcher.fetchResult() }
/// #expect(await clock.waitUntilArmed(.timeoutCheck))
/// await clock.advance(by: 30)
/// #expect(await pending.value.urlError?.code == .timedOut)
/// ```
///
/// The fetcher stamps an attempt's activity (a head, a chunk, bytes sent) with the clock's time,
/// and checks its idle timeout against it: activity between two advances counts at the time the
/// clock shows. The engine's own steps take no time on any clock; a test orders them against the
/// clock with ``ScriptedGate``s and ``ScriptedEngine/drainEvents()``.
///
/// Thread safety: every member may be called from any thread.
public final class ScriptedClock: Sendable {
  /// A timer a fetch armed on the clock.
  public struct Timer: Sendable, Equatable, CustomStringConvertible {
    /// What a timer is for.
    public enum Kind: Sendable, Equatable {
      /// An attempt's timeout check: when it fires, the fetcher ends the attempt if it has been
      /// idle for its idle timeout or reached its deadline, else arms the check again.
      case timeoutCheck
      /// The wait before a retry: when it fires, the next attempt begins.
      case retryWait
    }

    /// What the timer is for.
    public var kind: Kind
    /// When it fires, in seconds of the clock's time (see ``ScriptedClock/elapsed``).
    public var deadline: TimeInterval

    /// A timer of `kind` that fires at `deadline` (to compare with ``ScriptedClock/armedTimers``).
    public init(kind: Kind, deadline: TimeInterval) {
      self.kind = kind
      self.deadline = deadline
    }

    /// The kind and the deadline, for a test's failure message.
    public var description: String { "\(kind) at \(deadline)" }
  }

  private enum Target {
    case timeoutCheck(SessionFetcher)
    case retryWait(@Sendable () -> Void)

    var kind: Timer.Kind {
      switch self {
      case .timeoutCheck: return .timeoutCheck
      case .retryWait: return .retryWait
      }
    }
  }

  private struct Armed {
    var deadline: UInt64
    var target: Target
  }

  private struct Waiter {
    var id: UInt64
    var kind: Timer.Kind?
    var count: Int
    var continuation: CheckedContinuation<Bool, Never>
  }

  private struct State {
    /// The clock's time, in nanoseconds since it was made.
    var now: UInt64 = 0
    var lastToken: UInt64 = 0
    var armed: [UInt64: Armed] = [:]
    var lastWaiter: UInt64 = 0
    var waiters: [Waiter] = []

    func count(_ kind: Timer.Kind?) -> Int {
      armed.values.count { kind == nil || $0.target.kind == kind }
    }

    /// Removes and returns the waiters whose condition now holds.
    mutating func takeSatisfiedWaiters() -> [Waiter] {
      let satisfied = waiters.filter { count($0.kind) >= $0.count }
      waiters.removeAll { waiter in satisfied.contains { $0.id == waiter.id } }
      return satisfied
    }
  }

  private let state = Locked(State())
  /// Where the timers fire, one at a time, as the system clock's do on a queue of its own.
  private let queue = DispatchQueue(label: "FetcherTesting.ScriptedClock")

  /// A clock at time 0 with no timer armed.
  public init() {}

  /// The seconds the clock has been advanced by since it was made.
  public var elapsed: TimeInterval { Double(state.withLock { $0.now }) / 1e9 }

  /// The timers armed now, earliest deadline first (in arming order for the same deadline).
  public var armedTimers: [Timer] {
    state.withLock { state in
      state.armed.sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }
        .map { Timer(kind: $0.value.target.kind, deadline: Double($0.value.deadline) / 1e9) }
    }
  }

  /// Advances the clock by `seconds`, firing every timer whose deadline comes within them, earliest
  /// first: the clock shows each timer's deadline while it fires, and a timer armed by one that
  /// fired (a timeout check armed again) fires too if its deadline is within the advance. Returns
  /// once the last of them has fired; what the fetcher does in answer (its completion, the engine's
  /// cancellation) may still be under way.
  public func advance(by seconds: TimeInterval) async {
    let end = state.withLock { Self.deadline(after: seconds, from: $0.now) }
    while let due = takeNextDue(until: end) {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        queue.async {
          for (token, target) in due {
            switch target {
            case .timeoutCheck(let fetcher): fetcher.checkTimeout(token: token)
            case .retryWait(let wake): wake()
            }
          }
          continuation.resume()
        }
      }
    }
    state.withLock { $0.now = max($0.now, end) }
  }

  /// Returns true once at least `count` timers of `kind` (any kind when nil) are armed, at once if
  /// they are; false if that has not happened within `timeout` seconds of real time (a bound for a
  /// test that fails, never a wait that a passing test relies on).
  public func waitUntilArmed(_ kind: Timer.Kind? = nil, count: Int = 1, timeout: TimeInterval = 60) async
    -> Bool
  {
    var bound: Task<Void, Never>?
    defer { bound?.cancel() }
    return await withCheckedContinuation { continuation in
      let (id, satisfied) = state.withLock { state -> (UInt64, [Waiter]) in
        state.lastWaiter += 1
        state.waiters.append(
          Waiter(id: state.lastWaiter, kind: kind, count: count, continuation: continuation))
        return (state.lastWaiter, state.takeSatisfiedWaiters())
      }
      for waiter in satisfied { waiter.continuation.resume(returning: true) }
      // Started once the waiter is in: whichever of the bound and the arming takes it resumes it.
      bound = Task { [state] in
        try? await Task.sleep(nanoseconds: UInt64(min(max(0, timeout), 1e9) * 1e9))
        let expired = state.withLock { state -> Waiter? in
          guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
          return state.waiters.remove(at: index)
        }
        expired?.continuation.resume(returning: false)
      }
    }
  }

  private func takeNextDue(until end: UInt64) -> [(UInt64, Target)]? {
    state.withLock { state in
      guard let next = state.armed.values.map(\.deadline).min(), next <= end else { return nil }
      let tokens = state.armed.filter { $0.value.deadline == next }.keys.sorted()
      state.now = max(state.now, next)
      return tokens.compactMap { token in state.armed.removeValue(forKey: token).map { (token, $0.target) } }
    }
  }

  private func arm(_ target: Target, after delay: TimeInterval) -> UInt64 {
    let (token, satisfied) = state.withLock { state in
      state.lastToken += 1
      state.armed[state.lastToken] = Armed(
        deadline: Self.deadline(after: delay, from: state.now), target: target)
      return (state.lastToken, state.takeSatisfiedWaiters())
    }
    for waiter in satisfied { waiter.continuation.resume(returning: true) }
    return token
  }

  @discardableResult
  private func disarm(_ token: UInt64) -> Bool {
    // The target (a fetcher, a wake holding one) is released after the lock.
    let target = state.withLock { $0.armed.removeValue(forKey: token) }
    return target != nil
  }

  /// `delay` seconds after `start`, in nanoseconds (rounded, so that tenths add up); `UInt64.max`
  /// (never) from 2^62 nanoseconds on, an infinite delay included.
  private static func deadline(after delay: TimeInterval, from start: UInt64) -> UInt64 {
    let limit: UInt64 = 1 << 62
    let nanoseconds = max(0, delay) * 1e9
    guard start < limit, nanoseconds < Double(limit - start) else { return UInt64.max }
    return start + UInt64(nanoseconds.rounded())
  }
}

extension ScriptedClock: FetchClock {
  /// The clock's time as a date: time 0 is the reference date (2001-01-01), where whole seconds
  /// are exact, so that the fetcher's arithmetic on dates lands on the deadlines a test names.
  package var now: Date { Date(timeIntervalSinceReferenceDate: elapsed) }

  package func armTimeoutCheck(of fetcher: SessionFetcher, after delay: TimeInterval) -> UInt64 {
    arm(.timeoutCheck(fetcher), after: delay)
  }

  package func disarmTimeoutCheck(_ token: UInt64) {
    disarm(token)
  }

  package func armRetryWait(after delay: TimeInterval, wake: @escaping @Sendable () -> Void) -> UInt64 {
    arm(.retryWait(wake), after: delay)
  }

  package func cancelRetryWait(_ token: UInt64) -> Bool {
    disarm(token)
  }
}
