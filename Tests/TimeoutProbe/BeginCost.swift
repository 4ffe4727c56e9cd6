import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher

/// `timeout-probe begin-cost [COUNT]`: what `beginFetch()` costs its caller. Begins COUNT fetches
/// (default 10,000) of `/bytes/10` through one `FetcherService` (no per-host limit, so every fetch
/// goes to the engine at once) on the engine the process runs on, timing each `beginFetch()` call
/// on the calling thread, then waits for them all. Prints
/// `begin-cost <engine> <count>: wall <total, p50, p99, max>; thread CPU <the same>; <n> ok` (wall:
/// the time the caller was held, preemption included; thread CPU: the caller's own work). A
/// measurement, not a test: its figures depend on the machine's load.
enum BeginCost {
  static func run(count: Int) {
    guard let server = try? TestServer() else { TimeoutProbe.fail("no test server") }
    let service = FetcherService()
    service.allowLocalhostRequest = true
    service.maxRunningFetchersPerHost = 0
    service.callbackQueue = DispatchQueue(label: "begin-cost", attributes: .concurrent)
    let url = server.url("/bytes/10")
    let fetchers = (0..<count).map { _ in service.fetcher(url: url) }
    let ok = Recorder<Bool>()
    let done = DispatchGroup()
    var micros: [Double] = []
    var cpuMicros: [Double] = []
    micros.reserveCapacity(count)
    cpuMicros.reserveCapacity(count)
    let expected = TestServer.patternBytes(count: 10)
    for fetcher in fetchers {
      done.enter()
      let start = DispatchTime.now().uptimeNanoseconds
      let cpuStart = threadCPUNanoseconds()
      fetcher.beginFetch { data, error in
        if error == nil && data == expected { ok.append(true) }
        done.leave()
      }
      cpuMicros.append(Double(threadCPUNanoseconds() - cpuStart) / 1000)
      micros.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
    }
    guard done.wait(timeout: .now() + 600) == .success else { TimeoutProbe.fail("fetches still running") }
    func summary(_ values: [Double]) -> String {
      let sorted = values.sorted()
      func percentile(_ p: Double) -> Int {
        Int(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
      }
      let total = String(format: "%.2f", sorted.reduce(0, +) / 1_000_000)
      return
        "total \(total) s, p50 \(percentile(0.5)) µs, p99 \(percentile(0.99)) µs, max \(Int(sorted.last ?? 0)) µs"
    }
    print(
      "begin-cost \(FetcherEngine.default) \(count): wall \(summary(micros)); thread CPU \(summary(cpuMicros)); "
        + "\(ok.count) ok")
    TimeoutProbe.finish(0)
  }
}

/// The calling thread's CPU time.
func threadCPUNanoseconds() -> UInt64 {
  var time = timespec()
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
  return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
