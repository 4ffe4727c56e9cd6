import Foundation

/// A task of the URLSession engine (see ``URLSessionEngineSession``): what the fetcher holds at
/// once, while the URLSession task itself is made, resumed, suspended and cancelled later, in that
/// order, on ``URLSessionEngineSession/taskQueue``.
///
/// FoundationNetworking makes, resumes and cancels a task by waiting for its work queue, one for
/// the whole process, on which libcurl's callbacks run (and an upload's body stream is read): with
/// other transfers busy, a caller would wait milliseconds to seconds there. So no caller of the
/// fetcher ever waits for it: every call to the URLSession task goes through the engine's queue.
///
/// Every event the session's delegate hands to the fetcher names this task, never the URLSession
/// task (the fetcher knows its task by identity).
///
/// `@unchecked Sendable`: `state` is only touched under its lock.
package final class URLSessionEngineTask: EngineTask, @unchecked Sendable {
  private struct State {
    /// The URLSession task, once made.
    var task: URLSessionTask?
    /// Cancelled or let go of: no URLSession task is made any more, and the one made is cancelled.
    var ended = false
    /// The URLSession task was resumed (set on the engine's queue).
    var resumed = false
    /// The URLSession the task was made on.
    var session: URLSession?
    /// Its response is paused through libcurl (see `ResponseReadPause`; on the engine's queue).
    var receivePaused = false
    /// What Apple's URLSession measured of the task (FoundationNetworking measures nothing).
    var metrics: TransferMetrics?
    /// The exact length of the task's body stream, if it has one with a length.
    var bodyStreamLength: Int64?
    /// Why the body stream could not be sent whole (see `BodyStreamPump`; Apple platforms).
    var bodyFailure: URLError?
  }

  private let state = Locked(State())
  /// Where the task is registered once made; weak: the dispatcher holds this task while registered.
  private weak var dispatcher: URLSessionDelegateRouter?

  /// Its session's ``URLSessionEngineSession/taskQueue``.
  private let queue: DispatchQueue

  package init(dispatcher: URLSessionDelegateRouter, queue: DispatchQueue) {
    self.dispatcher = dispatcher
    self.queue = queue
  }

  /// The URLSession task, once it is made.
  package var urlSessionTask: URLSessionTask? { state.withLock { $0.task } }

  /// Whether the task was cancelled (or let go of) before its URLSession task could be made.
  package var isEnded: Bool { state.withLock { $0.ended } }

  /// Whether the URLSession task was resumed.
  var wasResumed: Bool { state.withLock { $0.resumed } }

  /// Takes the URLSession task just made: false if the task was cancelled meanwhile, and `task` must
  /// be cancelled (it is marked in the redirect gate here). Called on the engine's queue.
  func attach(_ task: URLSessionTask, madeOn session: URLSession) -> Bool {
    state.withLock { state in
      state.task = task
      state.session = session
      if state.ended { URLSessionDelegateRouter.redirectGate.mark(task) }
      return !state.ended
    }
  }

  /// Starts the URLSession task, or goes on reading its response after ``suspend()``.
  package func resume() {
    queue.async {
      enum Step {
        case none
        case start(URLSessionTask)
        case continueReading(URLSessionTask, URLSession)
      }
      let step = self.state.withLock { state -> Step in
        guard !state.ended, let task = state.task else { return .none }
        if state.receivePaused, let session = state.session {
          state.receivePaused = false
          return .continueReading(task, session)
        }
        guard !state.resumed else { return .none }
        state.resumed = true
        return .start(task)
      }
      switch step {
      case .none:
        break
      case .start(let task):
        task.resume()
        self.dispatcher?.taskDidStart(task)
      case .continueReading(let task, let session):
        Self.setReading(task, in: session, paused: false)
      }
    }
  }

  /// Stops reading the response until ``resume()``: on Linux through libcurl (see `ResponseReadPause`;
  /// `URLSessionTask.suspend()` would end the connection and send the request again), elsewhere with
  /// `URLSessionTask.suspend()`.
  package func suspend() {
    queue.async {
      let running = self.state.withLock { state -> (URLSessionTask, URLSession)? in
        guard !state.ended, state.resumed, !state.receivePaused, let task = state.task,
          let session = state.session
        else { return nil }
        state.receivePaused = true
        return (task, session)
      }
      guard let (task, session) = running else { return }
      Self.setReading(task, in: session, paused: true)
    }
  }

  /// Pauses or goes on reading `task`'s response: on Linux through libcurl (see `ResponseReadPause`),
  /// elsewhere with `URLSessionTask.suspend()` / `resume()`. On the engine's queue.
  private static func setReading(_ task: URLSessionTask, in session: URLSession, paused: Bool) {
    #if FOUNDATION_NETWORKING
      if paused {
        ResponseReadPause.pause(task, in: session)
      } else {
        ResponseReadPause.resume(task, in: session)
      }
    #else
      _ = session
      if paused { task.suspend() } else { task.resume() }
    #endif
  }

  /// Same as ``letGo()``: a task the library cancels is marked in the redirect gate first.
  package func cancel() {
    letGo()
  }

  /// Marked in the redirect gate at once, cancelled on ``URLSessionEngineSession/taskQueue``: no
  /// redirect answer may reach the task from now on, even while its cancellation waits for
  /// FoundationNetworking (URLSession's own timer may end it meanwhile). A task not made yet is never
  /// made: its handler is told it was cancelled.
  package func letGo() {
    let task = state.withLock { state -> URLSessionTask? in
      state.ended = true
      return state.task
    }
    guard let task else { return }
    URLSessionDelegateRouter.redirectGate.mark(task)
    queue.async {
      task.cancel()
      // FoundationNetworking may never report a task cancelled before it ran.
      if !self.wasResumed { self.dispatcher?.reportCancelledUnlessReported(task) }
    }
  }

  package var response: URLResponse? { urlSessionTask?.response.map(IPv6LiteralHost.decoded) }

  /// What Apple's URLSession measured (`URLSessionTaskMetrics`, delivered before the task's
  /// completion); always nil on FoundationNetworking, which never delivers them.
  package var transferMetrics: TransferMetrics? { state.withLock { $0.metrics } }

  /// The stream URLSession reads for the body `stream` (of exactly `length` bytes, when given): on
  /// Apple platforms the input half of a bound pair fed from it (see `BodyStreamPump`), whose
  /// failure cancels the task and becomes its error (``bodyFailure``); on FoundationNetworking,
  /// which reads a stream without its events, `stream` itself.
  func urlSessionBodyStream(_ stream: InputStream, length: Int64?) -> InputStream {
    state.withLock { $0.bodyStreamLength = length }
    #if canImport(Darwin)
      return BodyStreamPump.boundStream(reading: stream, length: length) { [weak self] error in
        self?.bodyFailed(error)
      }
    #else
      return stream
    #endif
  }

  /// The length given with the body stream (for the stream URLSession asks for again).
  var bodyStreamLength: Int64? { state.withLock { $0.bodyStreamLength } }

  /// Why the body stream could not be sent whole, if it could not.
  var bodyFailure: URLError? { state.withLock { $0.bodyFailure } }

  /// The body stream failed (or was not its length): the task ends, with that error.
  private func bodyFailed(_ error: URLError) {
    let task = state.withLock { state -> URLSessionTask? in
      state.bodyFailure = error
      return state.ended ? nil : state.task
    }
    guard let task else { return }
    queue.async { task.cancel() }
  }

  /// Takes the metrics URLSession collected for the task.
  func collected(_ metrics: TransferMetrics?) {
    state.withLock { $0.metrics = metrics }
  }

  package var diagnosticSummary: String {
    let (task, ended) = state.withLock { ($0.task, $0.ended) }
    guard let task else { return ended ? "cancelled before it was made" : "not made yet" }
    return "\(task.taskIdentifier) state \(task.state.rawValue) sent \(task.countOfBytesSent) of "
      + "\(task.countOfBytesExpectedToSend), received \(task.countOfBytesReceived), response "
      + "\((task.response as? HTTPURLResponse)?.statusCode ?? -1), "
      + "error \(task.error.map { String(describing: $0) } ?? "none")"
  }
}
