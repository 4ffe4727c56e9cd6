import Foundation
import SessionFetcher

/// What a closure-form fetch completed with, as `SessionFetcher.fetchResult(timeout:)` (an extension
/// in this module) returns it.
///
/// `@unchecked Sendable`: the error is whatever the fetcher gave, and only the test that made the
/// fetch reads it.
public struct FetchResult: @unchecked Sendable {
  /// The completion's data.
  public var data: Data?
  /// The completion's error, or a ``FetchTimeout`` when the completion did not come in time.
  public var error: (any Error)?

  /// The error as a `SessionFetcherError`, if it is one.
  public var fetcherError: SessionFetcherError? { error as? SessionFetcherError }
  /// The error as a `URLError`, if it is one.
  public var urlError: URLError? { error as? URLError }

  /// A result with the given data and error.
  public init(data: Data?, error: (any Error)?) {
    self.data = data
    self.error = error
  }
}

/// The error of a wait that ran out of time: a test's own bound, never the library's.
public struct FetchTimeout: Error, CustomStringConvertible {
  /// Creates the error.
  public init() {}

  public var description: String { "the test's own bound ran out" }
}

extension SessionFetcher {
  /// Begins the fetch with the closure API and waits for its completion, at most `timeout` seconds.
  ///
  /// When the bound runs out first, the result's error is ``FetchTimeout`` and a line saying where
  /// the fetch stood (its URL, lifecycle, task state and bytes moved) is printed, so that a test
  /// that hangs on a loaded machine leaves evidence. The fetcher is not stopped, and a completion
  /// that arrives later is ignored.
  ///
  /// - Parameter timeout: The most seconds to wait (default 60: generous, for loaded machines,
  ///   whose shared thread pool can stall for many seconds under a whole suite).
  /// - Returns: The completion's data and error.
  public func fetchResult(timeout: TimeInterval = 60) async -> FetchResult {
    await withCheckedContinuation { (continuation: CheckedContinuation<FetchResult, Never>) in
      let once = Recorder<Bool>()
      let resume: @Sendable (FetchResult) -> Void = { result in
        if once.appendIfEmpty(true) { continuation.resume(returning: result) }
      }
      beginFetch { data, error in resume(FetchResult(data: data, error: error)) }
      // Weak: a test may check that the fetcher (and what it holds) is freed long before this runs.
      DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
        guard once.count == 0 else { return }
        let account =
          self.map { "\($0.request?.url?.absoluteString ?? "?"): \($0.diagnosticSummary)" } ?? "freed"
        print("fetchResult gave up after \(timeout) s on \(account)")
        resume(FetchResult(data: nil, error: FetchTimeout()))
      }
    }
  }
}

/// A thread-safe list of values recorded in callbacks, for tests to read afterwards.
///
/// `@unchecked Sendable`: the values are only touched under a lock.
public final class Recorder<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var storage: [Value] = []

  /// An empty recorder.
  public init() {}

  /// Appends a value.
  public func append(_ value: Value) {
    lock.withLock { storage.append(value) }
  }

  /// Appends `value` if nothing was recorded yet; returns whether it did (a one-shot flag).
  @discardableResult
  public func appendIfEmpty(_ value: Value) -> Bool {
    lock.withLock {
      guard storage.isEmpty else { return false }
      storage.append(value)
      return true
    }
  }

  /// The values recorded so far, in order.
  public var values: [Value] { lock.withLock { storage } }

  /// How many values were recorded.
  public var count: Int { lock.withLock { storage.count } }
}

/// Waits until `condition` holds, checking every 10 ms, at most `timeout` seconds.
///
/// - Parameters:
///   - timeout: The most seconds to wait (default 60, as for `fetchResult(timeout:)`).
///   - condition: Checked on the calling task; it must not block.
/// - Returns: Whether the condition held in time.
public func eventually(timeout: TimeInterval = 60, _ condition: () -> Bool) async -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while Date() < deadline {
    if condition() { return true }
    try? await Task.sleep(nanoseconds: 10_000_000)
  }
  return condition()
}

/// Returns once the blocks queued on `queue` before the call have run (a fetcher's notifications
/// and callbacks are asynchronous).
public func drain(_ queue: DispatchQueue) async {
  await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
}

/// Runs `body`, which blocks (a `Gate` wait, `waitForCompletion(timeout:)`), on a thread of its own
/// and returns its result: an async test that blocks the thread it runs on holds one of the
/// cooperative pool's few threads (two on a two-core machine), and every other test waits for it.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
  await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
    Thread.detachNewThread { continuation.resume(returning: body()) }
  }
}

/// A gate that a route handler or a callback waits on until the test opens it, or a bound runs out.
///
/// `@unchecked Sendable`: its state is only touched under its condition lock.
public final class Gate: @unchecked Sendable {
  private let condition = NSCondition()
  private var isOpen = false

  /// A closed gate.
  public init() {}

  /// Blocks the calling thread until the gate is open, at most `timeout` seconds.
  ///
  /// The default, 60 s, is a bound for a test that fails before it opens the gate, never a wait a
  /// passing test makes: a shorter one can run out on a loaded machine while the test still
  /// expects the gate closed.
  public func wait(timeout: TimeInterval = 60) {
    condition.lock()
    defer { condition.unlock() }
    let deadline = Date().addingTimeInterval(timeout)
    while !isOpen && condition.wait(until: deadline) {}
  }

  /// Opens the gate for every waiter, now and later.
  public func open() {
    condition.lock()
    isOpen = true
    condition.broadcast()
    condition.unlock()
  }
}

/// Records the lifecycle notifications (`sessionFetcherStarted`, `…Stopped`, `…RetryDelayStarted`,
/// `…RetryDelayStopped`, `…CompletionInvoked`) of the fetchers it watches, in the order they came.
///
/// Notifications of other fetchers are ignored, so tests running in parallel in one process do not
/// see each other's: a watched fetcher is known by its identity, held weakly, so an object made at
/// the address of one that was freed is not taken for it. The observers are removed when the recorder is freed.
///
/// `@unchecked Sendable`: its state is only touched under a lock.
public final class NotificationRecorder: @unchecked Sendable {
  private let lock = NSLock()
  private var events: [(Notification.Name, ObjectIdentifier)] = []
  /// The watched fetchers by identity, each held weakly: once one is freed, another object made at
  /// its address (a fetcher of a test running beside this one) is not taken for it.
  private var watched: [ObjectIdentifier: WeakFetcher] = [:]
  private var observers: [any NSObjectProtocol] = []

  /// The notifications recorded.
  public static let names: [Notification.Name] = [
    .sessionFetcherStarted, .sessionFetcherStopped, .sessionFetcherRetryDelayStarted,
    .sessionFetcherRetryDelayStopped, .sessionFetcherCompletionInvoked,
  ]

  /// A recorder watching `fetchers` (more can be added with ``watch(_:)``).
  public init(_ fetchers: [SessionFetcher] = []) {
    for fetcher in fetchers { watch(fetcher) }
    for name in Self.names {
      observers.append(
        NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { [weak self] note in
          guard let self, let fetcher = note.object as? SessionFetcher else { return }
          let id = ObjectIdentifier(fetcher)
          self.lock.withLock {
            if self.watched[id]?.fetcher === fetcher { self.events.append((name, id)) }
          }
        })
    }
  }

  deinit {
    for observer in observers { NotificationCenter.default.removeObserver(observer) }
  }

  /// Records `fetcher`'s notifications from now on.
  public func watch(_ fetcher: SessionFetcher) {
    lock.withLock { watched[ObjectIdentifier(fetcher)] = WeakFetcher(fetcher: fetcher) }
  }

  /// How many `name` notifications the watched fetchers posted.
  public func count(_ name: Notification.Name) -> Int {
    lock.withLock { events.filter { $0.0 == name }.count }
  }

  /// The watched fetchers in the order of their first `name` notification.
  public func order(of name: Notification.Name) -> [ObjectIdentifier] {
    lock.withLock {
      var seen: Set<ObjectIdentifier> = []
      return events.filter { $0.0 == name }.map(\.1).filter { seen.insert($0).inserted }
    }
  }

  /// The count of `sessionFetcherStarted`.
  public var started: Int { count(.sessionFetcherStarted) }
  /// The count of `sessionFetcherStopped`.
  public var stopped: Int { count(.sessionFetcherStopped) }
  /// The count of `sessionFetcherRetryDelayStarted`.
  public var retryDelayStarted: Int { count(.sessionFetcherRetryDelayStarted) }
  /// The count of `sessionFetcherRetryDelayStopped`.
  public var retryDelayStopped: Int { count(.sessionFetcherRetryDelayStopped) }
  /// The count of `sessionFetcherCompletionInvoked`.
  public var completionInvoked: Int { count(.sessionFetcherCompletionInvoked) }

  private struct WeakFetcher {
    weak var fetcher: SessionFetcher?
  }
}
