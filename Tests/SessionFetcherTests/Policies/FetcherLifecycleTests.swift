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
    case attemptEndedForImmediateRetry, retryDelayEnded, finish, stop

    var testDescription: String { rawValue }
  }

  /// The in-flight exchange of a machine driven into `.running`: hop 7, with a task.
  static let task = LifecycleInertTask()

  static func exchange(hop: UInt64) -> Exchange {
    var exchange = Exchange(
      hop: hop, request: URLRequest(url: URL(string: "http://127.0.0.1/\(hop)")!),
      hopRequest: URLRequest(url: URL(string: "http://127.0.0.1/\(hop)")!), keepsBody: false, now: Date())
    exchange.task = task
    exchange.responseBodyLength = Int64(hop)
    return exchange
  }

  /// Drives a fresh machine into `phase` through legal events; `.running` carries hop 7's exchange
  /// with a task, and the states after it carry it on.
  static func machine(in phase: Phase) -> FetcherLifecycle {
    var m = FetcherLifecycle()
    switch phase {
    case .idle: break
    case .preparing: _ = m.begin()
    case .waitingForSlot:
      _ = m.begin()
      _ = m.delayForSlot()
    case .running:
      _ = m.begin()
      _ = m.attemptStarted()
      _ = m.hopStarted(exchange(hop: 7))
    case .waitingToRetry:
      _ = m.begin()
      _ = m.attemptStarted()
      _ = m.hopStarted(exchange(hop: 7))
      _ = m.attemptEndedForRetry()
    case .finished:
      _ = m.begin()
      _ = m.finish()
    case .stopped:
      _ = m.begin()
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
    case .attemptStarted: return "\(m.attemptStarted())"
    case .hopStarted: return "\(m.hopStarted(exchange(hop: 8)))"
    case .attemptEndedForRetry:
      return m.attemptEndedForRetry().map { "postStopped \($0.postStopped)" } ?? "nil"
    case .attemptEndedForImmediateRetry:
      return m.attemptEndedForImmediateRetry().map { "postStopped \($0.postStopped)" } ?? "nil"
    case .retryDelayEnded: return "\(m.retryDelayEnded())"
    case .finish:
      return m.finish().map {
        "postStopped \($0.postStopped), postRetryDelayStopped \($0.postRetryDelayStopped), task \($0.task != nil)"
      } ?? "nil"
    case .stop:
      return m.stop().map {
        "from \($0.from), postStopped \($0.postStopped), postRetryDelayStopped \($0.postRetryDelayStopped), "
          + "mayCompleteAsCancelled \($0.mayCompleteAsCancelled), task \($0.task != nil)"
      } ?? "nil"
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
    return "from \(from), \(flags), task \(task)"
  }

  /// Every state × every event.
  static let table: [Row] = idleRows + preparingRows + slotRows + runningRows + retryRows + endedRows

  static let idleRows: [Row] = [
    row(.idle, .begin, .preparing, "proceed"),
    trap(.idle, .delayForSlot),
    row(.idle, .slotGranted, .idle, "false"),
    trap(.idle, .attemptStarted),
    trap(.idle, .hopStarted),
    trap(.idle, .attemptEndedForRetry),
    trap(.idle, .attemptEndedForImmediateRetry),
    row(.idle, .retryDelayEnded, .idle, "false"),
    row(.idle, .finish, .idle, "nil"),
    row(.idle, .stop, .stopped, stopAnswer(.idle, false, false, false, false)),
  ]

  static let preparingRows: [Row] = [
    row(.preparing, .begin, .preparing, "alreadyBegun"),
    row(.preparing, .delayForSlot, .waitingForSlot, "true"),
    row(.preparing, .slotGranted, .preparing, "false"),
    row(.preparing, .attemptStarted, .running, "true"),
    row(.preparing, .hopStarted, .preparing, "false"),
    row(.preparing, .attemptEndedForRetry, .waitingToRetry, "postStopped false"),
    row(.preparing, .attemptEndedForImmediateRetry, .preparing, "nil"),
    row(.preparing, .retryDelayEnded, .preparing, "false"),
    row(.preparing, .finish, .finished, "postStopped false, postRetryDelayStopped false, task false"),
    row(.preparing, .stop, .stopped, stopAnswer(.preparing, false, false, true, false)),
  ]

  static let slotRows: [Row] = [
    row(.waitingForSlot, .begin, .waitingForSlot, "alreadyBegun"),
    trap(.waitingForSlot, .delayForSlot),
    row(.waitingForSlot, .slotGranted, .preparing, "true"),
    row(.waitingForSlot, .attemptStarted, .waitingForSlot, "false"),
    row(.waitingForSlot, .hopStarted, .waitingForSlot, "false"),
    row(.waitingForSlot, .attemptEndedForRetry, .waitingForSlot, "nil"),
    row(.waitingForSlot, .attemptEndedForImmediateRetry, .waitingForSlot, "nil"),
    row(.waitingForSlot, .retryDelayEnded, .waitingForSlot, "false"),
    row(.waitingForSlot, .finish, .finished, "postStopped false, postRetryDelayStopped false, task false"),
    row(.waitingForSlot, .stop, .stopped, stopAnswer(.waitingForSlot, false, false, true, false)),
  ]

  static let runningRows: [Row] = [
    row(.running, .begin, .running, "alreadyBegun"),
    trap(.running, .delayForSlot),
    row(.running, .slotGranted, .running, "false"),
    trap(.running, .attemptStarted),
    row(.running, .hopStarted, .running, "true"),
    row(.running, .attemptEndedForRetry, .waitingToRetry, "postStopped true"),
    row(.running, .attemptEndedForImmediateRetry, .preparing, "postStopped true"),
    row(.running, .retryDelayEnded, .running, "false"),
    row(.running, .finish, .finished, "postStopped true, postRetryDelayStopped false, task true"),
    row(.running, .stop, .stopped, stopAnswer(.running, true, false, true, true)),
  ]

  static let retryRows: [Row] = [
    row(.waitingToRetry, .begin, .waitingToRetry, "alreadyBegun"),
    trap(.waitingToRetry, .delayForSlot),
    row(.waitingToRetry, .slotGranted, .waitingToRetry, "false"),
    trap(.waitingToRetry, .attemptStarted),
    row(.waitingToRetry, .hopStarted, .waitingToRetry, "false"),
    row(.waitingToRetry, .attemptEndedForRetry, .waitingToRetry, "nil"),
    row(.waitingToRetry, .attemptEndedForImmediateRetry, .waitingToRetry, "nil"),
    row(.waitingToRetry, .retryDelayEnded, .preparing, "true"),
    row(.waitingToRetry, .finish, .finished, "postStopped false, postRetryDelayStopped true, task false"),
    row(.waitingToRetry, .stop, .stopped, stopAnswer(.waitingToRetry, false, true, true, false)),
  ]

  static let endedRows: [Row] = [Phase.finished, .stopped].flatMap { (ended: Phase) -> [Row] in
    [
      row(ended, .begin, ended, ended == .stopped ? "stoppedBeforeBegin" : "alreadyBegun"),
      row(ended, .delayForSlot, ended, "false"),
      row(ended, .slotGranted, ended, "false"),
      row(ended, .attemptStarted, ended, "false"),
      row(ended, .hopStarted, ended, "false"),
      row(ended, .attemptEndedForRetry, ended, "nil"),
      row(ended, .attemptEndedForImmediateRetry, ended, "nil"),
      row(ended, .retryDelayEnded, ended, "false"),
      row(ended, .finish, ended, "nil"),
      row(ended, .stop, ended, "nil"),
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
      Exchange(
        hop: 8, request: URLRequest(url: URL(string: "http://127.0.0.1/8")!),
        hopRequest: URLRequest(url: URL(string: "http://127.0.0.1/8")!), keepsBody: true, now: Date()))
    #expect(started)
    let fresh = m.current
    #expect(fresh.hop == 8 && fresh.task == nil && fresh.cancelReason == nil && fresh.redirectTarget == nil)
    #expect(!fresh.challengeCancelled && fresh.responseData.isEmpty && !fresh.receivedPartialBody)
    #expect(fresh.responseHead == nil && fresh.responseBodyLength == 0 && fresh.measure.hop == 8)
  }

  /// A new attempt starts without the previous attempt's exchange in flight.
  @Test func anAttemptStartsWithoutTheLastExchangeInFlight() {
    var m = Self.machine(in: .waitingToRetry)
    _ = m.retryDelayEnded()
    #expect(m.exchange?.hop == 7)
    let started = m.attemptStarted()
    #expect(started)
    #expect(m.current.hop == 0 && m.current.task == nil && m.current.request == nil)
  }

  /// Leaving `running` carries the last exchange on, read-only, for what the fetcher reports; a
  /// finish or a stop hands the task back and marks the exchange stopped.
  @Test(arguments: [Event.finish, .stop, .attemptEndedForRetry, .attemptEndedForImmediateRetry])
  func leavingRunningKeepsTheLastExchange(_ event: Event) {
    var m = Self.machine(in: .running)
    _ = Self.fire(event, &m)
    #expect(m.running == nil)
    #expect(m.exchange?.hop == 7 && m.exchange?.responseBodyLength == 7)
    switch event {
    case .finish, .stop:
      #expect(m.exchange?.task == nil)
      if case .stopped? = m.exchange?.cancelReason {} else { Issue.record("not marked stopped") }
    default:
      #expect(m.exchange?.task === Self.task)
    }
  }

  @Test func retriesPairEveryStartedWithOneStopped() {
    var m = FetcherLifecycle()
    var started = 0
    var stopped = 0
    let begun = m.begin()
    #expect(begun == .proceed)
    for _ in 0..<3 {
      if m.attemptStarted() { started += 1 }
      if m.attemptEndedForRetry()?.postStopped == true { stopped += 1 }
      #expect(m.phase == .waitingToRetry)
      let ended = m.retryDelayEnded()
      #expect(ended)
    }
    if m.attemptStarted() { started += 1 }
    if m.finish()?.postStopped == true { stopped += 1 }
    #expect(started == 4)
    #expect(stopped == 4)
    #expect(!m.isStartedNotificationOutstanding)
  }
}
