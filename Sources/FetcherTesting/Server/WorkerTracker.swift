import Foundation

/// Keeps count of the server's threads (the accept loop and one per connection) so that
/// ``TestServer/stop()`` can wait until they have all closed their sockets.
///
/// `@unchecked Sendable`: ``condition`` protects both ``live`` and ``threads``.
final class WorkerTracker: @unchecked Sendable {
  private let condition = NSCondition()
  /// Workers registered and not yet finished, by worker number.
  private var live: Set<Int> = []
  /// The thread each running worker runs on, once it has started.
  private var threads: [Int: ObjectIdentifier] = [:]
  private var nextWorker = 1

  /// Registers a worker about to be started; call before starting its thread so a concurrent
  /// ``waitUntilFinished(timeout:)`` cannot miss it.
  func register() -> Int {
    condition.lock()
    defer { condition.unlock() }
    let worker = nextWorker
    nextWorker += 1
    live.insert(worker)
    return worker
  }

  /// Called first thing on the worker's own thread.
  func started(_ worker: Int) {
    condition.lock()
    threads[worker] = ObjectIdentifier(Thread.current)
    condition.unlock()
  }

  /// Called last thing on the worker's thread.
  func finished(_ worker: Int) {
    condition.lock()
    live.remove(worker)
    threads[worker] = nil
    condition.broadcast()
    condition.unlock()
  }

  /// The number of workers that have not finished.
  var liveCount: Int {
    condition.lock()
    defer { condition.unlock() }
    return live.count
  }

  /// Waits until every worker other than the calling thread has finished, or `timeout` passes.
  ///
  /// The calling thread is excluded so that a route handler may stop its own server.
  @discardableResult
  func waitUntilFinished(timeout: Double) -> Bool {
    let me = ObjectIdentifier(Thread.current)
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while true {
      let others = live.filter { threads[$0] != me }
      if others.isEmpty { return true }
      if !condition.wait(until: deadline) { return false }
    }
  }

  /// Waits until at most `count` workers have not finished (the accept loop alone is 1), or
  /// `timeout` passes; returns whether they had. Woken by each worker's end, not by polling.
  @discardableResult
  func waitUntilLive(atMost count: Int, timeout: Double) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while live.count > count {
      if !condition.wait(until: deadline) { return live.count <= count }
    }
    return true
  }

  /// Runs `body` on a new thread named `name`, counted as a worker from now until `body` returns.
  func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
    let worker = register()
    let thread = Thread { [self] in
      started(worker)
      body()
      finished(worker)
    }
    thread.name = name
    thread.start()
  }
}
