import FetcherTesting
import Testing

/// Runs each test of a suite (or one test) on threads of its own, not the cooperative pool's: for
/// tests that block a thread (semaphores, `concurrentPerform`, synchronous engine waits), which
/// would otherwise stall every other test of the run on a two-core machine.
public struct OwnThreadsTrait: SuiteTrait, TestTrait, TestScoping {
  public var isRecursive: Bool { true }

  public func provideScope(
    for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
  ) async throws {
    try await withOwnThreads { try await function() }
  }
}

extension Trait where Self == OwnThreadsTrait {
  /// Runs the test, or each test of the suite, on threads of its own (``withOwnThreads(_:)``).
  public static var ownThreads: Self { OwnThreadsTrait() }
}
