import Foundation

/// A task executor that runs every job on a new thread: work that blocks (a semaphore, a
/// `DispatchQueue.sync`, FoundationNetworking's own waits for its work queue) holds only that thread,
/// never one of the cooperative pool's, which has as many threads as the machine has cores.
///
/// Tests that block run in ``withOwnThreads(_:)``; a Swift Testing trait can wrap a whole suite in
/// it (see this package's test targets).
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
public final class ThreadPerJobExecutor: TaskExecutor {
  /// The executor every ``withOwnThreads(_:)`` uses.
  public static let shared = ThreadPerJobExecutor()

  private init() {}

  /// Starts a thread that runs `job`.
  public func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let executor = asUnownedTaskExecutor()
    Thread.detachNewThread { job.runSynchronously(on: executor) }
  }
}

/// Runs `body`, and every structured child task it makes, on threads of its own
/// (``ThreadPerJobExecutor``) rather than the cooperative pool; on systems without task executors,
/// runs it as it is.
public func withOwnThreads<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
  if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {
    return try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { try await body() }
  }
  return try await body()
}
