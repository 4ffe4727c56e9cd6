import Foundation

/// A task executor whose jobs never wait for a thread that another job blocks: a job runs on an idle
/// thread of the executor's, or on a new one when every thread is busy. Work that blocks (a
/// semaphore, a `DispatchQueue.sync`, FoundationNetworking's own waits for its work queue) holds only
/// its thread, never one of the cooperative pool's, which has as many threads as the machine has
/// cores. A thread idle for a few seconds ends.
///
/// Tests that block run in ``withOwnThreads(_:)``; a Swift Testing trait can wrap a whole suite in
/// it (see this package's test targets).
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
public final class ElasticThreadExecutor: TaskExecutor, @unchecked Sendable {
  // `@unchecked Sendable`: `jobs`, `head` and `idle` are only touched under `condition`.

  /// The executor every ``withOwnThreads(_:)`` uses.
  public static let shared = ElasticThreadExecutor()

  private let condition = NSCondition()
  private var jobs: [UnownedJob] = []
  private var head = 0
  private var idle = 0

  private init() {}

  /// Runs `job` on an idle thread, or on a new one when none is idle.
  public func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    condition.lock()
    jobs.append(job)
    let needsThread = jobs.count - head > idle
    if !needsThread { condition.signal() }
    condition.unlock()
    if needsThread { Thread.detachNewThread { self.work() } }
  }

  private func work() {
    let executor = asUnownedTaskExecutor()
    while let job = nextJob() { job.runSynchronously(on: executor) }
  }

  /// The oldest waiting job, or nil when none came for 5 s (the thread then ends).
  private func nextJob() -> UnownedJob? {
    condition.lock()
    defer { condition.unlock() }
    while head == jobs.count {
      idle += 1
      let signalled = condition.wait(until: Date().addingTimeInterval(5))
      idle -= 1
      if !signalled && head == jobs.count { return nil }
    }
    let job = jobs[head]
    head += 1
    if head == jobs.count {
      jobs.removeAll(keepingCapacity: true)
      head = 0
    }
    return job
  }
}

/// Runs `body`, and every structured child task it makes, on the threads of
/// ``ElasticThreadExecutor`` rather than the cooperative pool; on systems without task executors,
/// runs it as it is.
public func withOwnThreads<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
  if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {
    return try await withTaskExecutorPreference(ElasticThreadExecutor.shared) { try await body() }
  }
  return try await body()
}
