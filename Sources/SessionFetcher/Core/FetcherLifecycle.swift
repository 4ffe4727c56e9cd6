import Foundation

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
/// The machine holds the fetch's ``RunState`` (``run``): made with the machine, out of reach in
/// `idle`, and the same from ``begin()`` (or a stop before begin, for the cancellation it records)
/// to the end, where what the fetch reports (its results, its timing) is read. The `running` state
/// carries the in-flight ``HopState``, which each hop replaces whole (``hopStarted(_:)``), and
/// through it the attempt's ``AttemptState``, which each attempt makes afresh
/// (``attemptStarted(at:)``) and its hops hand on. The states after it carry the last exchange,
/// read-only, for what the fetcher reports once the exchange is over, without its attempt (the
/// attempt's counts end with it). The ended states
/// carry how far the completion's delivery got (``completionDelivered()``): a stop after the finish
/// suppresses the callbacks still queued, and nothing runs after delivery.
///
/// The fetcher holds one of these under its lock; each method takes an event and returns an action,
/// which the fetcher performs after the lock (post which notifications, send the hop, let go of
/// which task, arm the retry delay). The exchange's own events (``cancelTask(_:)``,
/// ``detachTask()``, ``taskCompleted(_:)``) act on the exchange in flight only. The machine guarantees that
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
    case preparing(last: HopState?)
    /// Held back by the service's per-host limit.
    case waitingForSlot
    /// An attempt is on the wire (Started posted): its current exchange, which carries what spans
    /// the attempt's hops (``HopState/attempt``). One reference: reading the exchange, which the
    /// fetcher does on every event, retains nothing else.
    case running(HopState)
    /// Between attempts, waiting out the retry delay; carries the failed attempt's last exchange,
    /// and the delay once it is armed (see ``retryDelayArmed(_:)``): a delay outside this state
    /// cannot be written, and every way out of it hands the delay on to be cancelled.
    case waitingToRetry(last: HopState?, delay: RetryDelay?)
    /// The fetch ended; carries the last exchange, and how far the delivery of its completion got.
    case finished(last: HopState?, delivery: Delivery)
    /// Stopped by the user (or by task cancellation, or by the service's stop-all); carries the
    /// exchange that was stopped, if any, and whether the stop's delivery (its completion, or none)
    /// has run. The callbacks queued before the stop do not run. A stop before begin ends the
    /// fetch there: its run holds what it reports (a cancellation).
    case stopped(last: HopState?, delivered: Bool)
  }

  /// How far the delivery of a finished fetch's completion got.
  enum Delivery: Sendable, Equatable {
    /// Queued: the callbacks queued before it still run.
    case queued
    /// A stop came before it ran: the callbacks queued before it do not run, and the completion
    /// runs only as a cancellation, if the fetcher delivers one.
    case suppressed
    /// It ran (or was dropped): nothing of the fetch runs after it.
    case delivered
  }

  /// The states without their data.
  enum Phase: Sendable, Equatable, CaseIterable {
    case idle, preparing, waitingForSlot, running, waitingToRetry, finished, stopped
  }

  private(set) var state: State = .idle
  /// What spans the fetch (see ``run``): made with the machine, so that its memory is had beside
  /// the fetcher's own rather than in the middle of beginning, and out of reach until the fetch
  /// begins (nothing reads or writes it in `idle`). One reference for the fetcher's life, not a
  /// payload handed from state to state: reading it is a load, with nothing to unpack or retain.
  private let fetchRun = RunState()
  /// A Started notification is out and its Stopped is not yet.
  private(set) var isStartedNotificationOutstanding = false

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

  /// The in-flight exchange while running, else the last one a state carries (read-only). For the
  /// exchange in flight only, check ``phase`` and read ``current``.
  var exchange: HopState? {
    switch state {
    case .running(let exchange): return exchange
    case .preparing(let last), .waitingToRetry(let last, _), .finished(let last, _),
      .stopped(let last, _):
      return last
    case .idle, .waitingForSlot: return nil
    }
  }

  /// Whether the in-flight exchange is hop `hop`, still without its task (see
  /// ``HopState/pendingHop``).
  func isPending(hop: UInt64) -> Bool {
    guard case .running(let exchange) = state else { return false }
    return exchange.pendingHop == hop
  }

  /// The in-flight exchange, changed in place (a reference). Only while running: the caller checks
  /// ``phase`` under the same lock first.
  var current: HopState {
    guard case .running(let exchange) = state else {
      preconditionFailure("no exchange in flight in state \(phase)")
    }
    return exchange
  }

  /// What spans the fetch, changed in place (a reference). Only once the fetch has begun: the
  /// caller checks ``phase`` (or knows it began) under the same lock first; see ``begunRun`` for a
  /// read that may come before begin.
  var run: RunState {
    if case .idle = state {
      preconditionFailure("no run in state idle: nothing of a fetch before it begins")
    }
    return fetchRun
  }

  /// What spans the fetch, if it has begun (nil while idle): for what the fetcher reports, which
  /// may be asked before begin.
  var begunRun: RunState? {
    if case .idle = state { return nil }
    return fetchRun
  }

  /// The running attempt's state, changed in place (a reference). Only while running: the caller
  /// checks ``phase`` under the same lock first.
  var attempt: AttemptState {
    guard case .running(let exchange) = state, let attempt = exchange.attempt else {
      preconditionFailure("no attempt on the wire in state \(phase)")
    }
    return attempt
  }

  // MARK: - Events of the fetch

  /// What the fetcher does after ``begin()``.
  enum BeginAction: Sendable, Equatable {
    /// Proceed with the fetch.
    case proceed
    /// `stopFetching()` came first: complete with `.cancelled` if the fetcher should, post nothing.
    case stoppedBeforeBegin
    /// Already begun once: a fetcher is one-shot.
    case alreadyBegun
  }

  mutating func begin() -> BeginAction {
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

  /// What the fetcher does after ``delayForSlot()``.
  enum SlotAction: Sendable, Equatable {
    /// Ask the service whether the fetch may begin now (a grant may come meanwhile).
    case askService
    /// Stopped or ended meanwhile: nothing.
    case ignore
  }

  /// The service has no free slot for the host: wait.
  mutating func delayForSlot() -> SlotAction {
    switch state {
    case .preparing:
      state = .waitingForSlot
      return .askService
    case .finished, .stopped:
      return .ignore
    case .idle, .waitingForSlot, .running, .waitingToRetry:
      preconditionFailure("delayForSlot in state \(phase): only a fetch being prepared waits for a slot")
    }
  }

  /// What the fetcher does after an event that may start the next attempt.
  enum StartAction: Sendable, Equatable {
    /// Start the next attempt (``attemptStarted(at:)`` follows, after authorization).
    case startAttempt
    /// Not for this state (stopped meanwhile, or started already): nothing.
    case ignore
  }

  /// The service granted a slot. Ignored unless the fetcher was waiting for one (it was stopped
  /// meanwhile, or a grant racing the service's answer already started it).
  mutating func slotGranted() -> StartAction {
    switch state {
    case .waitingForSlot:
      state = .preparing(last: nil)
      return .startAttempt
    case .idle, .preparing, .running, .waitingToRetry, .finished, .stopped:
      return .ignore
    }
  }

  /// What the fetcher does after ``attemptStarted(at:)``.
  enum AttemptAction: Sendable, Equatable {
    /// Post Started, then send the attempt's first hop.
    case postStartedAndSend
    /// Stopped or ended meanwhile (or still waiting for a slot): nothing.
    case ignore
  }

  /// An attempt is about to go on the wire at `now`: its state starts afresh.
  mutating func attemptStarted(at now: Date) -> AttemptAction {
    switch state {
    case .preparing:
      // The attempt's first hop makes its exchange (`hopStarted`); until then, an empty one.
      let first = HopState()
      first.attempt = AttemptState(start: now)
      state = .running(first)
      isStartedNotificationOutstanding = true
      return .postStartedAndSend
    case .waitingForSlot, .finished, .stopped:
      return .ignore
    case .idle, .running, .waitingToRetry:
      preconditionFailure("attemptStarted in state \(phase): an attempt starts only from preparing")
    }
  }

  /// What the fetcher does after ``hopStarted(_:)``.
  enum HopAction: Sendable, Equatable {
    /// Hand the hop's request to the engine (or the test block).
    case send
    /// No longer running (stopped, finished or waiting to retry meanwhile): nothing.
    case ignore
  }

  /// A hop of the running attempt goes on the wire: `exchange` replaces the previous one whole; the
  /// attempt's state goes on.
  mutating func hopStarted(_ exchange: HopState) -> HopAction {
    switch state {
    case .running(let previous):
      exchange.attempt = previous.attempt
      state = .running(exchange)
      return .send
    case .preparing, .waitingForSlot, .waitingToRetry, .finished, .stopped:
      return .ignore
    case .idle:
      preconditionFailure("hopStarted in state \(phase): no hop before the fetch begins")
    }
  }

  /// What the fetcher does when an attempt ends to be tried again.
  enum RetryAction: Sendable, Equatable {
    /// Post Stopped (if `postStopped`), then RetryDelayStarted, and arm the retry delay.
    case scheduleRetry(postStopped: Bool)
    /// Post Stopped (if `postStopped`), then start the next attempt at once.
    case retryNow(postStopped: Bool)
    /// Not running (stopped meanwhile): nothing.
    case ignore
  }

  /// The attempt failed and will be retried after a delay.
  mutating func attemptEndedForRetry() -> RetryAction {
    let last: HopState?
    switch state {
    case .running(let exchange):
      Self.leave(exchange)
      last = exchange
    case .preparing(let previous):
      last = previous
    case .waitingForSlot, .waitingToRetry, .finished, .stopped: return .ignore
    case .idle:
      preconditionFailure("attemptEndedForRetry in state \(phase): no attempt before the fetch begins")
    }
    let postStopped = isStartedNotificationOutstanding
    isStartedNotificationOutstanding = false
    state = .waitingToRetry(last: last, delay: nil)
    return .scheduleRetry(postStopped: postStopped)
  }

  /// The attempt failed and is retried at once (an authorization refresh).
  mutating func attemptEndedForImmediateRetry() -> RetryAction {
    switch state {
    case .running(let exchange):
      Self.leave(exchange)
      let postStopped = isStartedNotificationOutstanding
      isStartedNotificationOutstanding = false
      state = .preparing(last: exchange)
      return .retryNow(postStopped: postStopped)
    case .preparing, .waitingForSlot, .waitingToRetry, .finished, .stopped:
      return .ignore
    case .idle:
      preconditionFailure(
        "attemptEndedForImmediateRetry in state \(phase): no attempt before the fetch begins")
    }
  }

  /// The delay of the wait the fetcher is in was armed: kept in the state, unless the wait ended
  /// meanwhile (a stop, an early retry) or already has its delay. False: the caller cancels it.
  mutating func retryDelayArmed(_ delay: RetryDelay) -> Bool {
    guard case .waitingToRetry(let last, nil) = state else { return false }
    state = .waitingToRetry(last: last, delay: delay)
    return true
  }

  /// The armed delay of the wait the fetcher is in, if any.
  var pendingRetryDelay: RetryDelay? {
    guard case .waitingToRetry(_, let delay) = state else { return nil }
    return delay
  }

  /// The retry delay ran out: the caller posts RetryDelayStopped and starts the next attempt.
  mutating func retryDelayEnded() -> StartAction {
    switch state {
    case .waitingToRetry(let last, _):
      state = .preparing(last: last)
      return .startAttempt
    case .idle, .preparing, .waitingForSlot, .running, .finished, .stopped:
      return .ignore
    }
  }

  /// The hop in flight answered with a redirect: counts it against the attempt's limit when it may
  /// be followed. Nil when no attempt is on the wire (it ended meanwhile): nothing is counted and
  /// nothing follows.
  mutating func redirectReceived(maximum: Int) -> RedirectLimit? {
    switch state {
    case .running(let exchange):
      guard let attempt = exchange.attempt else { return nil }
      let limit = RedirectPolicy.limit(followed: attempt.redirects, maximum: maximum)
      if limit == .follow { attempt.redirects += 1 }
      return limit
    case .idle, .preparing, .waitingForSlot, .waitingToRetry, .finished, .stopped:
      return nil
    }
  }

  /// What the fetcher does when the fetch ends.
  struct Finish {
    var postStopped: Bool
    var postRetryDelayStopped: Bool
    /// The task of the exchange in flight, for the caller to let go of after the lock.
    var task: (any EngineTask)?
    /// The armed retry delay of the wait that ended, to cancel.
    var retryDelay: RetryDelay?
  }

  /// What the fetcher does after ``finish()``.
  enum FinishAction {
    /// Let go of the task, post what is outstanding, deliver the completion.
    case deliver(Finish)
    /// Already ended or stopped: deliver nothing.
    case ignore
  }

  /// The fetch ended with a result.
  mutating func finish() -> FinishAction {
    var result = Finish(
      postStopped: isStartedNotificationOutstanding, postRetryDelayStopped: false, task: nil)
    switch state {
    case .running(let exchange):
      Self.leave(exchange)
      // An exchange whose task ended by itself keeps the reason it had (none, for a success).
      if exchange.task != nil { result.task = exchange.endTask(.stopped) }
      state = .finished(last: exchange, delivery: .queued)
    case .waitingToRetry(let last, let delay):
      result.postRetryDelayStopped = true
      result.retryDelay = delay
      state = .finished(last: last, delivery: .queued)
    case .preparing(let last):
      state = .finished(last: last, delivery: .queued)
    case .waitingForSlot:
      state = .finished(last: nil, delivery: .queued)
    case .idle, .finished, .stopped:
      return .ignore
    }
    isStartedNotificationOutstanding = false
    return .deliver(result)
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
    /// The armed retry delay of the wait that ended, to cancel.
    var retryDelay: RetryDelay?
  }

  /// What the fetcher does after ``stop()``.
  enum StopAction {
    /// Let go of the task, post what is outstanding, complete as cancelled if asked.
    case stop(Stop)
    /// Already finished or stopped: nothing.
    case ignore
  }

  /// `stopFetching()`. After the fetch finished, before its completion ran, the stop suppresses
  /// the delivery (see ``Delivery/suppressed``) and answers `ignore`: there is nothing else to stop.
  mutating func stop() -> StopAction {
    var result = Stop(
      from: phase, postStopped: isStartedNotificationOutstanding, postRetryDelayStopped: false,
      mayCompleteAsCancelled: true, task: nil)
    switch state {
    case .finished(let last, .queued):
      state = .finished(last: last, delivery: .suppressed)
      return .ignore
    case .finished, .stopped:
      return .ignore
    case .idle:
      // Remember the stop so that a begin racing behind it completes as cancelled. The fetch ends
      // here: its run holds what it reports (a cancellation).
      result.mayCompleteAsCancelled = false
      state = .stopped(last: nil, delivered: false)
    case .running(let exchange):
      Self.leave(exchange)
      result.task = exchange.endTask(.stopped)
      state = .stopped(last: exchange, delivered: false)
    case .waitingToRetry(let last, let delay):
      result.postRetryDelayStopped = true
      result.retryDelay = delay
      state = .stopped(last: last, delivered: false)
    case .preparing(let last):
      state = .stopped(last: last, delivered: false)
    case .waitingForSlot:
      state = .stopped(last: nil, delivered: false)
    }
    isStartedNotificationOutstanding = false
    return .stop(result)
  }

  /// The exchange leaves `running`: its attempt ends with it (the state that follows carries the
  /// exchange read-only, for what the fetcher reports).
  private static func leave(_ exchange: HopState) {
    exchange.attempt = nil
  }

  // MARK: - Delivery of the completion

  /// The block on the fetch's callback queue that delivers (or drops) the completion ran: true the
  /// first time, when the fetcher gives the queue back and lets go of the fetch. Only once the
  /// fetch has ended.
  mutating func completionDelivered() -> Bool {
    switch state {
    case .finished(let last, .queued), .finished(let last, .suppressed):
      state = .finished(last: last, delivery: .delivered)
      return true
    case .stopped(let last, false):
      state = .stopped(last: last, delivered: true)
      return true
    case .finished(_, .delivered), .stopped(_, true):
      return false
    case .idle, .preparing, .waitingForSlot, .running, .waitingToRetry:
      preconditionFailure("completionDelivered in state \(phase): no completion before the fetch ends")
    }
  }

  /// Whether a user callback queued now, or earlier, still runs: not after a stop, nor after the
  /// completion.
  var runsQueuedCallbacks: Bool {
    switch state {
    case .idle, .preparing, .waitingForSlot, .running, .waitingToRetry, .finished(_, .queued):
      return true
    case .finished(_, .suppressed), .finished(_, .delivered), .stopped:
      return false
    }
  }

  /// Whether a stop came before the completion ran: it then runs only as a cancellation.
  var isStoppedBeforeDelivery: Bool {
    switch state {
    case .finished(_, .suppressed), .stopped(_, false): return true
    case .idle, .preparing, .waitingForSlot, .running, .waitingToRetry: return false
    case .finished(_, .queued), .finished(_, .delivered), .stopped(_, true): return false
    }
  }

  /// Whether the completion's delivery ran.
  var isCompletionDelivered: Bool {
    switch state {
    case .finished(_, .delivered), .stopped(_, true): return true
    case .idle, .preparing, .waitingForSlot, .running, .waitingToRetry: return false
    case .finished(_, .queued), .finished(_, .suppressed), .stopped(_, false): return false
    }
  }

  // MARK: - Events of the exchange in flight

  /// Whether an event of `task` (nil: a test block's answer) belongs to the exchange in flight: a
  /// task the fetcher has let go of may still be reporting.
  func accepts(_ task: (any EngineTask)?) -> Bool {
    switch state {
    case .running(let exchange):
      guard let task else { return true }
      return exchange.task === task
    case .idle, .preparing, .waitingForSlot, .waitingToRetry, .finished, .stopped:
      return false
    }
  }

  /// What the fetcher does after ``cancelTask(_:)`` or ``detachTask()``.
  enum CancelAction {
    /// Let go of this task after the lock (nil: the exchange had none, a test block's or one
    /// still being made).
    case letGo((any EngineTask)?)
    /// Not running: nothing in flight to cancel.
    case ignore

    /// The task to let go of, if any.
    var task: (any EngineTask)? {
      switch self {
      case .letGo(let task): return task
      case .ignore: return nil
      }
    }
  }

  /// The fetcher ends the exchange in flight itself (a timeout, a failure it decided, a pause for
  /// a stream's consumer): records why, and takes its task, so that nothing the task still
  /// reports is accepted. A timeout also ends a wait for the task or a decision.
  mutating func cancelTask(_ reason: CancelReason) -> CancelAction {
    switch state {
    case .running(let exchange):
      if case .timedOut = reason { exchange.pendingHop = nil }
      return .letGo(exchange.endTask(reason))
    case .idle, .preparing, .waitingForSlot, .waitingToRetry, .finished, .stopped:
      return .ignore
    }
  }

  /// The exchange in flight goes on without its task (a response block cancelled it; the fetch
  /// ends next): takes the task, with no cancel reason.
  mutating func detachTask() -> CancelAction {
    switch state {
    case .running(let exchange):
      return .letGo(exchange.endTask(nil))
    case .idle, .preparing, .waitingForSlot, .waitingToRetry, .finished, .stopped:
      return .ignore
    }
  }

  /// The exchange in flight's task reported its end: it is the exchange's no more. False when the
  /// task is not the exchange's (let go of already).
  mutating func taskCompleted(_ task: any EngineTask) -> Bool {
    guard accepts(task) else { return false }
    current.task = nil
    return true
  }
}
