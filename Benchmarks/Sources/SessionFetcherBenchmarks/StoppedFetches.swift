import FetcherService
import Foundation
import SessionFetcher

#if canImport(Glibc)
  import Glibc
#endif

/// A stopped-fetches child run (`child stopped service|service-keeping`): what stays resident after
/// `--count` fetches are begun from one `FetcherService` against a listener that never answers and
/// stopped with `stopAllFetchers()`, `--rounds` times, each reading against the one before the first
/// round (resident bytes after `malloc_trim(0)`, once the worker threads the stops woke have gone).
///
/// `service` lets go of the stopped fetchers before each reading, as `child memory` does;
/// `service-keeping` keeps the last round's fetchers through its reading, as a caller that holds on
/// to them would. With `BENCH_MALLOC_STATS=1`, glibc's `malloc_stats()` goes to standard error at
/// each reading (its "in use bytes" against "system bytes" tell the live heap from what the arenas
/// keep).
///
/// The process ends right after the last reading, without letting go of the service, its engine or
/// the listener: under `heaptrack`, the allocations "leaked" at exit are the ones held at that
/// reading (compare a run with `--count 0`).
func runStoppedFetches(client: String, options: Options) throws {
  guard client == "service" || client == "service-keeping" else {
    throw BenchmarkError("unknown stopped-fetches client \(client)")
  }
  let small = options.viaBase.appendingPathComponent("small.txt")
  let listener = try SilentListener()
  let silent = URL(string: "http://127.0.0.1:\(listener.port)/never")!
  let service = try warmedUpService(small: small, options: options)

  Resident.settleThreads()
  let base = StoppedFetchesReading.take()
  var fields: [(String, String)] = [("count", "\(options.count)")]
  var kept: [SessionFetcher] = []
  for round in 0..<options.rounds {
    kept.removeAll()
    var fetchers: [SessionFetcher] = []
    for _ in 0..<options.count {
      let fetcher = service.fetcher(url: silent)
      fetcher.beginFetch { _, _ in }
      fetchers.append(fetcher)
    }
    if options.count > 0 {
      _ = listener.waitForConnections(1, timeout: 10)
      Thread.sleep(forTimeInterval: 1)
    }
    service.stopAllFetchers()
    let deadline = Date().addingTimeInterval(60)
    while fetchers.contains(where: \.isFetching) {
      guard Date() < deadline else { throw BenchmarkError("stopped fetches still fetching after 60 s") }
      Thread.sleep(forTimeInterval: 0.01)
    }
    if client == "service-keeping" { kept = fetchers }
    fetchers.removeAll()
    Resident.settleThreads()
    fields.append(("after_round_\(round + 1)_bytes", "\(StoppedFetchesReading.take() - base)"))
  }
  fields.append(("kept_fetchers", "\(kept.count)"))
  Measure.report(["ok": "1", "errors": "0", "first_error": "-"], extra: fields)
  // Nothing is let go: see the type's comment.
  exit(0)
}

/// A reading of ``runStoppedFetches(client:options:)``.
private enum StoppedFetchesReading {
  private typealias StatsFunction = @convention(c) () -> Void

  /// glibc's `malloc_stats`, which the Glibc module does not declare.
  private static let stats: StatsFunction? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_stats") else { return nil }
    return unsafeBitCast(symbol, to: StatsFunction.self)
  }()

  /// Trimmed resident bytes, with glibc's arenas printed first when `BENCH_MALLOC_STATS=1`.
  static func take() -> Int {
    let bytes = Resident.trimmedBytes()
    if ProcessInfo.processInfo.environment["BENCH_MALLOC_STATS"] == "1" {
      fflush(nil)
      stats?()
    }
    return bytes
  }
}
