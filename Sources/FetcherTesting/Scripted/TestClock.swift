import Foundation
import SessionFetcher

/// Virtual time for the waits of an `EventSource`: a wait takes no real time, it advances
/// ``now`` and is recorded in ``waits``, so a test reads the delays the stream chose instead of
/// sleeping through them.
///
/// ```swift
/// let clock = TestClock()
/// let source = SessionFetcher.eventSource(url: engine.url("/feed")) { request in
///   let fetcher = SessionFetcher(request: request)
///   fetcher.run(on: engine)
///   return fetcher
/// }.run(on: clock)
/// for try await _ in source {}
/// #expect(clock.waits == [3, 6, 12, 24, 30])
/// ```
///
/// A wait in a cancelled task throws `CancellationError`, as `Task.sleep` does.
/// Thread safety: every member may be called from any thread.
public final class TestClock: Sendable {
  private struct State {
    var now: TimeInterval = 0
    var waits: [TimeInterval] = []
  }

  private let state = LockedState(State())

  /// A clock at time 0 that has waited for nothing.
  public init() {}

  /// The virtual seconds passed: the sum of the waits.
  public var now: TimeInterval { state.withLock { $0.now } }

  /// Every wait, in seconds, in the order asked for.
  public var waits: [TimeInterval] { state.withLock { $0.waits } }

  /// Waits `seconds` of virtual time: records it and returns at once.
  public func sleep(_ seconds: TimeInterval) async throws {
    try Task.checkCancellation()
    state.withLock { state in
      state.waits.append(seconds)
      state.now += seconds
    }
    // Lets other tasks run, as a real wait would.
    await Task.yield()
  }
}

extension EventSource {
  /// This event source, waiting on `clock` before each reconnection instead of in real time.
  public func run(on clock: TestClock) -> EventSource {
    waiting { try await clock.sleep($0) }
  }
}
