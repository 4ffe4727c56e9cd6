import Foundation

/// The armed deadlines of a ``TimeoutClock``, earliest first: a binary min-heap of
/// `(deadline, token)` beside the armed targets by token. A value type, kept behind the clock's lock.
///
/// Disarming removes the target at once (so it is released at once) and leaves its heap entry
/// behind, skipped when it comes to the top. Whenever a disarm or a take leaves stale entries
/// outnumbering armed ones (past 64 entries), the heap is rebuilt from the armed ones, so it holds
/// at most about twice what is armed. The table of armed targets gives back its storage once it
/// holds far fewer than it grew to (``Swift/Dictionary/releaseSparseStorage()``): a burst of
/// fetches ended or stopped leaves no table sized for the burst.
package struct DeadlineSchedule<Target> {
  private struct Entry {
    var deadline: UInt64
    var token: UInt64
  }

  private var heap: [Entry] = []
  private var armed: [UInt64: (deadline: UInt64, target: Target)] = [:]
  private var lastToken: UInt64 = 0

  package init() {}

  /// The number of armed targets.
  package var armedCount: Int { armed.count }

  /// The number of heap entries, stale ones included (bounded; for tests).
  package var storedCount: Int { heap.count }

  /// How many targets the table of armed ones has room for without growing (for tests).
  package var armedCapacity: Int { armed.capacity }

  /// Arms `target` for `deadline`; returns the token that disarms it. Tokens are never reused.
  package mutating func arm(_ target: Target, at deadline: UInt64) -> UInt64 {
    lastToken += 1
    armed[lastToken] = (deadline, target)
    push(Entry(deadline: deadline, token: lastToken))
    return lastToken
  }

  /// Disarms `token` and returns its target; nil if it already fired or was disarmed.
  @discardableResult
  package mutating func disarm(_ token: UInt64) -> Target? {
    guard let entry = armed.removeValue(forKey: token) else { return nil }
    armed.releaseSparseStorage()
    rebuildIfMostlyStale()
    return entry.target
  }

  /// Removes the targets whose deadline is at or before `now` and returns them with their tokens,
  /// earliest deadline first.
  package mutating func takeDue(now: UInt64) -> [(token: UInt64, target: Target)] {
    var due: [(token: UInt64, target: Target)] = []
    while let top = heap.first, top.deadline <= now {
      popTop()
      if let entry = armed.removeValue(forKey: top.token) { due.append((top.token, entry.target)) }
    }
    if !due.isEmpty {
      armed.releaseSparseStorage()
      rebuildIfMostlyStale()
    }
    return due
  }

  /// The earliest armed deadline (stale entries on top are dropped on the way).
  package mutating func nextDeadline() -> UInt64? {
    while let top = heap.first {
      if armed[top.token] != nil { return top.deadline }
      popTop()
    }
    return nil
  }

  private mutating func rebuildIfMostlyStale() {
    if heap.count > 64, heap.count > 2 * armed.count { rebuild() }
  }

  private mutating func rebuild() {
    // A sorted array is a valid min-heap.
    heap = armed.map { Entry(deadline: $0.value.deadline, token: $0.key) }
    heap.sort { Self.precedes($0, $1) }
  }

  /// Earlier deadline first; the earlier token first for the same deadline (arming order).
  private static func precedes(_ lhs: Entry, _ rhs: Entry) -> Bool {
    (lhs.deadline, lhs.token) < (rhs.deadline, rhs.token)
  }

  private mutating func push(_ entry: Entry) {
    heap.append(entry)
    var child = heap.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard Self.precedes(heap[child], heap[parent]) else { break }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  private mutating func popTop() {
    let last = heap.removeLast()
    guard !heap.isEmpty else { return }
    heap[0] = last
    var parent = 0
    while true {
      let left = 2 * parent + 1
      guard left < heap.count else { break }
      let right = left + 1
      let child = right < heap.count && Self.precedes(heap[right], heap[left]) ? right : left
      guard Self.precedes(heap[child], heap[parent]) else { break }
      heap.swapAt(child, parent)
      parent = child
    }
  }
}

/// One timer for the timeouts of every fetcher of the process: a ``DeadlineSchedule`` and a single
/// dispatch timer source set for its earliest deadline.
///
/// Arming and disarming cost a lock and a heap operation, far less than a dispatch timer source per
/// attempt (its creation, arming, cancellation, and the weak reference its handler held). The clock holds an armed target strongly until it fires or
/// is disarmed, so a target must disarm when it no longer needs the timeout.
///
/// `fire` runs on the clock's serial queue, one target after another, never under the clock's lock
/// (a target may arm again from it).
package final class TimeoutClock<Target>: @unchecked Sendable {
  // `@unchecked Sendable`: `state` is only touched under its lock, `timer` is set up in `init` and
  // then only rescheduled (under that lock), and `fire` is immutable.
  private struct State {
    var schedule = DeadlineSchedule<Target>()
    /// The deadline the timer source is set for, if any.
    var wake: UInt64?
  }

  private let state = Locked(State())
  private let timer: DispatchSourceTimer
  private let fire: @Sendable (Target, UInt64) -> Void

  /// A clock whose timer runs on `queue` (serial), calling `fire(target, token)` for each target
  /// whose deadline has passed.
  package init(queue: DispatchQueue, fire: @escaping @Sendable (Target, UInt64) -> Void) {
    self.fire = fire
    timer = DispatchSource.makeTimerSource(queue: queue)
    timer.setEventHandler { [unowned self] in self.wake() }
    timer.resume()
  }

  deinit {
    timer.cancel()
  }

  /// Now, in the clock's time base (monotonic nanoseconds).
  package static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

  /// Arms `target` to fire `delay` seconds from now; returns the token for ``disarm(_:)``.
  package func arm(_ target: Target, after delay: TimeInterval) -> UInt64 {
    let deadline = Self.deadline(after: delay, from: Self.now)
    return state.withLock { state in
      let token = state.schedule.arm(target, at: deadline)
      if state.wake.map({ deadline < $0 }) ?? true { setTimer(&state, to: deadline) }
      return token
    }
  }

  /// Disarms `token` (nothing if it already fired); true when it was still armed. The timer may
  /// still wake for it once, and find nothing to do.
  @discardableResult
  package func disarm(_ token: UInt64) -> Bool {
    // The target is released after the lock: its deinit may do anything.
    let target = state.withLock { $0.schedule.disarm(token) }
    return withExtendedLifetime(target) { target != nil }
  }

  /// The number of armed targets (for tests).
  package var armedCount: Int { state.withLock { $0.schedule.armedCount } }

  /// `delay` seconds after `start`, in nanoseconds. Anything from 2^62 nanoseconds on (146 years)
  /// is `UInt64.max`, which dispatch reads as never: with the top bits set, a value would be read
  /// as another clock's time, already past, and the timer would fire at once, again and again.
  package static func deadline(after delay: TimeInterval, from start: UInt64) -> UInt64 {
    let limit: UInt64 = 1 << 62
    let nanoseconds = max(0, delay) * 1e9
    guard start < limit, nanoseconds < Double(limit - start) else { return UInt64.max }
    return start + UInt64(nanoseconds)
  }

  private func setTimer(_ state: inout State, to deadline: UInt64) {
    state.wake = deadline
    // Under the lock, so that two arms never leave the later deadline set.
    timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline))
  }

  private func wake() {
    let due = state.withLock { state in
      let due = state.schedule.takeDue(now: Self.now)
      if let next = state.schedule.nextDeadline() {
        setTimer(&state, to: next)
      } else {
        state.wake = nil
      }
      return due
    }
    for (token, target) in due { fire(target, token) }
  }
}
