import Foundation
import Testing

@testable import SessionFetcher

/// A task that does nothing: the machine only carries it and hands it back.
final class LifecycleInertTask: EngineTask {
  func resume() {}
  func suspend() {}
  func cancel() {}
  func letGo() {}
  var response: URLResponse? { nil }
  var transferMetrics: TransferMetrics? { nil }
  var diagnosticSummary: String { "inert" }
}

@Suite("Fetcher lifecycle state machine")
struct FetcherLifecycleTests {
  typealias Phase = FetcherLifecycle.Phase

  /// The events of the machine.
  enum Event: String, CaseIterable, CustomTestStringConvertible {
    case begin, delayForSlot, slotGranted, attemptStarted, hopStarted, attemptEndedForRetry
    case attemptEndedForImmediateRetry, retryDelayArmed, retryDelayEnded, finish, stop
    case accepts, cancelTask, detachTask, taskCompleted, redirectReceived, completionDelivered
    /// Reading the fetch's run (``FetcherLifecycle/run``), and reading it where it may not exist yet
    /// (``FetcherLifecycle/begunRun``).
    case run, begunRun

    var testDescription: String { rawValue }
  }

  /// The in-flight exchange of a machine driven into `.running`: hop 7, with a task.
  static let task = LifecycleInertTask()
  /// When the attempts of these machines start.
  static let attemptStart = Date(timeIntervalSince1970: 1_000_000)

  static func exchange(hop: UInt64) -> HopState {
    let exchange = HopState(
      hop: hop, request: URLRequest(url: URL(string: "http://127.0.0.1/\(hop)")!),
      hopRequest: URLRequest(url: URL(string: "http://127.0.0.1/\(hop)")!), keepsBody: false, now: Date())
    exchange.task = task
    exchange.responseBodyLength = Int64(hop)
    return exchange
  }

  /// Drives a fresh machine into `phase` through legal events; `.running` carries hop 7's exchange
  /// with a task, and the states after it carry it on. The run made at begin counts hop 7 too: the
  /// states after it show it is that run they carry.
  static func machine(in phase: Phase) -> FetcherLifecycle {
    var m = FetcherLifecycle()
    func begin() {
      _ = m.begin()
      m.run.hopCount = 7
    }
    switch phase {
    case .idle: break
    case .preparing: begin()
    case .waitingForSlot:
      begin()
      _ = m.delayForSlot()
    case .running:
      begin()
      _ = m.attemptStarted(at: Self.attemptStart)
      _ = m.hopStarted(exchange(hop: 7))
    case .waitingToRetry:
      begin()
      _ = m.attemptStarted(at: Self.attemptStart)
      _ = m.hopStarted(exchange(hop: 7))
      _ = m.attemptEndedForRetry()
    case .finished:
      begin()
      _ = m.finish()
    case .stopped:
      begin()
      _ = m.stop()
    }
    #expect(m.phase == phase)
    return m
  }

  /// What an event answered, as text (the answers are of different types).
  static func fire(_ event: Event, _ m: inout FetcherLifecycle) -> String {
    switch event {
    case .begin: return "\(m.begin())"
    case .delayForSlot: return "\(m.delayForSlot())"
    case .slotGranted: return "\(m.slotGranted())"
    case .attemptStarted: return "\(m.attemptStarted(at: Self.attemptStart))"
    case .hopStarted: return "\(m.hopStarted(exchange(hop: 8)))"
    case .attemptEndedForRetry: return "\(m.attemptEndedForRetry())"
    case .attemptEndedForImmediateRetry: return "\(m.attemptEndedForImmediateRetry())"
    case .retryDelayArmed:
      // Kept, and the wait's delay now; the timer is cancelled either way (the test's own).
      let delay = RetryDelay(seconds: 3600, on: SystemFetchClock.shared) {}
      defer { _ = delay.cancel(on: SystemFetchClock.shared) }
      return "\(m.retryDelayArmed(delay)) \(m.pendingRetryDelay == delay)"
    case .retryDelayEnded: return "\(m.retryDelayEnded())"
    case .finish:
      switch m.finish() {
      case .deliver(let f):
        return "deliver: postStopped \(f.postStopped), postRetryDelayStopped \(f.postRetryDelayStopped), "
          + "task \(f.task != nil)"
      case .ignore: return "ignore"
      }
    case .stop:
      switch m.stop() {
      case .stop(let s):
        return "stop: from \(s.from), postStopped \(s.postStopped), postRetryDelayStopped "
          + "\(s.postRetryDelayStopped), mayCompleteAsCancelled \(s.mayCompleteAsCancelled), task \(s.task != nil)"
      case .ignore: return "ignore"
      }
    case .accepts:
      // Its own task, another task, a test block's answer (no task).
      return "\(m.accepts(task)) \(m.accepts(LifecycleInertTask())) \(m.accepts(nil))"
    case .cancelTask: return cancelAnswer(m.cancelTask(.timedOut), m)
    case .detachTask: return cancelAnswer(m.detachTask(), m)
    case .taskCompleted: return "\(m.taskCompleted(task))"
    case .redirectReceived:
      // With a limit of one: the first is followed and counted, the second is one too many.
      let first = m.redirectReceived(maximum: 1).map { "\($0)" } ?? "nil"
      let second = m.redirectReceived(maximum: 1).map { "\($0)" } ?? "nil"
      return "\(first) \(second)"
    case .completionDelivered:
      // The first delivery gives the queue back; a second finds it delivered.
      let first = m.completionDelivered()
      let second = m.completionDelivered()
      return "\(first) \(second)"
    case .run: return "hop \(m.run.hopCount)"
    case .begunRun: return m.begunRun.map { "hop \($0.hopCount)" } ?? "nil"
    }
  }

  /// A cancel's answer, and what the exchange in flight is left with.
  static func cancelAnswer(_ action: FetcherLifecycle.CancelAction, _ m: FetcherLifecycle) -> String {
    switch action {
    case .letGo(let task):
      let reason = m.current.cancelReason.map { "\($0)" } ?? "nil"
      return "letGo \(task === Self.task), left \(m.current.task == nil), reason \(reason)"
    case .ignore: return "ignore"
    }
  }

  /// One row: in `from`, `event` answers `answer` and leaves the machine in `to`; nil `to` marks
  /// an event that cannot happen there (a precondition failure).
  struct Row: Sendable, CustomTestStringConvertible {
    var from: Phase
    var event: Event
    var to: Phase?
    var answer: String

    var testDescription: String { "\(from) × \(event)" }
  }

  static func row(_ from: Phase, _ event: Event, _ to: Phase, _ answer: String) -> Row {
    Row(from: from, event: event, to: to, answer: answer)
  }

  static func trap(_ from: Phase, _ event: Event) -> Row {
    Row(from: from, event: event, to: nil, answer: "")
  }

  static func stopAnswer(_ from: Phase, _ started: Bool, _ retry: Bool, _ cancels: Bool, _ task: Bool)
    -> String
  {
    let flags = "postStopped \(started), postRetryDelayStopped \(retry), mayCompleteAsCancelled \(cancels)"
    return "stop: from \(from), \(flags), task \(task)"
  }

  /// Every state × every event.
  static let table: [Row] = idleRows + preparingRows + slotRows + runningRows + retryRows + endedRows

  static let idleRows: [Row] = [
    row(.idle, .begin, .preparing, "proceed"),
    trap(.idle, .delayForSlot),
    row(.idle, .slotGranted, .idle, "ignore"),
    trap(.idle, .attemptStarted),
    trap(.idle, .hopStarted),
    trap(.idle, .attemptEndedForRetry),
    trap(.idle, .attemptEndedForImmediateRetry),
    row(.idle, .retryDelayArmed, .idle, "false false"),
    row(.idle, .retryDelayEnded, .idle, "ignore"),
    row(.idle, .finish, .idle, "ignore"),
    row(.idle, .stop, .stopped, stopAnswer(.idle, false, false, false, false)),
    row(.idle, .accepts, .idle, "false false false"),
    row(.idle, .cancelTask, .idle, "ignore"),
    row(.idle, .detachTask, .idle, "ignore"),
    row(.idle, .taskCompleted, .idle, "false"),
    row(.idle, .redirectReceived, .idle, "nil nil"),
    trap(.idle, .completionDelivered),
    // Nothing of a fetch exists before it begins: no run to read or write.
    trap(.idle, .run),
    row(.idle, .begunRun, .idle, "nil"),
  ]

  static let preparingRows: [Row] = [
    row(.preparing, .begin, .preparing, "alreadyBegun"),
    row(.preparing, .delayForSlot, .waitingForSlot, "askService"),
    row(.preparing, .slotGranted, .preparing, "ignore"),
    row(.preparing, .attemptStarted, .running, "postStartedAndSend"),
    row(.preparing, .hopStarted, .preparing, "ignore"),
    row(.preparing, .attemptEndedForRetry, .waitingToRetry, "scheduleRetry(postStopped: false)"),
    row(.preparing, .attemptEndedForImmediateRetry, .preparing, "ignore"),
    row(.preparing, .retryDelayArmed, .preparing, "false false"),
    row(.preparing, .retryDelayEnded, .preparing, "ignore"),
    row(
      .preparing, .finish, .finished, "deliver: postStopped false, postRetryDelayStopped false, task false"),
    row(.preparing, .stop, .stopped, stopAnswer(.preparing, false, false, true, false)),
    row(.preparing, .accepts, .preparing, "false false false"),
    row(.preparing, .cancelTask, .preparing, "ignore"),
    row(.preparing, .detachTask, .preparing, "ignore"),
    row(.preparing, .taskCompleted, .preparing, "false"),
    row(.preparing, .redirectReceived, .preparing, "nil nil"),
    trap(.preparing, .completionDelivered),
    row(.preparing, .run, .preparing, "hop 7"),
    row(.preparing, .begunRun, .preparing, "hop 7"),
  ]

  static let slotRows: [Row] = [
    row(.waitingForSlot, .begin, .waitingForSlot, "alreadyBegun"),
    trap(.waitingForSlot, .delayForSlot),
    row(.waitingForSlot, .slotGranted, .preparing, "startAttempt"),
    row(.waitingForSlot, .attemptStarted, .waitingForSlot, "ignore"),
    row(.waitingForSlot, .hopStarted, .waitingForSlot, "ignore"),
    row(.waitingForSlot, .attemptEndedForRetry, .waitingForSlot, "ignore"),
    row(.waitingForSlot, .attemptEndedForImmediateRetry, .waitingForSlot, "ignore"),
    row(.waitingForSlot, .retryDelayArmed, .waitingForSlot, "false false"),
    row(.waitingForSlot, .retryDelayEnded, .waitingForSlot, "ignore"),
    row(
      .waitingForSlot, .finish, .finished,
      "deliver: postStopped false, postRetryDelayStopped false, task false"),
    row(.waitingForSlot, .stop, .stopped, stopAnswer(.waitingForSlot, false, false, true, false)),
    row(.waitingForSlot, .accepts, .waitingForSlot, "false false false"),
    row(.waitingForSlot, .cancelTask, .waitingForSlot, "ignore"),
    row(.waitingForSlot, .detachTask, .waitingForSlot, "ignore"),
    row(.waitingForSlot, .taskCompleted, .waitingForSlot, "false"),
    row(.waitingForSlot, .redirectReceived, .waitingForSlot, "nil nil"),
    trap(.waitingForSlot, .completionDelivered),
    row(.waitingForSlot, .run, .waitingForSlot, "hop 7"),
    row(.waitingForSlot, .begunRun, .waitingForSlot, "hop 7"),
  ]

  static let runningRows: [Row] = [
    row(.running, .begin, .running, "alreadyBegun"),
    trap(.running, .delayForSlot),
    row(.running, .slotGranted, .running, "ignore"),
    trap(.running, .attemptStarted),
    row(.running, .hopStarted, .running, "send"),
    row(.running, .attemptEndedForRetry, .waitingToRetry, "scheduleRetry(postStopped: true)"),
    row(.running, .attemptEndedForImmediateRetry, .preparing, "retryNow(postStopped: true)"),
    row(.running, .retryDelayArmed, .running, "false false"),
    row(.running, .retryDelayEnded, .running, "ignore"),
    row(.running, .finish, .finished, "deliver: postStopped true, postRetryDelayStopped false, task true"),
    row(.running, .stop, .stopped, stopAnswer(.running, true, false, true, true)),
    row(.running, .accepts, .running, "true false true"),
    row(.running, .cancelTask, .running, "letGo true, left true, reason timedOut"),
    row(.running, .detachTask, .running, "letGo true, left true, reason nil"),
    row(.running, .taskCompleted, .running, "true"),
    row(.running, .redirectReceived, .running, "follow tooMany"),
    trap(.running, .completionDelivered),
    row(.running, .run, .running, "hop 7"),
    row(.running, .begunRun, .running, "hop 7"),
  ]

  static let retryRows: [Row] = [
    row(.waitingToRetry, .begin, .waitingToRetry, "alreadyBegun"),
    trap(.waitingToRetry, .delayForSlot),
    row(.waitingToRetry, .slotGranted, .waitingToRetry, "ignore"),
    trap(.waitingToRetry, .attemptStarted),
    row(.waitingToRetry, .hopStarted, .waitingToRetry, "ignore"),
    row(.waitingToRetry, .attemptEndedForRetry, .waitingToRetry, "ignore"),
    row(.waitingToRetry, .attemptEndedForImmediateRetry, .waitingToRetry, "ignore"),
    row(.waitingToRetry, .retryDelayArmed, .waitingToRetry, "true true"),
    row(.waitingToRetry, .retryDelayEnded, .preparing, "startAttempt"),
    row(
      .waitingToRetry, .finish, .finished,
      "deliver: postStopped false, postRetryDelayStopped true, task false"),
    row(.waitingToRetry, .stop, .stopped, stopAnswer(.waitingToRetry, false, true, true, false)),
    row(.waitingToRetry, .accepts, .waitingToRetry, "false false false"),
    row(.waitingToRetry, .cancelTask, .waitingToRetry, "ignore"),
    row(.waitingToRetry, .detachTask, .waitingToRetry, "ignore"),
    row(.waitingToRetry, .taskCompleted, .waitingToRetry, "false"),
    row(.waitingToRetry, .redirectReceived, .waitingToRetry, "nil nil"),
    trap(.waitingToRetry, .completionDelivered),
    row(.waitingToRetry, .run, .waitingToRetry, "hop 7"),
    row(.waitingToRetry, .begunRun, .waitingToRetry, "hop 7"),
  ]

  static let endedRows: [Row] = [Phase.finished, .stopped].flatMap { (ended: Phase) -> [Row] in
    [
      row(ended, .begin, ended, ended == .stopped ? "stoppedBeforeBegin" : "alreadyBegun"),
      row(ended, .delayForSlot, ended, "ignore"),
      row(ended, .slotGranted, ended, "ignore"),
      row(ended, .attemptStarted, ended, "ignore"),
      row(ended, .hopStarted, ended, "ignore"),
      row(ended, .attemptEndedForRetry, ended, "ignore"),
      row(ended, .attemptEndedForImmediateRetry, ended, "ignore"),
      row(ended, .retryDelayArmed, ended, "false false"),
      row(ended, .retryDelayEnded, ended, "ignore"),
      row(ended, .finish, ended, "ignore"),
      row(ended, .stop, ended, "ignore"),
      row(ended, .accepts, ended, "false false false"),
      row(ended, .cancelTask, ended, "ignore"),
      row(ended, .detachTask, ended, "ignore"),
      row(ended, .taskCompleted, ended, "false"),
      row(ended, .redirectReceived, ended, "nil nil"),
      row(ended, .completionDelivered, ended, "true false"),
      // The ended states keep the run, for what the fetch reports afterwards.
      row(ended, .run, ended, "hop 7"),
      row(ended, .begunRun, ended, "hop 7"),
    ]
  }

  @Test func theTableNamesEveryStateAndEveryEventOnce() {
    let pairs = Set(Self.table.map { "\($0.from) × \($0.event)" })
    #expect(pairs.count == Self.table.count)
    #expect(pairs.count == Phase.allCases.count * Event.allCases.count)
  }

  @Test(arguments: table.filter { $0.to != nil })
  func transition(_ row: Row) {
    var m = Self.machine(in: row.from)
    let answer = Self.fire(row.event, &m)
    #expect(answer == row.answer)
    #expect(m.phase == row.to)
  }

  /// The rows of events that cannot happen.
  static let traps = table.filter { $0.to == nil }

  /// Fires the event of `traps[index]` in its state (in an exit test's own process).
  static func fireTrap(_ index: Int) {
    var m = machine(in: traps[index].from)
    _ = fire(traps[index].event, &m)
  }

  /// An event that cannot happen in a state stops the process with a message naming the state.
  /// (An exit test captures nothing: each row has a closure of its own.)
  @Test(arguments: traps.indices)
  func impossibleEventTraps(_ index: Int) async throws {
    let exit: ExitTest.Result?
    switch index {
    case 0:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(0)
      }
    case 1:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(1)
      }
    case 2:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(2)
      }
    case 3:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(3)
      }
    case 4:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(4)
      }
    case 5:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(5)
      }
    case 6:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(6)
      }
    case 7:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(7)
      }
    case 8:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(8)
      }
    case 9:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(9)
      }
    case 10:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(10)
      }
    case 11:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(11)
      }
    case 12:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(12)
      }
    case 13:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(13)
      }
    case 14:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(14)
      }
    case 15:
      exit = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        FetcherLifecycleTests.fireTrap(15)
      }
    default:
      Issue.record("row \(index) has no exit test: add a case")
      return
    }
    let row = Self.traps[index]
    let message = String(decoding: try #require(exit).standardErrorContent, as: UTF8.self)
    #expect(message.contains("\(row.event) in state \(row.from)"), "\(message)")
  }

  /// Each hop replaces the exchange whole: nothing of the previous hop is left in the next.
  @Test func aHopStartsWithAFreshExchange() {
    var m = Self.machine(in: .running)
    m.current.cancelReason = .timedOut
    m.current.redirectTarget = URL(string: "http://127.0.0.1/next")
    m.current.challengeCancelled = true
    m.current.responseData.append(Data([1, 2, 3]))
    m.current.receivedPartialBody = true
    let started = m.hopStarted(
      HopState(
        hop: 8, request: URLRequest(url: URL(string: "http://127.0.0.1/8")!),
        hopRequest: URLRequest(url: URL(string: "http://127.0.0.1/8")!), keepsBody: true, now: Date()))
    #expect(started == .send)
    let fresh = m.current
    #expect(fresh.hop == 8 && fresh.task == nil && fresh.cancelReason == nil && fresh.redirectTarget == nil)
    #expect(!fresh.challengeCancelled && fresh.responseData.isEmpty && !fresh.receivedPartialBody)
    #expect(fresh.responseHead == nil && fresh.responseBodyLength == 0 && fresh.measure.hop == 8)
  }

  /// The attempt's state lives in the running state: an attempt starts with a fresh one (no
  /// redirect or challenge of the last attempt counts), its hops hand it on, and it ends with the
  /// attempt (a late redirect counts nothing).
  @Test func eachAttemptCountsAfresh() {
    var m = Self.machine(in: .running)
    let first = m.attempt
    #expect(first.start == Self.attemptStart)
    let followed = m.redirectReceived(maximum: 1)
    first.challenges.resends = 2
    _ = m.hopStarted(Self.exchange(hop: 8))
    #expect(followed == .follow && m.attempt === first && first.redirects == 1)
    #expect(m.current.attempt === first)
    let tooMany = m.redirectReceived(maximum: 1)
    #expect(tooMany == .tooMany)
    _ = m.attemptEndedForRetry()
    let late = m.redirectReceived(maximum: 1)
    #expect(late == nil && first.redirects == 1)
    _ = m.retryDelayEnded()
    let later = Self.attemptStart.addingTimeInterval(5)
    let started = m.attemptStarted(at: later)
    #expect(started == .postStartedAndSend)
    #expect(m.attempt !== first && m.attempt.start == later)
    #expect(m.attempt.redirects == 0 && m.attempt.challenges.resends == 0)
  }

  /// The run reached at begin is the one every later state reaches, through the attempts and
  /// their hops to the end, after the completion's delivery too.
  @Test func theRunGoesFromBeginToTheEnd() {
    var m = FetcherLifecycle()
    _ = m.begin()
    let run = m.run
    run.hopCount = 7
    _ = m.delayForSlot()
    #expect(m.run === run)
    _ = m.slotGranted()
    _ = m.attemptStarted(at: Self.attemptStart)
    #expect(m.run === run)
    _ = m.hopStarted(Self.exchange(hop: 1))
    #expect(m.run === run)
    _ = m.attemptEndedForRetry()
    #expect(m.run === run)
    _ = m.retryDelayEnded()
    _ = m.attemptStarted(at: Self.attemptStart)
    #expect(m.run === run)
    _ = m.finish()
    #expect(m.run === run)
    _ = m.completionDelivered()
    #expect(m.begunRun === run && run.hopCount == 7)
  }

  /// A stop before begin ends the fetch there: it makes the run its results go to, and a begin
  /// after it finds the fetch stopped, with that run.
  @Test func aStopBeforeBeginMakesTheRun() {
    var m = FetcherLifecycle()
    #expect(m.begunRun == nil)
    _ = m.stop()
    let run = m.begunRun
    #expect(run != nil && run?.hopCount == 0 && run?.finalError == nil)
    let begun = m.begin()
    #expect(begun == .stoppedBeforeBegin && m.begunRun === run)
  }

  /// One row of the delivery's flags: the machine in `phase`, then `events` (stop, finish or
  /// completionDelivered), and what it says of the callbacks queued and of the completion.
  struct DeliveryRow: Sendable, CustomTestStringConvertible {
    var phase: Phase
    var events: [Event]
    var runsQueued: Bool
    var stoppedBeforeDelivery: Bool
    var delivered: Bool

    var testDescription: String { "\(phase) then \(events.map(\.rawValue))" }
  }

  static let deliveryRows: [DeliveryRow] = [
    DeliveryRow(phase: .idle, events: [], runsQueued: true, stoppedBeforeDelivery: false, delivered: false),
    DeliveryRow(
      phase: .running, events: [], runsQueued: true, stoppedBeforeDelivery: false, delivered: false),
    DeliveryRow(
      phase: .finished, events: [], runsQueued: true, stoppedBeforeDelivery: false, delivered: false),
    DeliveryRow(
      phase: .finished, events: [.stop], runsQueued: false, stoppedBeforeDelivery: true, delivered: false),
    DeliveryRow(
      phase: .finished, events: [.completionDelivered], runsQueued: false, stoppedBeforeDelivery: false,
      delivered: true),
    DeliveryRow(
      phase: .finished, events: [.stop, .completionDelivered], runsQueued: false,
      stoppedBeforeDelivery: false, delivered: true),
    DeliveryRow(
      phase: .finished, events: [.completionDelivered, .stop], runsQueued: false,
      stoppedBeforeDelivery: false, delivered: true),
    DeliveryRow(
      phase: .stopped, events: [], runsQueued: false, stoppedBeforeDelivery: true, delivered: false),
    DeliveryRow(
      phase: .stopped, events: [.completionDelivered], runsQueued: false, stoppedBeforeDelivery: false,
      delivered: true),
    DeliveryRow(
      phase: .stopped, events: [.finish, .stop], runsQueued: false, stoppedBeforeDelivery: true,
      delivered: false),
  ]

  /// What was the fetcher's callbacksSuppressed and completionDelivered flags is the ended states'
  /// own: a stop after the finish suppresses the queued callbacks, and a stop after the delivery
  /// changes nothing.
  @Test(arguments: deliveryRows)
  func theDeliveryIsTheEndedStates(_ row: DeliveryRow) {
    var m = Self.machine(in: row.phase)
    for event in row.events { _ = Self.fire(event, &m) }
    #expect(m.phase == row.phase)
    #expect(m.runsQueuedCallbacks == row.runsQueued)
    #expect(m.isStoppedBeforeDelivery == row.stoppedBeforeDelivery)
    #expect(m.isCompletionDelivered == row.delivered)
  }

  /// A timeout ends the wait for a task or a decision (the pending hop) with the task; a failure or
  /// a pause ends only the task.
  @Test func onlyATimeoutEndsThePendingWait() {
    for (reason, pendingLeft) in [(CancelReason.timedOut, false), (.pausedForBackpressure, true)] {
      var m = Self.machine(in: .running)
      m.current.pendingHop = 7
      let action = m.cancelTask(reason)
      #expect(action.task === Self.task)
      #expect((m.current.pendingHop != nil) == pendingLeft, "\(reason)")
    }
  }

  /// The retry delay lives in the wait it belongs to: a second one is refused, and every way out of
  /// the wait hands the armed one on to be cancelled (a finish or a stop) or drops it (its end).
  @Test(arguments: [Event.finish, .stop, .retryDelayEnded])
  func theArmedRetryDelayLeavesWithItsWait(_ event: Event) {
    var m = Self.machine(in: .waitingToRetry)
    let delay = RetryDelay(seconds: 3600, on: SystemFetchClock.shared) {}
    let other = RetryDelay(seconds: 3600, on: SystemFetchClock.shared) {}
    defer { _ = (delay.cancel(on: SystemFetchClock.shared), other.cancel(on: SystemFetchClock.shared)) }
    let kept = m.retryDelayArmed(delay)
    let keptSecond = m.retryDelayArmed(other)
    #expect(kept && !keptSecond)
    #expect(m.pendingRetryDelay == delay)
    switch event {
    case .finish:
      guard case .deliver(let finish) = m.finish() else { Issue.record("finish ignored"); return }
      #expect(finish.retryDelay == delay)
    case .stop:
      guard case .stop(let stop) = m.stop() else { Issue.record("stop ignored"); return }
      #expect(stop.retryDelay == delay)
    default:
      let ended = m.retryDelayEnded()
      #expect(ended == .startAttempt)
    }
    #expect(m.pendingRetryDelay == nil)
  }

  /// A new attempt starts without the previous attempt's exchange in flight.
  @Test func anAttemptStartsWithoutTheLastExchangeInFlight() {
    var m = Self.machine(in: .waitingToRetry)
    _ = m.retryDelayEnded()
    #expect(m.exchange?.hop == 7)
    let started = m.attemptStarted(at: Self.attemptStart)
    #expect(started == .postStartedAndSend)
    #expect(m.current.hop == 0 && m.current.task == nil && m.current.request == nil)
  }

  /// Leaving `running` carries the last exchange on, read-only, for what the fetcher reports; a
  /// finish or a stop hands the task back and marks the exchange stopped.
  @Test(arguments: [Event.finish, .stop, .attemptEndedForRetry, .attemptEndedForImmediateRetry])
  func leavingRunningKeepsTheLastExchange(_ event: Event) {
    var m = Self.machine(in: .running)
    let attempt = m.attempt
    _ = Self.fire(event, &m)
    #expect(m.phase != .running)
    #expect(m.exchange?.hop == 7 && m.exchange?.responseBodyLength == 7)
    // Without its attempt: the counts of an attempt end with it.
    #expect(m.exchange?.attempt == nil && attempt.start == FetcherLifecycleTests.attemptStart)
    switch event {
    case .finish, .stop:
      #expect(m.exchange?.task == nil)
      if case .stopped? = m.exchange?.cancelReason {} else { Issue.record("not marked stopped") }
    default:
      #expect(m.exchange?.task === Self.task)
    }
  }

  /// A finish marks the exchange stopped only when it still had a task: one whose task ended by
  /// itself keeps the reason it had (none, for a success; a timeout's).
  @Test(arguments: [nil, CancelReason.timedOut])
  func finishingAfterTheTaskEndedKeepsItsReason(_ reason: CancelReason?) {
    var m = Self.machine(in: .running)
    m.current.cancelReason = reason
    let completed = m.taskCompleted(Self.task)
    #expect(completed)
    guard case .deliver(let finish) = m.finish() else {
      Issue.record("a running fetch finishes")
      return
    }
    #expect(finish.task == nil)
    #expect(m.exchange?.cancelReason.map { "\($0)" } == reason.map { "\($0)" })
  }

  @Test func retriesPairEveryStartedWithOneStopped() {
    var m = FetcherLifecycle()
    var started = 0
    var stopped = 0
    let begun = m.begin()
    #expect(begun == .proceed)
    for _ in 0..<3 {
      if m.attemptStarted(at: Self.attemptStart) == .postStartedAndSend { started += 1 }
      if m.attemptEndedForRetry() == .scheduleRetry(postStopped: true) { stopped += 1 }
      #expect(m.phase == .waitingToRetry)
      let ended = m.retryDelayEnded()
      #expect(ended == .startAttempt)
    }
    if m.attemptStarted(at: Self.attemptStart) == .postStartedAndSend { started += 1 }
    if case .deliver(let finish) = m.finish(), finish.postStopped { stopped += 1 }
    #expect(started == 4)
    #expect(stopped == 4)
    #expect(!m.isStartedNotificationOutstanding)
  }
}

@Suite("Fetcher lifecycle layout")
struct FetcherLifecycleLayoutTests {
  /// The states hand on one reference to the run and one to the exchange: a change of state moves
  /// two pointers, the retry delay's token and a tag, never the fields of the run or of the
  /// exchange.
  @Test func aChangeOfStateMovesAReference() {
    #expect(MemoryLayout<FetcherLifecycle.State>.size <= 4 * MemoryLayout<UnsafeRawPointer>.size)
    var m = FetcherLifecycleTests.machine(in: .running)
    let inFlight = m.current
    _ = m.stop()
    #expect(m.exchange === inFlight)
  }
}

@Suite("HopState: body chunks")
struct ExchangeChunkTests {
  /// One row: an exchange whose sink is `sink`, with `kept` bytes of a body announced as
  /// `announced` bytes (-1: unknown) and cancelled for `reason`, gets a chunk of `chunk` bytes with
  /// an in-memory limit of `limit`.
  struct Row: Sendable, CustomTestStringConvertible {
    var sink: ResponseSink
    var reason: String?
    var kept: Int
    var announced: Int64
    var chunk: Int
    var limit: Int64?
    var action: HopState.ChunkAction
    /// The bytes kept in memory afterwards, and whether the chunk counted.
    var keptAfter: Int
    var counted: Bool

    var testDescription: String {
      "\(sink), reason \(reason ?? "none"), \(kept)+\(chunk) of \(announced), limit \(limit.map(String.init) ?? "none")"
    }
  }

  static let rows: [Row] = [
    Row(
      sink: .memory, reason: nil, kept: 0, announced: 10, chunk: 4, limit: nil,
      action: .deliver(sink: .memory, total: 4, expected: 10), keptAfter: 4, counted: true),
    Row(
      sink: .memory, reason: nil, kept: 8, announced: 10, chunk: 4, limit: nil,
      action: .deliver(sink: .memory, total: 12, expected: -1), keptAfter: 12, counted: true),
    Row(
      sink: .memory, reason: nil, kept: 8, announced: -1, chunk: 4, limit: 12,
      action: .deliver(sink: .memory, total: 12, expected: -1), keptAfter: 12, counted: true),
    Row(
      sink: .memory, reason: nil, kept: 8, announced: -1, chunk: 5, limit: 12,
      action: .tooLarge(limit: 12), keptAfter: 0, counted: true),
    Row(
      sink: .redirect, reason: nil, kept: 8, announced: -1, chunk: 5, limit: 12,
      action: .tooLarge(limit: 12), keptAfter: 0, counted: true),
    Row(
      sink: .file, reason: nil, kept: 0, announced: 100, chunk: 50, limit: 12,
      action: .deliver(sink: .file, total: 50, expected: 100), keptAfter: 0, counted: true),
    Row(
      sink: .accumulate, reason: nil, kept: 0, announced: -1, chunk: 50, limit: 12,
      action: .deliver(sink: .accumulate, total: 50, expected: -1), keptAfter: 0, counted: true),
    Row(
      sink: .stream, reason: nil, kept: 0, announced: 100, chunk: 50, limit: 12,
      action: .deliver(sink: .stream, total: 50, expected: 100), keptAfter: 0, counted: true),
    Row(
      sink: .memory, reason: "paused", kept: 0, announced: 10, chunk: 4, limit: nil, action: .drop,
      keptAfter: 0, counted: false),
    Row(
      sink: .memory, reason: "failed", kept: 4, announced: 10, chunk: 4, limit: nil, action: .drop,
      keptAfter: 4, counted: false),
    Row(
      sink: .memory, reason: "timedOut", kept: 0, announced: 10, chunk: 4, limit: nil,
      action: .deliver(sink: .memory, total: 4, expected: 10), keptAfter: 4, counted: true),
  ]

  @Test(arguments: rows)
  func chunk(_ row: Row) {
    let exchange = HopState()
    exchange.sink = row.sink
    if row.sink == .memory || row.sink == .redirect { exchange.responseData = Data(count: row.kept) }
    exchange.responseBodyLength = Int64(row.kept)
    exchange.expectedContentLength = row.announced
    switch row.reason {
    case "paused"?: exchange.cancelReason = .pausedForBackpressure
    case "failed"?: exchange.cancelReason = .failed(URLError(.unknown))
    case "timedOut"?: exchange.cancelReason = .timedOut
    default: break
    }
    let action = exchange.chunkReceived(Data(count: row.chunk), at: Date(), inMemoryLimit: row.limit)
    #expect(action == row.action)
    #expect(exchange.responseData.count == row.keptAfter)
    #expect(exchange.responseBodyLength == Int64(row.kept + (row.counted ? row.chunk : 0)))
    #expect(exchange.receivedPartialBody == row.counted)
    #expect(exchange.measure.bytesReceived == (row.counted ? Int64(row.chunk) : 0))
  }
}

@Suite("HopState: ending its task")
struct ExchangeEndTaskTests {
  /// One row: an exchange with a task or none and a cancel reason (`had`) ends its task for
  /// `reason`; `left` is the reason afterwards.
  struct Row: Sendable, CustomTestStringConvertible {
    var hasTask: Bool
    var had: String?
    var reason: String?
    var left: String?

    var testDescription: String {
      "task \(hasTask), had \(had ?? "none"), ends for \(reason ?? "none")"
    }
  }

  static let rows: [Row] = [true, false].flatMap { hasTask in
    [
      Row(hasTask: hasTask, had: nil, reason: "stopped", left: "stopped"),
      Row(hasTask: hasTask, had: nil, reason: "timedOut", left: "timedOut"),
      Row(hasTask: hasTask, had: nil, reason: nil, left: nil),
      Row(hasTask: hasTask, had: "timedOut", reason: nil, left: "timedOut"),
      Row(hasTask: hasTask, had: "timedOut", reason: "stopped", left: "stopped"),
      Row(hasTask: hasTask, had: "pausedForBackpressure", reason: "failed", left: "failed"),
    ]
  }

  static func reason(_ name: String?) -> CancelReason? {
    switch name {
    case "stopped"?: return .stopped
    case "timedOut"?: return .timedOut
    case "pausedForBackpressure"?: return .pausedForBackpressure
    case "failed"?: return .failed(URLError(.unknown))
    default: return nil
    }
  }

  static func name(_ reason: CancelReason?) -> String? {
    switch reason {
    case .stopped?: return "stopped"
    case .timedOut?: return "timedOut"
    case .pausedForBackpressure?: return "pausedForBackpressure"
    case .failed?: return "failed"
    case nil: return nil
    }
  }

  @Test(arguments: rows)
  func endTask(_ row: Row) {
    let exchange = HopState()
    let task = LifecycleInertTask()
    if row.hasTask { exchange.task = task }
    exchange.cancelReason = Self.reason(row.had)
    let ended = exchange.endTask(Self.reason(row.reason))
    #expect(row.hasTask ? ended === task : ended == nil)
    #expect(exchange.task == nil)
    #expect(Self.name(exchange.cancelReason) == row.left)
  }
}
