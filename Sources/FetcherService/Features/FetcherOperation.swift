import Foundation
import SessionFetcher

/// A fetch as an asynchronous `Operation`, so that an `OperationQueue` can order fetches with
/// dependencies and limit how many run at once (URLRequestOperation's and Avenue's idea).
///
/// The operation begins its fetcher in ``start()``, stays executing through the fetcher's retries
/// and redirects, and finishes when the fetch ends; ``data``, ``response``, ``error`` and
/// ``timing`` then hold the outcome. Cancelling the operation (``cancel()``, or the queue's
/// `cancelAllOperations()`) stops the fetch and finishes the operation with
/// `SessionFetcherError.cancelled`; an operation cancelled before it starts finishes
/// without sending anything. A fetch stopped some other way (`SessionFetcher.stopFetching()`,
/// the service's `stopAllFetchers()`) finishes the operation with `.cancelled` too, so a queue never
/// waits forever.
///
/// ```swift
/// let queue = OperationQueue()
/// queue.maxConcurrentOperationCount = 2
///
/// let login = FetcherOperation(fetcher: service.fetcher(urlString: "https://example.com/login"))
/// let profile = FetcherOperation {
///   // Runs when `profile` starts, after `login` finished: build the request from its result.
///   let session = try login.decode(Session.self)
///   return service.fetcher(urlString: "https://example.com/users/\(session.userID)")
/// }
/// profile.addDependency(login)
/// profile.completionBlock = { print(profile.timing ?? FetchTiming()) }
/// queue.addOperations([login, profile], waitUntilFinished: false)
/// ```
///
/// The operation finishes from the fetcher's `SessionFetcher.callbackQueue` (the
/// main queue unless set): do not block that queue waiting for the operation (for example with
/// `waitUntilAllOperationsAreFinished()` on the main thread while the callback queue is the main
/// queue).
///
/// `isExecuting` and `isFinished` change with the key-value notifications `Operation` requires
/// (`"isExecuting"`, `"isFinished"`), on Apple platforms and in swift-corelibs-foundation.
public final class FetcherOperation: Operation, @unchecked Sendable {
  // `@unchecked Sendable`: every mutable stored property is in `state`, behind its lock; the
  // fetcher factory is immutable and `Sendable`.

  private enum Phase: Equatable {
    case ready
    case executing
    /// A finish is claimed (results recorded); the key-value notifications are under way.
    case finishing(wasExecuting: Bool)
    case finished
  }

  private struct State {
    var phase = Phase.ready
    var fetcher: SessionFetcher?
    var data: Data?
    var response: URLResponse?
    var error: (any Error)?
    var timing: FetchTiming?
  }

  private let state: Locked<State>
  private let makeFetcher: @Sendable () throws -> SessionFetcher

  /// An operation that begins `fetcher` when it starts. The fetcher must not be begun elsewhere.
  public init(fetcher: SessionFetcher) {
    state = Locked(State(fetcher: fetcher))
    makeFetcher = { fetcher }
    super.init()
  }

  /// An operation that makes its fetcher when it starts — after its dependencies finished, so the
  /// request can depend on their results. If `makeFetcher` throws, the operation finishes with that
  /// error without fetching.
  ///
  /// ```swift
  /// let second = FetcherOperation {
  ///   let next = try first.decode(Page.self).next
  ///   return SessionFetcher.fetcher(url: next)
  /// }
  /// second.addDependency(first)
  /// ```
  public init(makingFetcher makeFetcher: @escaping @Sendable () throws -> SessionFetcher) {
    state = Locked(State())
    self.makeFetcher = makeFetcher
    super.init()
  }

  // MARK: - Results

  /// The fetcher: the one given to ``init(fetcher:)``, or the one made when the operation started.
  public var fetcher: SessionFetcher? { state.withLock { $0.fetcher } }

  /// The response body once the operation finished (nil on failure, and when the body went to the
  /// fetcher's destination file or accumulate block). For an HTTP status error, the error's body
  /// is in ``error``.
  public var data: Data? { state.withLock { $0.data } }

  /// The final response, once the operation finished (nil when none arrived).
  public var response: URLResponse? { state.withLock { $0.response } }

  /// The error the operation finished with, nil on success: the fetch's error as
  /// `SessionFetcher.beginFetch(completionHandler:)` gives it,
  /// `SessionFetcherError.cancelled` after ``cancel()``, or the error the fetcher
  /// factory threw.
  public var error: (any Error)? { state.withLock { $0.error } }

  /// The fetch's timing (start, first response and byte, end, duration, retries, redirects, bytes
  /// each way) once the operation finished; nil when no fetch began.
  public var timing: FetchTiming? { state.withLock { $0.timing } }

  /// The body decoded as JSON into `type`: the usual way for a dependent operation to read this
  /// one's result.
  ///
  /// - Throws: ``error`` when the operation failed (or
  ///   `SessionFetcherError.invalidConfiguration(_:)` when it has not finished),
  ///   otherwise the decoder's `DecodingError`.
  public func decode<Value: Decodable>(_ type: Value.Type, using decoder: JSONDecoder = JSONDecoder()) throws
    -> Value
  {
    let (phase, data, error) = state.withLock { ($0.phase, $0.data, $0.error) }
    if let error { throw error }
    guard phase == .finished else {
      throw SessionFetcherError.invalidConfiguration("the operation has not finished")
    }
    return try decoder.decode(type, from: data ?? Data())
  }

  // MARK: - Operation

  /// Always true: the operation runs its fetch asynchronously and finishes when it ends.
  public override var isAsynchronous: Bool { true }

  /// Whether the fetch is running.
  public override var isExecuting: Bool {
    state.withLock { $0.phase == .executing || $0.phase == .finishing(wasExecuting: true) }
  }

  /// Whether the operation is done (the fetch ended, failed to begin, or was cancelled).
  public override var isFinished: Bool { state.withLock { $0.phase == .finished } }

  /// Begins the fetch (an `OperationQueue` calls this; call it yourself only for an operation
  /// outside a queue). A cancelled operation finishes at once without fetching.
  public override func start() {
    guard state.withLock({ $0.phase == .ready }) else { return }
    if isCancelled {
      finish(error: SessionFetcherError.cancelled, from: .ready)
      return
    }
    willChangeValue(forKey: "isExecuting")
    state.withLock { $0.phase = .executing }
    didChangeValue(forKey: "isExecuting")

    let fetcher: SessionFetcher
    do {
      fetcher = try makeFetcher()
    } catch {
      finish(error: error, from: .executing)
      return
    }
    state.withLock { $0.fetcher = fetcher }
    // A cancel() that ran before the fetcher was stored could not stop it.
    if isCancelled {
      fetcher.stopFetching()
      finish(error: SessionFetcherError.cancelled, from: .executing)
      return
    }
    fetcher.begin(
      completion: { [weak self] data, error in
        self?.fetchEnded(fetcher, data: data, error: error)
      }, forceCompletionOnStop: true)
  }

  /// Cancels the operation: stops its fetch (no completion of the fetch runs afterwards) and
  /// finishes the operation with `SessionFetcherError.cancelled`. Before
  /// ``start()``, the operation will finish without fetching when the queue starts it.
  public override func cancel() {
    super.cancel()
    guard let fetcher = state.withLock({ $0.phase == .executing ? $0.fetcher : nil }) else { return }
    fetcher.stopFetching()
    finish(error: SessionFetcherError.cancelled, from: .executing, timing: fetcher.timing)
  }

  // MARK: - State changes

  private func fetchEnded(_ fetcher: SessionFetcher, data: Data?, error: (any Error)?) {
    finish(
      data: error == nil ? data : nil, response: fetcher.response, error: error, from: .executing,
      timing: fetcher.timing)
  }

  /// Records the outcome and finishes, once: the first caller wins, later ones do nothing.
  private func finish(
    data: Data? = nil, response: URLResponse? = nil, error: (any Error)?, from expected: Phase,
    timing: FetchTiming? = nil
  ) {
    let claimed = state.withLock { state -> Bool in
      guard state.phase == expected else { return false }
      state.phase = .finishing(wasExecuting: expected == .executing)
      state.data = data
      state.response = response ?? state.fetcher?.response
      state.error = error
      state.timing = timing ?? state.fetcher.map(\.timing)
      return true
    }
    guard claimed else { return }
    // Foundation reads the new values inside didChangeValue: change them between the calls, and
    // outside the lock (the queue calls back into isExecuting / isFinished).
    willChangeValue(forKey: "isFinished")
    willChangeValue(forKey: "isExecuting")
    state.withLock { $0.phase = .finished }
    didChangeValue(forKey: "isExecuting")
    didChangeValue(forKey: "isFinished")
  }
}
