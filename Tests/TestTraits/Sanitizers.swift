import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Whether the process runs under ThreadSanitizer (its runtime is linked in and exports
/// `__tsan_init`).
public let isUnderThreadSanitizer: Bool = {
  #if canImport(Glibc)
    return dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil
  #elseif canImport(Darwin)
    return dlsym(UnsafeMutableRawPointer(bitPattern: -2), "__tsan_init") != nil
  #else
    return false
  #endif
}()

extension Trait where Self == ConditionTrait {
  /// Skips the test under ThreadSanitizer, saying so, for long single-threaded work on plain
  /// values (parsers, searches) in which it has no threads to watch and runs 5–10× slower. The
  /// other runs, AddressSanitizer's included, still run it.
  public static var singleThreadedSkippedUnderThreadSanitizer: Self {
    .enabled(
      if: !isUnderThreadSanitizer,
      "single-threaded work on plain values: ThreadSanitizer has nothing to watch in it")
  }
}
