/// The life of one fetcher as an explicit state machine: no I/O, only decisions.
///
/// ```
/// idle ──begin──▶ preparing ──attemptStarted──▶ running ──attemptEndedForRetry──▶ waitingToRetry
///                   │  ▲                          │                                  │
///                   ▼  │ slotGranted              │ finish                           │ retryDelayEnded
///             waitingForSlot                      ▼                                  ▼
///                                              finished                           preparing
/// any state but finished ──stop──▶ stopped
/// ```
///
/// The fetcher holds one of these under its lock; each method takes an event and returns what the
/// fetcher must do (post which notifications, cancel what). The machine guarantees that every
/// `Started` notification is paired with exactly one `Stopped`, that a retry delay is bracketed by
/// `RetryDelayStarted`/`RetryDelayStopped`, and that a stopped or finished fetcher ignores late events.
package struct FetcherLifecycle: Sendable, Equatable {
  package enum State: Sendable, Equatable {
    /// Created, not begun.
    case idle
    /// Begun; validating, authorizing or preparing the next attempt (no Started posted yet).
    case preparing
    /// Held back by the service's per-host limit.
    case waitingForSlot
    /// An attempt is on the wire (Started posted).
    case running
    /// Between attempts, waiting out the retry delay.
    case waitingToRetry
    /// The fetch ended and its completion is being delivered.
    case finished
    /// Stopped by the user (or by task cancellation, or by the service's stop-all).
    case stopped
  }

  package private(set) var state: State = .idle
  /// A Started notification is out and its Stopped is not yet.
  package private(set) var isStartedNotificationOutstanding = false

  package init() {}

  /// Whether the fetch has begun and has not ended.
  package var isFetching: Bool {
    switch state {
    case .preparing, .waitingForSlot, .running, .waitingToRetry: return true
    case .idle, .finished, .stopped: return false
    }
  }

  package enum BeginOutcome: Sendable, Equatable {
    /// Proceed with the fetch.
    case proceed
    /// `stopFetching()` came first: complete with `.cancelled` if the fetcher should, post nothing.
    case stoppedBeforeBegin
    /// Already begun once: a fetcher is one-shot.
    case alreadyBegun
  }

  package mutating func begin() -> BeginOutcome {
    switch state {
    case .idle:
      state = .preparing
      return .proceed
    case .stopped:
      return .stoppedBeforeBegin
    default:
      return .alreadyBegun
    }
  }

  /// The service has no free slot for the host: wait. Returns false if the fetcher cannot wait now.
  package mutating func delayForSlot() -> Bool {
    guard state == .preparing else { return false }
    state = .waitingForSlot
    return true
  }

  /// The service granted a slot. Returns false if the fetcher was stopped meanwhile.
  package mutating func slotGranted() -> Bool {
    guard state == .waitingForSlot else { return false }
    state = .preparing
    return true
  }

  /// An attempt is about to go on the wire. Returns true when the caller must post Started.
  package mutating func attemptStarted() -> Bool {
    guard state == .preparing else { return false }
    state = .running
    isStartedNotificationOutstanding = true
    return true
  }

  /// What the fetcher posts when an attempt ends in a retry delay.
  package struct RetryTransition: Sendable, Equatable {
    package var postStopped: Bool
  }

  /// The attempt failed and will be retried after a delay. `nil` if the fetcher is not running
  /// (it was stopped meanwhile: do nothing). The caller posts Stopped (if asked) then RetryDelayStarted.
  package mutating func attemptEndedForRetry() -> RetryTransition? {
    guard state == .running || state == .preparing else { return nil }
    let postStopped = isStartedNotificationOutstanding
    isStartedNotificationOutstanding = false
    state = .waitingToRetry
    return RetryTransition(postStopped: postStopped)
  }

  /// The attempt failed and is retried at once (an authorization refresh). `nil` if not running.
  package mutating func attemptEndedForImmediateRetry() -> RetryTransition? {
    guard state == .running else { return nil }
    let postStopped = isStartedNotificationOutstanding
    isStartedNotificationOutstanding = false
    state = .preparing
    return RetryTransition(postStopped: postStopped)
  }

  /// The retry delay ran out (the caller posts RetryDelayStopped). False if stopped meanwhile.
  package mutating func retryDelayEnded() -> Bool {
    guard state == .waitingToRetry else { return false }
    state = .preparing
    return true
  }

  /// What the fetcher does when the fetch ends.
  package struct Finish: Sendable, Equatable {
    package var postStopped: Bool
    package var postRetryDelayStopped: Bool
  }

  /// The fetch ended with a result. `nil` if it had already ended or was stopped: deliver nothing.
  package mutating func finish() -> Finish? {
    switch state {
    case .preparing, .waitingForSlot, .running, .waitingToRetry:
      let result = Finish(
        postStopped: isStartedNotificationOutstanding, postRetryDelayStopped: state == .waitingToRetry)
      isStartedNotificationOutstanding = false
      state = .finished
      return result
    case .idle, .finished, .stopped:
      return nil
    }
  }

  /// What stopping requires.
  package struct Stop: Sendable, Equatable {
    /// The state the fetcher was in.
    package var from: State
    package var postStopped: Bool
    package var postRetryDelayStopped: Bool
    /// Whether a completion with `.cancelled` may be delivered (the fetch had not ended).
    package var mayCompleteAsCancelled: Bool
  }

  /// `stopFetching()`. `nil` when there is nothing to stop (already finished or stopped).
  package mutating func stop() -> Stop? {
    switch state {
    case .finished, .stopped:
      return nil
    case .idle:
      // Remember the stop so that a begin racing behind it completes as cancelled.
      state = .stopped
      return Stop(
        from: .idle, postStopped: false, postRetryDelayStopped: false, mayCompleteAsCancelled: false)
    case .preparing, .waitingForSlot, .running, .waitingToRetry:
      let result = Stop(
        from: state, postStopped: isStartedNotificationOutstanding,
        postRetryDelayStopped: state == .waitingToRetry, mayCompleteAsCancelled: true)
      isStartedNotificationOutstanding = false
      state = .stopped
      return result
    }
  }
}
