import FetcherService
import Foundation
import SessionFetcher

/// A start-cost child run (`child start service|ahc`): after `inflight` warm-up requests, one thread
/// starts `count` small GETs back to back, all at once (a `FetcherService` with no per-host limit, so
/// every fetch goes to the engine when it begins), timing each start on the calling thread; then it
/// waits for them all. Reported as the small-GET runs are, except that `p50_us` and `p99_us` are the
/// caller's time per start (`beginFetch`, AsyncHTTPClient's `execute`), `rps` the requests finished
/// per second from the first start to the last completion, and `cpu_us_per_op` the process's CPU per
/// request. `caller_cpu_p50_us` and `caller_cpu_p99_us` are the calling thread's own CPU time per
/// start, `caller_waits` and `caller_preempted` its voluntary and involuntary context switches while
/// starting (Benchmarks/README: where the URLSession engine's p99 goes).
func runStartCost(client: String, options: Options) throws {
  let url = options.viaBase.appendingPathComponent("small.txt")
  let expected = options.smallLength
  let issuer: any RequestIssuer
  switch client {
  case "service":
    let service = FetcherService()
    service.maxRunningFetchersPerHost = 0
    issuer = FetcherIssuer(
      urls: [url], expectedLength: expected, service: service, tlsSettings: options.benchTLSSettings)
  case "ahc":
    issuer = try AHCIssuer(
      urls: [url], expectedLength: expected, connections: 16,
      trusting: options.via == "plain" ? nil : options.caFile)
  default:
    throw BenchmarkError("unknown start-cost client \(client)")
  }
  defer { issuer.shutdown() }

  _ = try ClosedLoop.run(issuer, count: options.inflight, inflight: options.inflight)
  let count = options.count
  let tally = StartTally(count: count)
  var callerMicros: [Double] = []
  callerMicros.reserveCapacity(count)
  var callerCPUMicros: [Double] = []
  callerCPUMicros.reserveCapacity(count)
  let cpuBefore = Measure.cpuSeconds()
  let start = Measure.now()
  // The calling thread's context switches while it starts requests: voluntary ones are waits (a
  // lock, a blocking call), involuntary ones preemption by other threads.
  var voluntary = 0
  var involuntary = 0
  for _ in 0..<count {
    let switchesBefore = Measure.threadContextSwitches()
    let before = Measure.now()
    let cpuBefore = Measure.threadCPUNanoseconds()
    issuer.issue { failure in tally.finished(failure) }
    callerCPUMicros.append(Double(Measure.threadCPUNanoseconds() - cpuBefore) / 1000)
    callerMicros.append(Double(Measure.now() - before) / 1000)
    let switchesAfter = Measure.threadContextSwitches()
    voluntary += switchesAfter.voluntary - switchesBefore.voluntary
    involuntary += switchesAfter.involuntary - switchesBefore.involuntary
  }
  guard tally.allFinished.wait(timeout: .now() + 240) == .success else {
    throw BenchmarkError("timed out after \(tally.outcome.finished) of \(count) requests")
  }
  let seconds = Double(Measure.now() - start) / 1e9
  let cpu = Measure.cpuSeconds() - cpuBefore
  callerMicros.sort()
  callerCPUMicros.sort()
  let (_, failed, failure) = tally.outcome
  Measure.report([
    "ok": "\(count - failed)", "errors": "\(failed)", "first_error": failure ?? "-",
    "rps": Measure.fixed(Double(count - failed) / seconds, 1),
    "p50_us": Measure.fixed(Measure.percentile(callerMicros, 50), 1),
    "p99_us": Measure.fixed(Measure.percentile(callerMicros, 99), 1),
    "cpu_us_per_op": Measure.fixed(cpu / Double(max(count, 1)) * 1e6, 1),
    "caller_s": Measure.fixed(callerMicros.reduce(0, +) / 1e6),
    "caller_cpu_p50_us": Measure.fixed(Measure.percentile(callerCPUMicros, 50), 1),
    "caller_cpu_p99_us": Measure.fixed(Measure.percentile(callerCPUMicros, 99), 1),
    "caller_waits": "\(voluntary)", "caller_preempted": "\(involuntary)",
    "secs": Measure.fixed(seconds),
  ])
}

/// The completions of a start-cost run.
///
/// `@unchecked Sendable`: the counts are guarded by `lock`; `allFinished` is a semaphore.
private final class StartTally: @unchecked Sendable {
  private let count: Int
  private let lock = NSLock()
  private var finishedCount = 0
  private var failures = 0
  private var firstFailure: String?
  /// Signalled when the last request has finished.
  let allFinished = DispatchSemaphore(value: 0)

  init(count: Int) { self.count = count }

  func finished(_ failure: String?) {
    let last = lock.withLock { () -> Bool in
      finishedCount += 1
      if let failure {
        failures += 1
        if firstFailure == nil { firstFailure = failure }
      }
      return finishedCount == count
    }
    if last { allFinished.signal() }
  }

  /// Requests finished, how many failed, and the first failure.
  var outcome: (finished: Int, failures: Int, firstFailure: String?) {
    lock.withLock { (finishedCount, failures, firstFailure) }
  }
}
