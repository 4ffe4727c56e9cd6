import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// The scripted engine's virtual clock itself: timers fire only when it is advanced, in the order
/// of their deadlines, and a test can wait for one to be armed.
@Suite("ScriptedClock")
struct ScriptedClockTests {
  @Test func timersFireInTheOrderOfTheirDeadlinesOnlyWhenAdvanced() async {
    let clock = ScriptedClock()
    let fired = Recorder<String>()
    // Armed out of order; two share a deadline (they fire in the order they were armed).
    _ = clock.armRetryWait(after: 5) { fired.append("5 s (\(clock.elapsed))") }
    _ = clock.armRetryWait(after: 2) { fired.append("2 s (\(clock.elapsed))") }
    _ = clock.armRetryWait(after: 5) { fired.append("5 s, second (\(clock.elapsed))") }
    _ = clock.armRetryWait(after: 9) { fired.append("9 s") }
    #expect(clock.armedTimers.map(\.deadline) == [2, 5, 5, 9])
    await clock.advance(by: 1.9)
    #expect(fired.values.isEmpty)
    #expect(clock.elapsed == 1.9)
    await clock.advance(by: 3.1)
    #expect(fired.values == ["2 s (2.0)", "5 s (5.0)", "5 s, second (5.0)"])
    #expect(clock.elapsed == 5)
    #expect(clock.armedTimers == [ScriptedClock.Timer(kind: .retryWait, deadline: 9)])
  }

  /// A timer armed by one that fires, with its deadline within the same advance, fires in it too.
  @Test func aTimerArmedWhileFiringFiresWithinTheSameAdvance() async {
    let clock = ScriptedClock()
    let fired = Recorder<TimeInterval>()
    _ = clock.armRetryWait(after: 1) {
      fired.append(clock.elapsed)
      _ = clock.armRetryWait(after: 1) { fired.append(clock.elapsed) }
    }
    await clock.advance(by: 10)
    #expect(fired.values == [1, 2])
    #expect(clock.elapsed == 10)
  }

  @Test func aCancelledWaitNeverFires() async {
    let clock = ScriptedClock()
    let fired = Recorder<Bool>()
    let token = clock.armRetryWait(after: 1) { fired.append(true) }
    #expect(clock.cancelRetryWait(token))
    #expect(!clock.cancelRetryWait(token))
    await clock.advance(by: 5)
    #expect(fired.count == 0)
    #expect(clock.armedTimers.isEmpty)
  }

  @Test func waitingForATimerReturnsOnceOneIsArmed() async {
    let clock = ScriptedClock()
    let waiting = Task { await clock.waitUntilArmed(.retryWait, count: 2) }
    _ = clock.armRetryWait(after: 1) {}
    _ = clock.armRetryWait(after: 3) {}
    #expect(await waiting.value)
    // At once when the timers are armed already; false within the bound when none of the kind is.
    #expect(await clock.waitUntilArmed(.retryWait))
    #expect(await clock.waitUntilArmed(.timeoutCheck, timeout: 0.05) == false)
  }
}
