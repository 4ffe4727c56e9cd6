import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Samples this process's resident memory and its read and write byte counts while a bulk transfer
/// runs (`BENCH_TRACE_MEMORY=MS`, every MS milliseconds), to tell where a download's memory goes.
///
/// `/proc/self/io` counts every `read` and `write`: during a download the reads are the socket's
/// and the writes the destination file's, so `read - written` is what the process has received and
/// not yet written, wherever it sits (libcurl, FoundationNetworking's delegate queue, the fetcher).
///
/// `@unchecked Sendable`: `samples` and `running` are guarded by `lock`.
final class MemoryTrace: @unchecked Sendable {
  struct Sample {
    var milliseconds: Int
    var rssKiB: Int
    var readBytes: Int64
    var writtenBytes: Int64
    var pendingMiB: Double { Double(readBytes - writtenBytes) / 1_048_576 }
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
    var sample = Sample(milliseconds: milliseconds, rssKiB: 0, readBytes: 0, writtenBytes: 0)
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) {
      for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        sample.rssKiB = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
      }
    }
    if let io = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) {
      for line in io.split(separator: "\n") {
        let parts = line.split(separator: " ")
        guard parts.count == 2, let value = Int64(parts[1]) else { continue }
        if parts[0] == "rchar:" { sample.readBytes = value }
        if parts[0] == "wchar:" { sample.writtenBytes = value }
      }
    }
    return sample
  }
}
