import Foundation

/// One request of a small-GET run: `issue` starts it and calls `done` once with nil on success (status
/// 200 and the expected body) or a failure message.
protocol RequestIssuer: Sendable {
  func issue(_ done: @escaping @Sendable (String?) -> Void)
  func shutdown()
}

/// Keeps `inflight` requests outstanding until `count` have finished, starting the next request from
/// the completion of the previous one, and records each request's latency.
///
/// `@unchecked Sendable`: the counters and latencies are guarded by `lock`; `done` is a semaphore.
final class ClosedLoop: @unchecked Sendable {
  struct Outcome {
    var latenciesNanoseconds: [UInt64]
    var failures: Int
    var firstFailure: String?
  }

  private let issuer: any RequestIssuer
  private let count: Int
  private let inflight: Int
  private let lock = NSLock()
  private let finishedAll = DispatchSemaphore(value: 0)
  private var started = 0
  private var finished = 0
  private var outcome = Outcome(latenciesNanoseconds: [], failures: 0, firstFailure: nil)

  private init(issuer: any RequestIssuer, count: Int, inflight: Int) {
    self.issuer = issuer
    self.count = count
    self.inflight = inflight
    outcome.latenciesNanoseconds.reserveCapacity(count)
  }

  /// Runs `count` requests, `inflight` at a time; throws if they have not finished within `timeout`.
  static func run(
    _ issuer: any RequestIssuer, count: Int, inflight: Int, timeout: TimeInterval = 240
  ) throws -> Outcome {
    let loop = ClosedLoop(issuer: issuer, count: count, inflight: inflight)
    let initial = min(inflight, count)
    loop.lock.withLock { loop.started = initial }
    for _ in 0..<initial { loop.startOne() }
    if loop.finishedAll.wait(timeout: .now() + timeout) == .timedOut {
      throw BenchmarkError("timed out after \(loop.lock.withLock { loop.finished }) of \(count) requests")
    }
    return loop.lock.withLock { loop.outcome }
  }

  private func startOne() {
    let start = Measure.now()
    issuer.issue { failure in self.finish(startedAt: start, failure: failure) }
  }

  private func finish(startedAt start: UInt64, failure: String?) {
    let end = Measure.now()
    let (startNext, allFinished) = lock.withLock { () -> (Bool, Bool) in
      finished += 1
      if let failure {
        outcome.failures += 1
        if outcome.firstFailure == nil { outcome.firstFailure = failure }
      } else {
        outcome.latenciesNanoseconds.append(end - start)
      }
      let startNext = started < count
      if startNext { started += 1 }
      return (startNext, finished == count)
    }
    if startNext { startOne() }
    if allFinished { finishedAll.signal() }
  }
}
