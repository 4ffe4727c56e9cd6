import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Monotonic time, CPU time and memory readings of this process, and the `RESULT` line a child run
/// prints for the driver.
enum Measure {
  /// Nanoseconds on the monotonic clock.
  static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

  /// CPU nanoseconds the calling thread has used.
  static func threadCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }

  /// The calling thread's voluntary and involuntary context switches so far (`RUSAGE_THREAD`).
  static func threadContextSwitches() -> (voluntary: Int, involuntary: Int) {
    var usage = rusage()
    getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD (not imported into Swift)
    return (usage.ru_nvcsw, usage.ru_nivcsw)
  }

  /// User plus system CPU seconds this process has used.
  static func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
  }

  /// The process's peak resident set size in KiB (`VmHWM`), or 0 where /proc is missing.
  static func peakRSSKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
      return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
    return 0
  }

  /// The value at percentile `p` (0–100) of `sorted`, nearest-rank.
  static func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(sorted.count - 1, max(0, rank))]
  }

  /// Prints the one machine-readable line of a child run: `RESULT key=value …`, with the peak RSS
  /// appended. Values must not contain spaces.
  static func report(_ fields: KeyValuePairs<String, String>, extra: [(String, String)] = []) {
    var line = "RESULT"
    for (key, value) in fields { line += " \(key)=\(value)" }
    for (key, value) in extra { line += " \(key)=\(value)" }
    line += " vmhwm_kib=\(peakRSSKiB())"
    print(line)
    fflush(nil)  // every stream: `stdout` itself is shared mutable state to Swift 6
  }

  /// `value` with `digits` decimals, for `RESULT` lines.
  static func fixed(_ value: Double, _ digits: Int = 3) -> String {
    String(format: "%.\(digits)f", value)
  }
}

/// A failure message without spaces, for `RESULT` lines.
func compact(_ message: String) -> String {
  String(message.prefix(160).map { $0 == " " || $0 == "\n" ? "_" : $0 })
}

/// The error a run stops with.
struct BenchmarkError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
