import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

/// The URLSession engine sets glibc's trim threshold once (`HeapReleaseThreshold`), unless the
/// process's environment sets glibc's malloc thresholds or the app opted out.
@Suite("malloc trim threshold")
struct MallocTrimThresholdTests {
  @Test("the decision, by environment and switch")
  func decisions() {
    typealias Decision = HeapReleaseThreshold.Decision
    let rows: [(environment: [String: String], enabled: Bool, available: Bool, expected: Decision)] = [
      ([:], true, true, .set(bytes: 1 << 20)),
      (["PATH": "/usr/bin", "MALLOC_ARENA_MAX": "2"], true, true, .set(bytes: 1 << 20)),
      ([:], false, true, .optedOut),
      ([:], true, false, .unavailable),
      ([:], false, false, .unavailable),
      (["MALLOC_TRIM_THRESHOLD_": "131072"], true, true, .keptEnvironment("MALLOC_TRIM_THRESHOLD_")),
      (["MALLOC_MMAP_THRESHOLD_": "1048576"], true, true, .keptEnvironment("MALLOC_MMAP_THRESHOLD_")),
      (["MALLOC_TOP_PAD_": "0"], true, true, .keptEnvironment("MALLOC_TOP_PAD_")),
      (["GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1"], true, true, .keptEnvironment("GLIBC_TUNABLES")),
      (
        ["GLIBC_TUNABLES": "glibc.rtld.nns=4:glibc.malloc.mmap_threshold=131072"], true, true,
        .keptEnvironment("GLIBC_TUNABLES")
      ),
      (["GLIBC_TUNABLES": "glibc.malloc.top_pad=0"], true, true, .keptEnvironment("GLIBC_TUNABLES")),
      (["GLIBC_TUNABLES": "glibc.malloc.arena_max=2"], true, true, .set(bytes: 1 << 20)),
      (["GLIBC_TUNABLES": "glibc.rtld.nns=4"], true, true, .set(bytes: 1 << 20)),
      (["MALLOC_TRIM_THRESHOLD_": "1"], false, true, .optedOut),
    ]
    for row in rows {
      #expect(
        HeapReleaseThreshold.decide(
          environment: row.environment, enabled: row.enabled, available: row.available)
          == row.expected, "\(row)")
    }
  }

  #if canImport(Glibc)
    /// In a child process (the setting is the process's): after a fetch on the URLSession engine,
    /// 24 MiB freed at the end of a thread arena go back to the system; opted out, or after a fetch
    /// on the libcurl engine only, glibc keeps them (its threshold raised to 32 MiB by a 16 MiB
    /// block, as FoundationNetworking's copy of a body raises it).
    /// AddressSanitizer and ThreadSanitizer replace malloc with allocators of their own, which keep
    /// (ASan: quarantine) or return memory by their own rules: the probe measures glibc's.
    static let glibcAllocates = ["__asan_init", "__tsan_init"].allSatisfy { (name: String) in
      dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) == nil
    }

    @Test(
      "freed memory at the end of a thread arena", .enabled(if: glibcAllocates),
      arguments: [
        (["urlSession"], [String: String](), "set(bytes: 1048576)", true),
        (["urlSession", "opt-out"], [:], "optedOut", false),
        (["libcurl"], [:], "none", false),
        // The process's own threshold, higher than the 24 MiB, is kept.
        (
          ["urlSession"], ["GLIBC_TUNABLES": "glibc.malloc.trim_threshold=67108864"],
          "keptEnvironment(\"GLIBC_TUNABLES\")", false
        ),
      ])
    func freedMemoryGoesBack(
      arguments: [String], environment: [String: String], outcome: String, returned: Bool
    )
      async throws
    {
      if arguments == ["libcurl"], let reason = FetcherEngine.libcurl.unavailableReason {
        Issue.record("libcurl engine unavailable: \(reason)")
        return
      }
      var childEnvironment = ProcessInfo.processInfo.environment
      for name in ["MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES"] {
        childEnvironment[name] = nil
      }
      childEnvironment.merge(environment) { $1 }
      let (exit, lines) = try await ChildProcess.runProbe(
        named: "timeout-probe", arguments: ["trim-threshold"] + arguments, environment: childEnvironment,
        timeout: 60)
      #expect(exit.exitCode == 0, "\(exit): \(lines.suffix(10))")
      let line = try #require(lines.last { $0.hasPrefix("trim-threshold ") }, "\(lines.suffix(10))")
      #expect(line.contains("outcome=\(outcome) "), "\(line)")
      let kept = try #require(line.split(separator: "=").last.flatMap { Int($0) }, "\(line)")
      if returned {
        #expect(kept < 8 << 20, "kept \(kept) bytes of 24 MiB")
      } else {
        #expect(kept > 16 << 20, "kept \(kept) bytes of 24 MiB")
      }
    }
  #endif
}
