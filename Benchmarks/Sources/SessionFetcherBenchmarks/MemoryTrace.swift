import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Samples this process's resident memory and the bytes received and written while a bulk transfer
/// runs (`BENCH_TRACE_MEMORY=MS`, every MS milliseconds), to tell where a download's memory goes.
///
/// During a download from the loopback nginx, the bytes the loopback interface has carried
/// (`/proc/net/dev`) are the body nginx has sent, and the bytes this process has written
/// (`wchar` of `/proc/self/io`) are the body on disk: the difference is what has arrived and is
/// not written yet, wherever it sits (the kernel's socket buffer, libcurl, FoundationNetworking's
/// delegate queue, the fetcher). Other loopback traffic at the same time counts too.
///
/// `@unchecked Sendable`: `samples` and `running` are guarded by `lock`.
final class MemoryTrace: @unchecked Sendable {
  struct Sample {
    var milliseconds: Int
    var rssKiB: Int
    var loopbackBytes: Int64
    var writtenBytes: Int64
    var pendingMiB: Double { Double(loopbackBytes - writtenBytes) / 1_048_576 }
  }

  private let lock = NSLock()
  private var samples: [Sample] = []
  private var running = true
  private let done = DispatchSemaphore(value: 0)

  /// Starts sampling when `BENCH_TRACE_MEMORY` names an interval; nil otherwise.
  static func startIfRequested() -> MemoryTrace? {
    guard let text = ProcessInfo.processInfo.environment["BENCH_TRACE_MEMORY"], let ms = Int(text), ms > 0
    else { return nil }
    let trace = MemoryTrace()
    let start = Measure.now()
    let thread = Thread { [trace] in
      while trace.lock.withLock({ trace.running }) {
        let sample = MemoryTrace.read(milliseconds: Int((Measure.now() - start) / 1_000_000))
        trace.lock.withLock { trace.samples.append(sample) }
        usleep(UInt32(ms * 1000))
      }
      trace.done.signal()
    }
    thread.start()
    return trace
  }

  /// Stops sampling; prints the samples to standard error and returns summary fields for `RESULT`.
  func stop() -> [(String, String)] {
    lock.withLock { running = false }
    done.wait()
    let samples = lock.withLock { self.samples }
    guard let peak = samples.max(by: { $0.rssKiB < $1.rssKiB }), let first = samples.first else { return [] }
    var log = "TRACE ms rss_mib pending_mib\n"
    for sample in samples {
      log += "TRACE \(sample.milliseconds) \(Measure.fixed(Double(sample.rssKiB) / 1024, 1)) "
      log += "\(Measure.fixed(sample.pendingMiB - first.pendingMiB, 1))\n"
    }
    FileHandle.standardError.write(Data(log.utf8))
    let maxPending = samples.map { $0.pendingMiB - first.pendingMiB }.max() ?? 0
    return [
      ("trace_samples", "\(samples.count)"),
      ("trace_peak_rss_mib", Measure.fixed(Double(peak.rssKiB) / 1024, 1)),
      ("trace_pending_at_peak_mib", Measure.fixed(peak.pendingMiB - first.pendingMiB, 1)),
      ("trace_max_pending_mib", Measure.fixed(maxPending, 1)),
    ]
  }

  private static func read(milliseconds: Int) -> Sample {
    var sample = Sample(milliseconds: milliseconds, rssKiB: 0, loopbackBytes: 0, writtenBytes: 0)
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) {
      for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        sample.rssKiB = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
      }
    }
    if let io = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) {
      for line in io.split(separator: "\n") {
        let parts = line.split(separator: " ")
        if parts.count == 2, parts[0] == "wchar:", let value = Int64(parts[1]) { sample.writtenBytes = value }
      }
    }
    if let dev = try? String(contentsOfFile: "/proc/net/dev", encoding: .utf8) {
      for line in dev.split(separator: "\n") {
        let parts = line.split(whereSeparator: { $0 == " " || $0 == ":" })
        if parts.count > 1, parts[0] == "lo", let value = Int64(parts[1]) { sample.loopbackBytes = value }
      }
    }
    return sample
  }
}
