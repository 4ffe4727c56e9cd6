import Testing

@testable import SessionFetcher

@Suite("Fetcher lifecycle state machine")
struct FetcherLifecycleTests {
  typealias State = FetcherLifecycle.State

  /// Drives a fresh machine into `state` through legal events.
  static func machine(in state: State) -> FetcherLifecycle {
    var m = FetcherLifecycle()
    switch state {
    case .idle: break
    case .preparing: _ = m.begin()
    case .waitingForSlot:
      _ = m.begin()
      _ = m.delayForSlot()
    case .running:
      _ = m.begin()
      _ = m.attemptStarted()
    case .waitingToRetry:
      _ = m.begin()
      _ = m.attemptStarted()
      _ = m.attemptEndedForRetry()
    case .finished:
      _ = m.begin()
      _ = m.finish()
    case .stopped:
      _ = m.begin()
      _ = m.stop()
    }
    #expect(m.state == state)
    return m
  }

  static let allStates: [State] = [
    .idle, .preparing, .waitingForSlot, .running, .waitingToRetry, .finished, .stopped,
  ]

  @Test(arguments: allStates)
  func begin(_ state: State) {
    var m = Self.machine(in: state)
    let expected: FetcherLifecycle.BeginOutcome =
      switch state {
      case .idle: .proceed
      case .stopped: .stoppedBeforeBegin
      default: .alreadyBegun
      }
    let r1 = m.begin()
    #expect(r1 == expected)
  }

  @Test(arguments: allStates)
  func stop(_ state: State) {
    var m = Self.machine(in: state)
    let result = m.stop()
    switch state {
    case .finished, .stopped:
      #expect(result == nil)
      #expect(m.state == state)
    case .idle:
      #expect(result?.postStopped == false)
      #expect(result?.mayCompleteAsCancelled == false)
      #expect(m.state == .stopped)
    case .running:
      #expect(
        result
          == .init(
            from: .running, postStopped: true, postRetryDelayStopped: false, mayCompleteAsCancelled: true))
    case .waitingToRetry:
      #expect(
        result
          == .init(
            from: .waitingToRetry, postStopped: false, postRetryDelayStopped: true,
            mayCompleteAsCancelled: true))
    case .preparing, .waitingForSlot:
      #expect(
        result
          == .init(
            from: state, postStopped: false, postRetryDelayStopped: false, mayCompleteAsCancelled: true))
    }
    // A second stop never posts anything.
    let r2 = m.stop()
    #expect(r2 == nil)
  }

  @Test(arguments: allStates)
  func finish(_ state: State) {
    var m = Self.machine(in: state)
    let result = m.finish()
    switch state {
    case .idle, .finished, .stopped:
      #expect(result == nil)
    case .running:
      #expect(result == .init(postStopped: true, postRetryDelayStopped: false))
    case .waitingToRetry:
      #expect(result == .init(postStopped: false, postRetryDelayStopped: true))
    case .preparing, .waitingForSlot:
      #expect(result == .init(postStopped: false, postRetryDelayStopped: false))
    }
    let r3 = m.finish()
    #expect(r3 == nil)
    #expect(!m.isFetching)
  }

  @Test(arguments: allStates)
  func lateEventsAfterTheEndAreIgnored(_ state: State) {
    guard state == .finished || state == .stopped else { return }
    var m = Self.machine(in: state)
    let r4 = m.attemptStarted()
    #expect(!r4)
    let r5 = m.attemptEndedForRetry()
    #expect(r5 == nil)
    let r6 = m.attemptEndedForImmediateRetry()
    #expect(r6 == nil)
    let r7 = m.retryDelayEnded()
    #expect(!r7)
    let r8 = m.slotGranted()
    #expect(!r8)
    let r9 = m.delayForSlot()
    #expect(!r9)
    #expect(m.state == state)
  }

  @Test func retriesPairEveryStartedWithOneStopped() {
    var m = FetcherLifecycle()
    var started = 0
    var stopped = 0
    let r10 = m.begin()
    #expect(r10 == .proceed)
    for _ in 0..<3 {
      if m.attemptStarted() { started += 1 }
      if m.attemptEndedForRetry()?.postStopped == true { stopped += 1 }
      #expect(m.state == .waitingToRetry)
      let r11 = m.retryDelayEnded()
      #expect(r11)
    }
    if m.attemptStarted() { started += 1 }
    if m.finish()?.postStopped == true { stopped += 1 }
    #expect(started == 4)
    #expect(stopped == 4)
    #expect(!m.isStartedNotificationOutstanding)
  }

  @Test func throttledFetcherStartsAfterItsSlot() {
    var m = FetcherLifecycle()
    _ = m.begin()
    let r12 = m.delayForSlot()
    #expect(r12)
    let r13 = m.attemptStarted()
    #expect(!r13)
    let r14 = m.slotGranted()
    #expect(r14)
    let r15 = m.attemptStarted()
    #expect(r15)
    #expect(m.isFetching)
  }

  @Test func immediateRetryGoesBackToPreparing() {
    var m = FetcherLifecycle()
    _ = m.begin()
    _ = m.attemptStarted()
    let r16 = m.attemptEndedForImmediateRetry()
    #expect(r16 == .init(postStopped: true))
    #expect(m.state == .preparing)
    let r17 = m.attemptStarted()
    #expect(r17)
  }
}
