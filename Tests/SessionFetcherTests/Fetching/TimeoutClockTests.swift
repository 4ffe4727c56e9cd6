import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// The one timer behind every fetcher's timeouts: the schedule as pure logic, then the clock with a
/// real dispatch timer.
@Suite("Timeout clock")
struct TimeoutClockTests {
  /// One step of a schedule script.
  enum Step: Sendable, CustomStringConvertible {
    case arm(String, at: UInt64)
    case disarm(String, returns: Bool)
    case due(now: UInt64, [String])
    case next(UInt64?)

    var description: String {
      switch self {
      case .arm(let name, let deadline): "arm \(name) at \(deadline)"
      case .disarm(let name, let returns): "disarm \(name) → \(returns)"
      case .due(let now, let names): "due at \(now): \(names)"
      case .next(let deadline): "next \(deadline.map(String.init) ?? "none")"
      }
    }
  }

  static let scripts: [(String, [Step])] = [
    (
      "due in deadline order, whatever the arming order",
      [
        .arm("c", at: 30), .arm("a", at: 10), .arm("b", at: 20), .next(10), .due(now: 30, ["a", "b", "c"]),
        .next(nil),
      ]
    ),
    (
      "the same deadline fires in arming order",
      [.arm("x", at: 5), .arm("y", at: 5), .arm("z", at: 5), .due(now: 5, ["x", "y", "z"])]
    ),
    (
      "nothing is due before its deadline; a deadline equal to now is due",
      [
        .arm("a", at: 10), .arm("b", at: 11), .due(now: 9, []), .due(now: 10, ["a"]), .next(11),
        .due(now: 11, ["b"]),
      ]
    ),
    (
      "a disarmed target is never due, and the next deadline skips it",
      [
        .arm("a", at: 10), .arm("b", at: 20), .disarm("a", returns: true), .next(20), .due(now: 100, ["b"]),
      ]
    ),
    (
      "disarming twice, or after firing, finds nothing",
      [
        .arm("a", at: 10), .disarm("a", returns: true), .disarm("a", returns: false), .arm("b", at: 10),
        .due(now: 10, ["b"]), .disarm("b", returns: false),
      ]
    ),
    (
      "a target armed again gets a new token: the old one disarms nothing of the new",
      [
        .arm("a", at: 10), .disarm("a", returns: true), .arm("a", at: 50), .due(now: 10, []),
        .due(now: 50, ["a"]),
      ]
    ),
    (
      "a deadline at the end of time is kept, not wrapped",
      [.arm("late", at: .max), .arm("soon", at: 1), .due(now: 1_000_000, ["soon"]), .next(.max)]
    ),
  ]

  @Test("schedule scripts", arguments: scripts)
  func scheduleScript(_ name: String, _ steps: [Step]) {
    var schedule = DeadlineSchedule<String>()
    var tokens: [String: UInt64] = [:]
    for step in steps {
      switch step {
      case .arm(let name, let deadline):
        tokens[name] = schedule.arm(name, at: deadline)
      case .disarm(let name, let returns):
        let target = tokens[name].flatMap { schedule.disarm($0) }
        #expect((target != nil) == returns, "\(name): \(step)")
        if let target { #expect(target == name) }
      case .due(let now, let names):
        let due = schedule.takeDue(now: now)
        #expect(due.map(\.target) == names, "\(name): \(step)")
        for entry in due { #expect(tokens[entry.target] == entry.token) }
      case .next(let deadline):
        #expect(schedule.nextDeadline() == deadline, "\(name): \(step)")
      }
    }
  }

  /// Thousands of random arms, disarms and takes against a plain list: the same targets come due,
  /// in the same order, and the heap never holds much more than what is armed.
  @Test func randomOperationsMatchAPlainListAndStayBounded() {
    var random = SeededGenerator(seed: 0x5EED)
    var schedule = DeadlineSchedule<Int>()
    var model: [(deadline: UInt64, token: UInt64, target: Int)] = []
    var now: UInt64 = 0
    var largestStored = 0
    for step in 0..<20_000 {
      switch random.next() % 10 {
      case 0...4:
        let deadline = now + random.next() % 1_000
        let token = schedule.arm(step, at: deadline)
        model.append((deadline, token, step))
      case 5...7:
        guard !model.isEmpty else { continue }
        let index = Int(random.next() % UInt64(model.count))
        let entry = model.remove(at: index)
        #expect(schedule.disarm(entry.token) == entry.target)
      default:
        now += random.next() % 200
        let expected = model.filter { $0.deadline <= now }.sorted {
          ($0.deadline, $0.token) < ($1.deadline, $1.token)
        }
        model.removeAll { $0.deadline <= now }
        let due = schedule.takeDue(now: now)
        #expect(due.map(\.target) == expected.map(\.target))
      }
      #expect(schedule.armedCount == model.count)
      #expect(schedule.nextDeadline() == model.map(\.deadline).min())
      largestStored = max(largestStored, schedule.storedCount - 2 * schedule.armedCount)
    }
    // Stale entries are dropped once they outnumber the armed ones (and there are more than 64).
    #expect(largestStored <= 65)
  }

  @Test func disarmingTenThousandKeepsTheHeapSmall() {
    var schedule = DeadlineSchedule<Int>()
    let tokens = (0..<10_000).map { schedule.arm($0, at: 1_000 + UInt64($0)) }
    for token in tokens.dropLast() { schedule.disarm(token) }
    #expect(schedule.armedCount == 1)
    #expect(schedule.storedCount <= 66)
    #expect(schedule.takeDue(now: .max).map(\.target) == [9_999])
  }

  @Test(
    "the armed table gives back a burst's storage once the burst is over",
    arguments: [("disarmed", true), ("fired", false)])
  func aBurstLeavesNoTableSizedForIt(ending: String, disarms: Bool) {
    var schedule = DeadlineSchedule<Int>()
    let tokens = (0..<5_000).map { schedule.arm($0, at: 1_000 + UInt64($0)) }
    #expect(schedule.armedCapacity >= 5_000)
    // All but the last ten end; those still fire, in order.
    if disarms {
      for token in tokens.dropLast(10) { schedule.disarm(token) }
    } else {
      #expect(schedule.takeDue(now: 1_000 + 4_989).count == 4_990)
    }
    #expect(schedule.armedCapacity <= Dictionary<UInt64, Int>.sparseStorageFloor)
    #expect(schedule.takeDue(now: .max).map(\.target) == Array(4_990..<5_000))
  }

  @Test(
    "deadlines: negative delays are now, huge ones the end of time",
    arguments: [
      (0.0, UInt64(500), UInt64(500)),
      (-3.0, 500, 500),
      (1.5, 500, 1_500_000_500),
      (1e300, 500, .max),
      (.infinity, 500, .max),
      (.nan, 500, 500),
      // From 2^62 nanoseconds on, never (dispatch would read a larger value as another clock's).
      (4.6e9, 500, 4_600_000_000_000_000_500),
      (4.62e9, 500, .max),
      (1.7e10, 500, .max),
      (0.0, 1 << 62, .max),
    ])
  func deadlineArithmetic(delay: TimeInterval, start: UInt64, expected: UInt64) {
    #expect(TimeoutClock<Int>.deadline(after: delay, from: start) == expected)
  }

  final class Target: Sendable {
    let name: String
    init(_ name: String) { self.name = name }
  }

  /// The clock's timer fires each target once, earliest deadline first, never a disarmed one.
  @Test func theTimerFiresInDeadlineOrderAndNeverADisarmedTarget() async throws {
    let fired = Recorder<String>()
    let queue = DispatchQueue(label: "test.clock")
    let clock = TimeoutClock<Target>(queue: queue) { target, _ in
      fired.append(target.name)
    }
    // The clock's queue is held while the targets are armed (in deadline order, so that a stall of
    // this thread cannot reorder them) and one is disarmed: its deadline passes before the queue
    // runs again, however slow this thread is, and it must still not fire.
    queue.suspend()
    _ = clock.arm(Target("first"), after: 0.05)
    let never = clock.arm(Target("never"), after: 0.06)
    _ = clock.arm(Target("second"), after: 0.1)
    _ = clock.arm(Target("third"), after: 0.15)
    clock.disarm(never)
    try await Task.sleep(nanoseconds: 300_000_000)
    queue.resume()
    #expect(await eventually(timeout: 60) { fired.count == 3 })
    #expect(fired.values == ["first", "second", "third"])
    #expect(clock.armedCount == 0)
  }

  @Test func anEarlierDeadlineArmedLaterStillFiresFirst() async throws {
    let fired = Recorder<String>()
    let clock = TimeoutClock<Target>(queue: DispatchQueue(label: "test.clock")) { target, _ in
      fired.append(target.name)
    }
    // The timer is set for an hour; the later arm must bring it forward.
    let late = clock.arm(Target("late"), after: 3_600)
    _ = clock.arm(Target("soon"), after: 0.05)
    #expect(await eventually(timeout: 60) { fired.count == 1 })
    #expect(fired.values == ["soon"])
    clock.disarm(late)
    #expect(clock.armedCount == 0)
  }

  @Test func aTargetCanArmAgainFromItsFiring() async throws {
    let fired = Recorder<Int>()
    let box = Locked<TimeoutClock<Target>?>(nil)
    let clock = TimeoutClock<Target>(queue: DispatchQueue(label: "test.clock")) { target, _ in
      fired.append(fired.count)
      if fired.count < 3, let clock = box.current { _ = clock.arm(target, after: 0.01) }
    }
    box.withLock { $0 = clock }
    _ = clock.arm(Target("again"), after: 0.01)
    #expect(await eventually(timeout: 60) { fired.count == 3 })
    #expect(clock.armedCount == 0)
    box.withLock { $0 = nil }
  }

  /// The clock holds an armed target, and lets go of it as soon as it is disarmed or has fired.
  @Test func theClockLetsGoOfDisarmedAndFiredTargets() async throws {
    let clock = TimeoutClock<Target>(queue: DispatchQueue(label: "test.clock")) { _, _ in }
    weak var disarmed: Target?
    weak var fired: Target?
    do {
      let first = Target("disarmed")
      let second = Target("fired")
      disarmed = first
      fired = second
      let token = clock.arm(first, after: 3_600)
      _ = clock.arm(second, after: 0.01)
      clock.disarm(token)
    }
    #expect(disarmed == nil)
    #expect(await eventually(timeout: 60) { fired == nil })
  }
}

/// The waits between attempts, on the same kind of clock: a cancelled wait lets go of what it holds
/// at once (a cancelled `asyncAfter` work item stayed with libdispatch until its deadline).
@Suite("Retry delays")
struct RetryDelayTests {
  final class Held: Sendable {}

  @Test func aCancelledWaitReleasesItsWakeAtOnceAndNeverWakes() {
    let woke = Locked(false)
    weak var held: Held?
    let wait: RetryDelay
    do {
      let object = Held()
      held = object
      wait = RetryDelay(seconds: 3_600, on: SystemFetchClock.shared) {
        withExtendedLifetime(object) {}
        woke.withLock { $0 = true }
      }
    }
    #expect(held != nil)
    #expect(wait.cancel(on: SystemFetchClock.shared))
    #expect(held == nil)
    #expect(!wait.cancel(on: SystemFetchClock.shared))
    #expect(!woke.current)
  }

  @Test func aWaitThatEndedCannotBeCancelled() async {
    let woke = Locked(0)
    let wait = RetryDelay(seconds: 0.01, on: SystemFetchClock.shared) { woke.withLock { $0 += 1 } }
    #expect(await eventually(timeout: 60) { woke.current == 1 })
    #expect(!wait.cancel(on: SystemFetchClock.shared))
    #expect(woke.current == 1)
  }
}
