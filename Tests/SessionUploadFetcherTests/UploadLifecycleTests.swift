import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// The upload lifecycle machine without a socket: every state × the events that matter, with the
/// action expected; events a state cannot receive are documented by exit tests.
@Suite("Upload lifecycle state machine")
struct UploadLifecycleTests {
  typealias Machine = UploadLifecycle
  typealias Action = UploadLifecycle.Action

  static let location = URL(string: "http://127.0.0.1:9/big.upload")!
  static let total: Int64 = 199_000
  static let chunk: Int64 = 75_000
  static let retrying = Machine.RetrySettings(
    isEnabled: true, minInterval: 1, factor: 2, maxInterval: 600, hasRetryBlock: false)
  static let deciding = Machine.RetrySettings(
    isEnabled: true, minInterval: 1, factor: 2, maxInterval: 600, hasRetryBlock: true)

  /// The states a test starts from, each reached through legal events.
  enum Situation: String, CaseIterable, CustomTestStringConvertible {
    case idle, makingStart, sendingStart, readingChunk, sendingChunk, sendingQuery, decidingRetry
    case waitingUnarmed, waitingArmed, paused, pausedDecidingRetry, finished, stopped

    var testDescription: String { rawValue }
  }

  /// A machine in a situation, with what addresses its current step.
  struct Driven {
    var machine = Machine(location: nil)
    /// The current (else the latest) step's token.
    var token = 0
    /// The command on the wire (else the latest).
    var fetcher: SessionFetcher?
    var delay: RetryDelay?
  }

  static func fetcher() -> SessionFetcher {
    SessionFetcher(request: URLRequest(url: location))
  }

  static func response(_ headers: [String: String], status: Int = 200) -> HTTPURLResponse {
    HTTPURLResponse(url: location, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
  }

  static let startAnswer = response([
    "X-Goog-Upload-Status": "active", "X-Goog-Upload-URL": location.absoluteString,
  ])
  static let finalAnswer = response(["X-Goog-Upload-Status": "final"])
  static func activeAnswer(received: Int64) -> HTTPURLResponse {
    response(["X-Goog-Upload-Status": "active", "X-Goog-Upload-Size-Received": String(received)])
  }

  static func failure(_ status: Int) -> Machine.Answer {
    .failure(SessionFetcherError.status(code: status, data: nil))
  }

  static let firstChunk = Machine.ChunkRead(
    token: 2, offset: 0, length: chunk, isFinal: false, totalLength: total)

  /// Drives a fresh machine into `situation`, checking each action on the way.
  static func drive(_ situation: Situation) -> Driven {
    var d = Driven()
    if situation == .idle { return d }
    #expect(
      d.machine.begin(source: .measured(total), requestedChunkSize: chunk, wholeFileByURL: false)
        == .proceed(.send(.start(totalLength: total), token: 1)))
    d.token = 1
    if situation == .makingStart { return d }
    let start = fetcher()
    #expect(d.machine.commandMade(start, token: 1) == true)
    d.fetcher = start
    if situation == .sendingStart { return d }
    #expect(
      d.machine.commandEnded(start, answer: .success(startAnswer), reportsProgress: true, retrying: retrying)
        == .read(firstChunk, progress: nil, announcingLocation: true))
    d.token = 2
    if situation == .readingChunk { return d }
    #expect(
      d.machine.chunkRead(token: 2, result: .read(length: chunk, reportedFullLength: nil))
        == .send(.chunk(location, offset: 0, length: chunk, command: .upload), token: 3))
    let chunkFetcher = fetcher()
    #expect(d.machine.commandMade(chunkFetcher, token: 3) == true)
    d.token = 3
    d.fetcher = chunkFetcher
    switch situation {
    case .sendingChunk:
      break
    case .sendingQuery:
      #expect(
        d.machine.commandEnded(chunkFetcher, answer: failure(400), reportsProgress: true, retrying: retrying)
          == .send(.query(location), token: 4))
      let query = fetcher()
      #expect(d.machine.commandMade(query, token: 4) == true)
      d.token = 4
      d.fetcher = query
    case .decidingRetry, .pausedDecidingRetry:
      #expect(
        d.machine.commandEnded(chunkFetcher, answer: failure(503), reportsProgress: true, retrying: deciding)
          == .askRetryBlock(token: 4, suggestion: true))
      d.token = 4
      if situation == .pausedDecidingRetry {
        #expect(d.machine.pause() == .pause(Machine.Abandoned(command: nil, retryDelay: nil)))
      }
    case .waitingUnarmed, .waitingArmed:
      #expect(
        d.machine.commandEnded(chunkFetcher, answer: failure(503), reportsProgress: true, retrying: retrying)
          == .startRetryWait(interval: 1, token: 4, isFirst: true))
      d.token = 4
      if situation == .waitingArmed {
        let delay = RetryDelay(seconds: 3600, on: SystemFetchClock.shared) {}
        #expect(d.machine.retryWaitArmed(token: 4, delay: delay) == .none)
        d.delay = delay
      }
    case .paused:
      #expect(
        d.machine.pause()
          == .pause(
            Machine.Abandoned(command: .init(plan: chunkPlan, fetcher: chunkFetcher), retryDelay: nil)))
    case .finished:
      #expect(
        d.machine.commandEnded(
          chunkFetcher, answer: .success(finalAnswer), reportsProgress: false, retrying: retrying)
          == .finish(.completed, progress: nil))
    case .stopped:
      #expect(
        d.machine.stop()
          == .stop(
            Machine.Abandoned(command: .init(plan: chunkPlan, fetcher: chunkFetcher), retryDelay: nil),
            cancelAt: location))
    case .idle, .makingStart, .sendingStart, .readingChunk:
      break
    }
    return d
  }

  static let chunkPlan = Machine.CommandPlan.chunk(location, offset: 0, length: chunk, command: .upload)

  /// Cancels the delays a test armed.
  static func release(_ d: Driven) { _ = d.delay?.cancel(on: SystemFetchClock.shared) }

  // MARK: - Every state × stop, pause, resume, begin

  @Test(arguments: Situation.allCases)
  func stop(_ situation: Situation) {
    var d = Self.drive(situation)
    defer { Self.release(d) }
    let onWire = d.fetcher.map { Machine.Command(plan: .start(totalLength: Self.total), fetcher: $0) }
    let expected: Action =
      switch situation {
      case .idle, .finished, .stopped: .none
      case .sendingStart: .stop(.init(command: onWire, retryDelay: nil), cancelAt: nil)
      case .makingStart: .stop(.init(command: nil, retryDelay: nil), cancelAt: nil)
      case .sendingChunk:
        .stop(
          .init(command: .init(plan: Self.chunkPlan, fetcher: d.fetcher!), retryDelay: nil),
          cancelAt: Self.location)
      case .sendingQuery:
        .stop(
          .init(command: .init(plan: .query(Self.location), fetcher: d.fetcher!), retryDelay: nil),
          cancelAt: Self.location)
      case .waitingArmed: .stop(.init(command: nil, retryDelay: d.delay), cancelAt: Self.location)
      // Not armed yet: the side arming it posts RetryDelayStopped (see `armedAfterLeaving`).
      case .readingChunk, .decidingRetry, .waitingUnarmed, .paused, .pausedDecidingRetry:
        .stop(.init(command: nil, retryDelay: nil), cancelAt: Self.location)
      }
    #expect(d.machine.stop() == expected)
    #expect(d.machine.isStopped == (situation != .finished))
    #expect(!d.machine.isFetching)
    #expect(d.machine.stop() == .none, "stopping twice does nothing")
  }

  @Test(arguments: Situation.allCases)
  func pause(_ situation: Situation) {
    var d = Self.drive(situation)
    defer { Self.release(d) }
    let expected: Action =
      switch situation {
      case .idle, .paused, .pausedDecidingRetry, .finished, .stopped: .none
      case .sendingStart:
        .pause(
          .init(command: .init(plan: .start(totalLength: Self.total), fetcher: d.fetcher!), retryDelay: nil))
      case .sendingChunk:
        .pause(.init(command: .init(plan: Self.chunkPlan, fetcher: d.fetcher!), retryDelay: nil))
      case .sendingQuery:
        .pause(.init(command: .init(plan: .query(Self.location), fetcher: d.fetcher!), retryDelay: nil))
      case .waitingArmed: .pause(.init(command: nil, retryDelay: d.delay))
      case .makingStart, .readingChunk, .decidingRetry, .waitingUnarmed:
        .pause(.init(command: nil, retryDelay: nil))
      }
    #expect(d.machine.pause() == expected)
    switch situation {
    case .idle: #expect(d.machine.state == .idle(location: nil))
    case .finished, .stopped: #expect(!d.machine.isPaused)
    default:
      #expect(d.machine.isPaused)
      #expect(d.machine.isFetching)
      #expect(d.machine.currentFetcher == nil)
    }
  }

  @Test(arguments: Situation.allCases)
  func resume(_ situation: Situation) {
    var d = Self.drive(situation)
    defer { Self.release(d) }
    let action = d.machine.resume()
    switch situation {
    case .paused, .pausedDecidingRetry:
      // The paused step's token was spent by the pause.
      #expect(action == .send(.query(Self.location), token: d.token + 2))
      #expect(d.machine.isFetching && !d.machine.isPaused)
    default:
      #expect(action == .none)
    }
  }

  @Test func resumeBeforeTheUploadURLIsKnownStartsAgain() {
    var d = Self.drive(.sendingStart)
    _ = d.machine.pause()
    #expect(d.machine.resume() == .send(.start(totalLength: Self.total), token: 3))
    // The start fetcher abandoned by the pause answers late: nothing happens.
    #expect(
      d.machine.commandEnded(
        d.fetcher!, answer: .success(Self.startAnswer), reportsProgress: false, retrying: Self.retrying)
        == .none)
  }

  @Test(arguments: Situation.allCases)
  func begin(_ situation: Situation) {
    var d = Self.drive(situation)
    defer { Self.release(d) }
    let before = d.machine
    let result = d.machine.begin(source: .measured(1), requestedChunkSize: 1, wholeFileByURL: false)
    switch situation {
    case .idle: #expect(result == .proceed(.send(.start(totalLength: 1), token: 1)))
    case .stopped: #expect(result == .stoppedBeforeBegin)
    default: #expect(result == .alreadyBegun)
    }
    if situation != .idle { #expect(d.machine == before, "a refused begin changes nothing") }
  }

  // MARK: - Beginning

  struct BeginCase: Sendable, CustomTestStringConvertible {
    var name: String
    var location: URL?
    var source: Machine.SourceLength
    var expected: Machine.BeginAction
    var testDescription: String { name }
  }

  @Test(
    arguments: [
      BeginCase(
        name: "no source", location: nil, source: .missing,
        expected: .proceed(.finish(.noSource, progress: nil))),
      BeginCase(
        name: "unmeasurable source", location: nil, source: .unmeasurable,
        expected: .proceed(.finish(.sourceFailed, progress: nil))),
      BeginCase(
        name: "unknown length", location: nil, source: .measured(nil),
        expected: .proceed(.send(.start(totalLength: nil), token: 1))),
      BeginCase(
        name: "given upload URL: query", location: location, source: .measured(5),
        expected: .proceed(.send(.query(location), token: 1))),
      BeginCase(
        name: "given file URL: refused before any traffic", location: URL(string: "file:///upload")!,
        source: .measured(5),
        expected: .proceed(.finish(.invalidUploadLocation(URL(string: "file:///upload")!), progress: nil))),
    ])
  func beginning(_ row: BeginCase) {
    var machine = Machine(location: row.location)
    #expect(machine.begin(source: row.source, requestedChunkSize: 10, wholeFileByURL: false) == row.expected)
    if case .proceed(.finish) = row.expected {
      #expect(machine.state == .finished(.init(location: row.location, offset: 0, retryCount: 0)))
    } else {
      #expect(machine.isFetching)
    }
  }

  // MARK: - Retries

  @Test(arguments: Situation.allCases.filter { $0 != .idle })
  func retryDecision(_ situation: Situation) {
    for shouldRetry in [true, false] {
      var d = Self.drive(situation)
      defer { Self.release(d) }
      let action = d.machine.retryDecided(token: d.token, shouldRetry: shouldRetry)
      switch (situation, shouldRetry) {
      case (.decidingRetry, true):
        #expect(action == .startRetryWait(interval: 1, token: 5, isFirst: true))
      case (.decidingRetry, false):
        #expect(action == .finish(.commandFailed, progress: nil))
      case (.pausedDecidingRetry, false):
        // A pause does not undo the failure: refused, the upload ends with it.
        #expect(action == .finish(.commandFailed, progress: nil))
      default:
        #expect(action == .none)
      }
    }
  }

  @Test func aRetryDecisionInterruptedByPauseAndResumeIsForgotten() {
    var d = Self.drive(.pausedDecidingRetry)
    #expect(d.machine.resume() == .send(.query(Self.location), token: 6))
    #expect(d.machine.retryDecided(token: 4, shouldRetry: false) == .none)
    #expect(d.machine.isFetching)
  }

  @Test(arguments: Situation.allCases.filter { $0 != .idle })
  func retryWaitArmed(_ situation: Situation) {
    guard situation != .waitingArmed else { return }  // armed once (see the exit tests)
    var d = Self.drive(situation)
    defer { Self.release(d) }
    let delay = RetryDelay(seconds: 3600, on: SystemFetchClock.shared) {}
    defer { delay.cancel(on: SystemFetchClock.shared) }
    let action = d.machine.retryWaitArmed(token: d.token, delay: delay)
    if situation == .waitingUnarmed {
      #expect(action == .none)
      guard case .waitingToRetry(_, let wait) = d.machine.state else {
        Issue.record("not waiting: \(d.machine.state)")
        return
      }
      #expect(wait.delay == delay)
    } else {
      // The wait armed is not (or no longer) the upload's: cancel it and post its Stopped.
      #expect(action == .abandonRetryWait(delay))
    }
  }

  @Test(arguments: [Situation.paused, .stopped])
  func armedAfterLeaving(_ leaving: Situation) {
    // The wait was left (paused or stopped) before its delay was armed: the stop or pause posted no
    // RetryDelayStopped, the side arming it does.
    var d = Self.drive(.waitingUnarmed)
    let left = leaving == .paused ? d.machine.pause() : d.machine.stop()
    #expect(
      left == (leaving == .paused ? .pause(.init()) : .stop(.init(), cancelAt: Self.location)))
    let delay = RetryDelay(seconds: 3600, on: SystemFetchClock.shared) {}
    defer { delay.cancel(on: SystemFetchClock.shared) }
    #expect(d.machine.retryWaitArmed(token: 4, delay: delay) == .abandonRetryWait(delay))
  }

  @Test(arguments: Situation.allCases.filter { $0 != .idle && $0 != .waitingUnarmed })
  func retryDelayEnded(_ situation: Situation) {
    var d = Self.drive(situation)
    defer { Self.release(d) }
    let action = d.machine.retryDelayEnded(token: d.token)
    if situation == .waitingArmed {
      #expect(action == .endRetryWait(then: .query(Self.location), token: 5))
      #expect(d.machine.retryCount == 1)
    } else {
      #expect(action == .none)
      #expect(d.machine.retryCount == 0)
    }
  }

  @Test func backoffDoublesUntilTheLimitThenFails() {
    let settings = Machine.RetrySettings(
      isEnabled: true, minInterval: 1, factor: 2, maxInterval: 8, hasRetryBlock: false)
    var machine = Machine(location: nil)
    _ = machine.begin(source: .measured(10), requestedChunkSize: 10, wholeFileByURL: false)
    var token = 1
    var waits: [Action] = []
    for round in 0..<4 {
      let start = Self.fetcher()
      #expect(machine.commandMade(start, token: token) == true)
      let action = machine.commandEnded(
        start, answer: Self.failure(503), reportsProgress: false, retrying: settings)
      waits.append(action)
      guard case .startRetryWait(_, let waitToken, _) = action else { break }
      let delay = RetryDelay(seconds: 3600, on: SystemFetchClock.shared) {}
      delay.cancel(on: SystemFetchClock.shared)
      #expect(machine.retryWaitArmed(token: waitToken, delay: delay) == .none)
      // Before the upload URL is known, the start is sent again.
      #expect(
        machine.retryDelayEnded(token: waitToken)
          == .endRetryWait(then: .start(totalLength: 10), token: waitToken + 1))
      #expect(machine.retryCount == round + 1)
      token = waitToken + 1
    }
    #expect(
      waits == [
        .startRetryWait(interval: 1, token: 2, isFirst: true),
        .startRetryWait(interval: 2, token: 4, isFirst: false),
        .startRetryWait(interval: 4, token: 6, isFirst: false), .finish(.retryLimitReached, progress: nil),
      ])
    #expect(machine.state == .finished(.init(location: nil, offset: 0, retryCount: 3)))
  }

  // MARK: - What the fetcher reads

  @Test(arguments: Situation.allCases)
  func queries(_ situation: Situation) {
    let d = Self.drive(situation)
    defer { Self.release(d) }
    let m = d.machine
    let begun = situation != .idle
    #expect(m.isIdle == !begun)
    #expect(
      m.location == (begun && ![.makingStart, .sendingStart].contains(situation) ? Self.location : nil))
    let onWire: Set<Situation> = [.sendingStart, .sendingChunk, .sendingQuery]
    #expect((m.currentFetcher != nil) == onWire.contains(situation))
    if onWire.contains(situation) { #expect(m.currentFetcher === d.fetcher) }
    #expect(m.isFetching == (begun && situation != .finished && situation != .stopped))
  }

  // MARK: - Impossible events

  private func stderr(_ result: ExitTest.Result?) -> String {
    result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
  }

  @Test func eventsOfStepsNeverIssuedStopTheProcess() async {
    var result: ExitTest.Result?
    // Nothing is issued before the upload begins.
    result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      var machine = UploadLifecycle(location: nil)
      _ = machine.chunkRead(token: 1, result: .failed)
    }
    #expect(stderr(result).contains("chunkRead cannot happen in idle"))
    // A token newer than any step issued.
    result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      var machine = UploadLifecycle(location: nil)
      _ = machine.begin(source: .measured(1), requestedChunkSize: 1, wholeFileByURL: false)
      _ = machine.retryDelayEnded(token: 7)
    }
    #expect(stderr(result).contains("retryDelayEnded for step 7, never issued, in running("))
  }

  @Test func aRetryDelayEndsOnlyOnceArmedAndIsArmedOnce() async {
    var result: ExitTest.Result?
    // The fetcher arms the delay on the work queue before the delay's end can reach it there.
    result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      var machine = UploadLifecycle(location: URL(string: "http://127.0.0.1:9/u")!)
      _ = machine.begin(source: .measured(1), requestedChunkSize: 1, wholeFileByURL: false)
      let query = SessionFetcher(request: URLRequest(url: URL(string: "http://127.0.0.1:9/u")!))
      _ = machine.commandMade(query, token: 1)
      _ = machine.commandEnded(
        query, answer: .failure(SessionFetcherError.status(code: 503, data: nil)), reportsProgress: false,
        retrying: .init(isEnabled: true, minInterval: 1, factor: 2, maxInterval: 600, hasRetryBlock: false))
      _ = machine.retryDelayEnded(token: 2)
    }
    #expect(stderr(result).contains("retryDelayEnded before the delay was armed in waitingToRetry("))
    result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      var machine = UploadLifecycle(location: URL(string: "http://127.0.0.1:9/u")!)
      _ = machine.begin(source: .measured(1), requestedChunkSize: 1, wholeFileByURL: false)
      let query = SessionFetcher(request: URLRequest(url: URL(string: "http://127.0.0.1:9/u")!))
      _ = machine.commandMade(query, token: 1)
      _ = machine.commandEnded(
        query, answer: .failure(SessionFetcherError.status(code: 503, data: nil)), reportsProgress: false,
        retrying: .init(isEnabled: true, minInterval: 1, factor: 2, maxInterval: 600, hasRetryBlock: false))
      let delay = RetryDelay(seconds: 3600, on: SystemFetchClock.shared) {}
      _ = machine.retryWaitArmed(token: 2, delay: delay)
      _ = machine.retryWaitArmed(token: 2, delay: delay)
    }
    #expect(stderr(result).contains("retryWaitArmed twice in waitingToRetry("))
  }
}

extension UploadLifecycle.ChunkRead {
  func with(token: Int) -> Self {
    var copy = self
    copy.token = token
    return copy
  }
}

extension UploadLifecycle.Abandoned {
  init() { self.init(command: nil, retryDelay: nil) }
}
