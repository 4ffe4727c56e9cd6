import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Keeps glibc from holding freed memory at the end of its thread arenas: when the URLSession engine
/// makes its first URLSession, sets `M_TRIM_THRESHOLD` to ``bytes`` (1 MiB) with `mallopt`.
///
/// FoundationNetworking allocates on many dispatch threads, so glibc spreads its buffers over up to
/// eight arenas per core. When a thread arena's free space lies at the end of its heap (its "top"),
/// only `free` can give it back, and only past the trim threshold; `malloc_trim` does not touch it
/// (see ``HeapReleaseTrim``). glibc raises that threshold to twice the largest block it served by `mmap`
/// and freed since (up to 64 MiB): FoundationNetworking's copy of every body sent from memory is
/// such a block. After a 16 MiB upload each arena may keep twice that at its top for good (the
/// network soak's figures, with and without the threshold, are in `Soak/README.md`).
///
/// The setting is the process's: glibc then also stops raising its mmap threshold and keeps it where
/// it is (128 KiB unless a large mapped block was freed before), so blocks at least that large are
/// mapped and unmapped each time, as glibc did before 2.6. glibc documents `mallopt` as unsafe
/// beside other threads' allocations: a `free` of a mapped block at the same instant can raise the
/// thresholds again, and the freed memory is then kept as before. So it is made only
/// once, only on glibc, only when the URLSession engine is used, never when the process's
/// environment already sets one of glibc's malloc thresholds (`MALLOC_TRIM_THRESHOLD_`,
/// `MALLOC_MMAP_THRESHOLD_`, `MALLOC_TOP_PAD_`, or the same three in `GLIBC_TUNABLES`), and not
/// when ``SessionFetcher/setsMallocTrimThreshold`` is false.
package enum HeapReleaseThreshold {
  /// The trim threshold set: free space past this at the end of an arena's heap goes back to the
  /// system when a block next to it is freed.
  package static let bytes = 1 << 20

  /// What happened, or would happen, at the URLSession engine's first URLSession.
  package enum Decision: Equatable, Sendable {
    /// `mallopt(M_TRIM_THRESHOLD, bytes)`.
    case set(bytes: Int)
    /// The environment sets glibc's malloc thresholds itself (this variable).
    case keptEnvironment(String)
    /// ``SessionFetcher/setsMallocTrimThreshold`` is false.
    case optedOut
    /// Not glibc (no `mallopt`).
    case unavailable
  }

  /// The decision for a process with `environment`, the switch `enabled` and `mallopt` `available`.
  package static func decide(environment: [String: String], enabled: Bool, available: Bool) -> Decision {
    guard available else { return .unavailable }
    guard enabled else { return .optedOut }
    for name in ["MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_"]
    where environment[name] != nil {
      return .keptEnvironment(name)
    }
    let thresholds = [
      "glibc.malloc.trim_threshold=", "glibc.malloc.mmap_threshold=", "glibc.malloc.top_pad=",
    ]
    if let tunables = environment["GLIBC_TUNABLES"],
      tunables.split(separator: ":").contains(where: { tunable in
        thresholds.contains { tunable.hasPrefix($0) }
      })
    {
      return .keptEnvironment("GLIBC_TUNABLES")
    }
    return .set(bytes: bytes)
  }

  private struct State {
    var enabled = true
    var outcome: Decision?
  }

  private static let state = Locked(State())

  /// ``SessionFetcher/setsMallocTrimThreshold``.
  package static var isEnabled: Bool {
    get { state.withLock { $0.enabled } }
    set { state.withLock { $0.enabled = newValue } }
  }

  /// What the URLSession engine's first URLSession did; nil before it.
  package static var outcome: Decision? { state.withLock { $0.outcome } }

  private typealias MalloptFunction = @convention(c) (Int32, Int32) -> Int32

  /// glibc's `mallopt`, looked up at run time: the Glibc module does not declare it.
  private static let mallopt: MalloptFunction? = {
    #if canImport(Glibc)
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt"),
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") != nil  // glibc, not musl
      else { return nil }
      return unsafeBitCast(symbol, to: MalloptFunction.self)
    #else
      return nil
    #endif
  }()

  /// glibc's `M_TRIM_THRESHOLD`.
  private static let trimThresholdParameter: Int32 = -1

  /// Decides once per process and applies the decision; later calls do nothing.
  package static func applyOnce() {
    state.withLock { state in
      guard state.outcome == nil else { return }
      let decision = decide(
        environment: ProcessInfo.processInfo.environment, enabled: state.enabled, available: mallopt != nil)
      if case .set(let bytes) = decision {
        _ = mallopt?(trimThresholdParameter, Int32(bytes))
      }
      state.outcome = decision
    }
  }
}

extension SessionFetcher {
  /// Whether the URLSession engine sets glibc's trim threshold to 1 MiB when it makes its first
  /// URLSession (Linux with glibc only). Default true. Set it to false before the first fetch to
  /// leave the process's allocator as it is; once the setting is made, changing this property does
  /// not undo it. An app that tunes glibc's malloc with `mallopt` itself should set it to false.
  ///
  /// Without it, a process that moves large bodies on the URLSession engine keeps hundreds of
  /// megabytes it has freed: FoundationNetworking allocates on many threads, and glibc keeps each
  /// thread arena's free space at the end of its heap up to a threshold that grows to 64 MiB.
  /// With it, the repository's network soak ends with about what the libcurl engine keeps (see
  /// "Memory" in the Linux notes). glibc then stops raising its mmap threshold (128 KiB unless a
  /// larger mapped block was freed before), so blocks at least that large are mapped from the
  /// system each time rather than kept, as before glibc 2.6.
  ///
  /// Nothing is set when the process's environment sets one of glibc's malloc thresholds itself
  /// (`MALLOC_TRIM_THRESHOLD_`, `MALLOC_MMAP_THRESHOLD_`, `MALLOC_TOP_PAD_`, or
  /// `glibc.malloc.trim_threshold`, `mmap_threshold` or `top_pad` in `GLIBC_TUNABLES`), and never
  /// on the libcurl engine, which does not need it. See "Memory" in the Linux notes.
  public static var setsMallocTrimThreshold: Bool {
    get { HeapReleaseThreshold.isEnabled }
    set { HeapReleaseThreshold.isEnabled = newValue }
  }
}
