/// The life of one fetcher as an explicit state machine: no I/O, only decisions.
///
/// ```
/// idle ──begin──▶ preparing ──attemptStarted──▶ running ──attemptEndedForRetry──▶ waitingToRetry
///                   │  ▲                          │ ▲                                │
///                   ▼  │ slotGranted              │ └ hopStarted                     │ retryDelayEnded
///             waitingForSlot                      │ finish                           ▼
///                                                 ▼                               preparing
///                                              finished
/// any state but finished ──stop──▶ stopped
/// ```
///
/// The `running` state carries the in-flight ``Exchange``; each hop replaces it whole
/// (``hopStarted(_:)``). The states after it carry the last exchange, read-only, for what the
/// fetcher reports once the exchange is over.
///
/// The fetcher holds one of these under its lock; each method takes an event and returns what the
/// fetcher must do (post which notifications, let go of which task). The machine guarantees that
/// every `Started` notification is paired with exactly one `Stopped`, that a retry delay is
/// bracketed by `RetryDelayStarted`/`RetryDelayStopped`, and that a stopped or finished fetcher
/// ignores late events. An event that cannot happen in a state is a `preconditionFailure` naming
/// the state.
struct FetcherLifecycle {
  enum State {
    /// Created, not begun.
    case idle
    /// Begun; validating, authorizing or preparing the next attempt (no Started posted yet). After
    /// a retry, carries the previous attempt's last exchange.
    case preparing(last: Exchange?)
    /// Held back by the service's per-host limit.
    case waitingForSlot
    /// An attempt is on the wire (Started posted): its current exchange.
    case running(Exchange)
    /// Between attempts, waiting out the retry delay; carries the failed attempt's last exchange.
    case waitingToRetry(last: Exchange?)
    /// The fetch ended and its completion is being delivered; carries the last exchange.
    case finished(last: Exchange?)
    /// Stopped by the user (or by task cancellation, or by the service's stop-all); carries the
    /// exchange that was stopped, if any.
    case stopped(last: Exchange?)
  }

  /// The states without their data.
  enum Phase: Sendable, Equatable, CaseIterable {
    case idle, preparing, waitingForSlot, running, waitingToRetry, finished, stopped
  }

  private(set) var state: State = .idle
  /// A Started notification is out and its Stopped is not yet.
  private(set) var isStartedNotificationOutstanding = false

  init() {}

  var phase: Phase {
    switch state {
    case .idle: return .idle
    case .preparing: return .preparing
    case .waitingForSlot: return .waitingForSlot
    case .running: return .running
    case .waitingToRetry: return .waitingToRetry
    case .finished: return .finished
    case .stopped: return .stopped
    }
  }

  /// Whether the fetch has begun and has not ended.
  var isFetching: Bool {
    switch state {
    case .preparing, .waitingForSlot, .running, .waitingToRetry: return true
    case .idle, .finished, .stopped: return false
    }
  }

  /// The in-flight exchange while running, else the last one a state carries (read-only).
  var exchange: Exchange? {
    switch state {
    case .running(let exchange): return exchange
    case .preparing(let last), .waitingToRetry(let last), .finished(let last), .stopped(let last): return last
    case .idle, .waitingForSlot: return nil
    }
  }

  /// The in-flight exchange; nil when not running.
  var running: Exchange? {
    guard case .running(let exchange) = state else { return nil }
    return exchange
  }

  /// Whether the in-flight exchange is hop `hop`, still without its task (see
  /// ``Exchange/pendingHop``).
  func isPending(hop: UInt64) -> Bool {
    guard case .running(let exchange) = state else { return false }
    return exchange.pendingHop == hop
  }

  /// The in-flight exchange, changed in place. Only while running: the caller checks
  /// ``phase`` under the same lock first.
  var current: Exchange {
    _read {
      guard case .running(let exchange) = state else {
        preconditionFailure("no exchange in flight in state \(phase)")
      }
      yield exchange
    }
    _modify {
      guard case .running(var exchange) = state else {
        preconditionFailure("no exchange in flight in state \(phase)")
      }
      // The payload is moved out while it changes, so that its buffers (the response body) are
      // uniquely referenced and grow in place.
      state = .idle
      defer { state = .running(exchange) }
      yield &exchange
    }
  }

  enum BeginOutcome: Sendable, Equatable {
    /// Proceed with the fetch.
    case proceed
    /// `stopFetching()` came first: complete with `.cancelled` if the fetcher should, post nothing.
    case stoppedBeforeBegin
    /// Already begun once: a fetcher is one-shot.
    case alreadyBegun
  }

  mutating func begin() -> BeginOutcome {
    switch state {
    case .idle:
      state = .preparing(last: nil)
      return .proceed
    case .stopped:
      return .stoppedBeforeBegin
    case .preparing, .waitingForSlot, .running, .waitingToRetry, .finished:
      return .alreadyBegun
    }
  }

  /// The service has no free slot for the host: wait. Returns false if the fetcher was stopped or
  /// ended meanwhile.
  mutating func delayForSlot() -> Bool {
    switch state {
    case .preparing:
      state = .waitingForSlot
      return true
    case .finished, .stopped:
      return false
    case .idle, .waitingForSlot, .running, .waitingToRetry:
      preconditionFailure("delayForSlot in state \(phase): only a fetch being prepared waits for a slot")
    }
  }

  /// The service granted a slot. Returns false unless the fetcher was waiting for one (it was
  /// stopped meanwhile, or a grant racing the service's answer already started it).
  mutating func slotGranted() -> Bool {
    switch state {
    case .waitingForSlot:
      state = .preparing(last: nil)
      return true
    case .idle, .preparing, .running, .waitingToRetry, .finished, .stopped:
      return false
    }
  }

  /// An attempt is about to go on the wire. Returns true when the caller must post Started.
  mutating func attemptStarted() -> Bool {
    switch state {
    case .preparing:
      // The attempt's first hop makes its exchange (`hopStarted`); until then, an empty one.
      state = .running(Exchange())
      isStartedNotificationOutstanding = true
      return true
    case .waitingForSlot, .finished, .stopped:
      return false
    case .idle, .running, .waitingToRetry:
      preconditionFailure("attemptStarted in state \(phase): an attempt starts only from preparing")
    }
  }

  /// A hop of the running attempt goes on the wire: `exchange` replaces the previous one whole.
  /// False if the fetcher is no longer running (stopped, finished or waiting to retry meanwhile).
  mutating func hopStarted(_ exchange: Exchange) -> Bool {
    switch state {
    case .running:
      state = .running(exchange)
      return true
    case .preparing, .waitingForSlot, .waitingToRetry, .finished, .stopped:
      return false
    case .idle:
      preconditionFailure("hopStarted in state \(phase): no hop before the fetch begins")
    }
  }

  /// What the fetcher posts when an attempt ends in a retry delay.
  struct RetryTransition: Sendable, Equatable {
    var postStopped: Bool
  }

  /// The attempt failed and will be retried after a delay. `nil` if the fetcher is not running
  /// (it was stopped meanwhile: do nothing). The caller posts Stopped (if asked) then RetryDelayStarted.
  mutating func attemptEndedForRetry() -> RetryTransition? {
    let last: Exchange?
    switch state {
    case .running(let exchange): last = exchange
    case .preparing(let previous): last = previous
    case .waitingForSlot, .waitingToRetry, .finished, .stopped: return nil
    case .idle:
      preconditionFailure("attemptEndedForRetry in state \(phase): no attempt before the fetch begins")
    }
    let postStopped = isStartedNotificationOutstanding
    isStartedNotificationOutstanding = false
    state = .waitingToRetry(last: last)
    return RetryTransition(postStopped: postStopped)
  }

  /// The attempt failed and is retried at once (an authorization refresh). `nil` if not running.
  mutating func attemptEndedForImmediateRetry() -> RetryTransition? {
    switch state {
    case .running(let exchange):
      let postStopped = isStartedNotificationOutstanding
      isStartedNotificationOutstanding = false
      state = .preparing(last: exchange)
      return RetryTransition(postStopped: postStopped)
    case .preparing, .waitingForSlot, .waitingToRetry, .finished, .stopped:
      return nil
    case .idle:
      preconditionFailure(
        "attemptEndedForImmediateRetry in state \(phase): no attempt before the fetch begins")
    }
  }

  /// The retry delay ran out (the caller posts RetryDelayStopped). False if stopped meanwhile.
  mutating func retryDelayEnded() -> Bool {
    switch state {
    case .waitingToRetry(let last):
      state = .preparing(last: last)
      return true
    case .idle, .preparing, .waitingForSlot, .running, .finished, .stopped:
      return false
    }
  }

  /// What the fetcher does when the fetch ends.
  struct Finish {
    var postStopped: Bool
    var postRetryDelayStopped: Bool
    /// The task of the exchange in flight, for the caller to let go of after the lock.
    var task: (any EngineTask)?
  }

  /// The fetch ended with a result. `nil` if it had already ended or was stopped: deliver nothing.
  mutating func finish() -> Finish? {
    var result = Finish(
      postStopped: isStartedNotificationOutstanding, postRetryDelayStopped: false, task: nil)
    switch state {
    case .running(var exchange):
      result.task = exchange.task
      if exchange.task != nil {
        exchange.task = nil
        exchange.cancelReason = .stopped
      }
      state = .finished(last: exchange)
    case .waitingToRetry(let last):
      result.postRetryDelayStopped = true
      state = .finished(last: last)
    case .preparing(let last):
      state = .finished(last: last)
    case .waitingForSlot:
      state = .finished(last: nil)
    case .idle, .finished, .stopped:
      return nil
    }
    isStartedNotificationOutstanding = false
    return result
  }

  /// What stopping requires.
  struct Stop {
    /// The state the fetcher was in.
    var from: Phase
    var postStopped: Bool
    var postRetryDelayStopped: Bool
    /// Whether a completion with `.cancelled` may be delivered (the fetch had not ended).
    var mayCompleteAsCancelled: Bool
    /// The task of the exchange in flight, for the caller to let go of after the lock.
    var task: (any EngineTask)?
  }

  /// `stopFetching()`. `nil` when there is nothing to stop (already finished or stopped).
  mutating func stop() -> Stop? {
    var result = Stop(
      from: phase, postStopped: isStartedNotificationOutstanding, postRetryDelayStopped: false,
      mayCompleteAsCancelled: true, task: nil)
    switch state {
    case .finished, .stopped:
      return nil
    case .idle:
      // Remember the stop so that a begin racing behind it completes as cancelled.
      result.mayCompleteAsCancelled = false
      state = .stopped(last: nil)
    case .running(var exchange):
      result.task = exchange.task
      exchange.task = nil
      exchange.cancelReason = .stopped
      state = .stopped(last: exchange)
    case .waitingToRetry(let last):
      result.postRetryDelayStopped = true
      state = .stopped(last: last)
    case .preparing(let last):
      state = .stopped(last: last)
    case .waitingForSlot:
      state = .stopped(last: nil)
    }
    isStartedNotificationOutstanding = false
    return result
  }
}
