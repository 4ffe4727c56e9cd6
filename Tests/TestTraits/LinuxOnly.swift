import Testing

/// Whether the tests run on Linux, where the child-process probes (glibc's `posix_spawn` and
/// signal layout), `/proc` and network namespaces exist.
public let isLinux: Bool = {
  #if os(Linux)
    return true
  #else
    return false
  #endif
}()

extension Trait where Self == ConditionTrait {
  /// Runs the test, or the suite, only on Linux; elsewhere it is reported as skipped with `reason`
  /// (what it needs that only Linux has), never left out silently. The test's body keeps its Linux
  /// API inside `#if os(Linux)` so that it compiles on Apple platforms too.
  public static func linuxOnly(_ reason: Comment) -> Self {
    .enabled(if: isLinux, reason)
  }
}

/// Whether the tests run on macOS, whose defaults (the logging folder) differ from other systems'.
public let isMacOS: Bool = {
  #if os(macOS)
    return true
  #else
    return false
  #endif
}()

/// Thrown where a test helper needs what only Linux has; the message says what.
public struct LinuxOnly: Error, CustomStringConvertible {
  public var needs: String

  public init(needs: String) { self.needs = needs }

  public var description: String { "needs Linux: \(needs)" }
}
