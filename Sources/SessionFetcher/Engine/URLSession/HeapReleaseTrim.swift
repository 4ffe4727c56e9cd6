import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Gives glibc's free heap pages back to the system after the URLSession engine has moved large
/// bodies (`malloc_trim(0)`), at most once every ``HeapReleaseTrim/Schedule/interval``.
///
/// FoundationNetworking works on many dispatch threads, so glibc's malloc spreads its buffers over
/// up to eight arenas per core; and it copies every body sent from memory (a file body up to
/// `FileBodyInMemory.inMemoryLimit` included) into a buffer of the body's size, whose release
/// raises glibc's mmap threshold to that size. From then on the large buffers of uploads and
/// downloads come from the arenas, which keep what is freed. Nothing the library frees goes back
/// to the system by itself; a trim after large bodies end returns the free pages inside the arenas
/// (it cannot shrink the free space at the end of a thread arena's heap: only glibc's own
/// `free` does that).
///
/// The trim runs on a queue of its own, off every caller's and delegate thread, a short
/// ``HeapReleaseTrim/Schedule/delay`` after the body ended (FoundationNetworking drops its copy when it
/// releases the task). It holds each arena's lock in turn while it walks its free lists. Only with
/// glibc; elsewhere nothing is done.
package enum HeapReleaseTrim {
  /// A task that moved at least this many bytes (sent and received) asks for a trim when it ends.
  package static let largeBodyLength: Int64 = 1 << 20

  /// When to trim, given the requests: the pure part of ``HeapReleaseTrim``.
  package struct Schedule: Equatable, Sendable {
    /// The least time between two trims.
    package static let interval: TimeInterval = 5
    /// The time between a request and the trim it leads to.
    package static let delay: TimeInterval = 1

    /// When the last trim ran.
    package var lastTrim: TimeInterval?
    /// When the next trim runs, if one is due.
    package var next: TimeInterval?

    package init(lastTrim: TimeInterval? = nil, next: TimeInterval? = nil) {
      self.lastTrim = lastTrim
      self.next = next
    }

    /// A large body ended at `now`: when to run a new trim, or nil when one is already due (it
    /// covers this body too, since it runs later).
    package mutating func request(at now: TimeInterval) -> TimeInterval? {
      guard next == nil else { return nil }
      var at = now + Self.delay
      if let lastTrim { at = max(at, lastTrim + Self.interval) }
      next = at
      return at
    }

    /// The trim due ran at `now`.
    package mutating func trimmed(at now: TimeInterval) {
      lastTrim = now
      next = nil
    }
  }

  /// What the trims so far have cost.
  package struct Figures: Equatable, Sendable {
    /// Trims run.
    package var count = 0
    /// Their time, in seconds, all together and the longest.
    package var totalSeconds: Double = 0
    package var longestSeconds: Double = 0
  }

  private struct State {
    var schedule = Schedule()
    var figures = Figures()
  }

  private static let state = Locked(State())
  private static let queue = DispatchQueue(label: "SessionFetcher.arenaTrim", qos: .utility)

  private typealias TrimFunction = @convention(c) (Int) -> Int32

  /// glibc's `malloc_trim`, looked up at run time: the Glibc module does not declare it, and a C
  /// library without it (musl) has nothing to trim.
  private static let trimFunction: TrimFunction? = {
    #if canImport(Glibc)
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
      return unsafeBitCast(symbol, to: TrimFunction.self)
    #else
      return nil
    #endif
  }()

  /// Whether this platform's allocator can be trimmed (glibc).
  package static var isAvailable: Bool { trimFunction != nil }

  /// What the trims run so far have cost.
  package static var figures: Figures { state.withLock { $0.figures } }

  /// A task of the URLSession engine that moved `bytes` ended: returns whether it asked for a trim
  /// (it moved at least ``largeBodyLength`` bytes, and the allocator can be trimmed). A trim follows
  /// it, unless one was due already (that one runs later, so it covers this body too).
  @discardableResult
  package static func taskEnded(movingBytes bytes: Int64) -> Bool {
    guard isAvailable, bytes >= largeBodyLength else { return false }
    let now = ProcessInfo.processInfo.systemUptime
    guard let at = state.withLock({ $0.schedule.request(at: now) }) else { return true }
    queue.asyncAfter(deadline: .now() + max(0, at - now)) { trimNow() }
    return true
  }

  private static func trimNow() {
    let started = ProcessInfo.processInfo.systemUptime
    _ = trimFunction?(0)
    let ended = ProcessInfo.processInfo.systemUptime
    state.withLock {
      $0.schedule.trimmed(at: ended)
      $0.figures.count += 1
      $0.figures.totalSeconds += ended - started
      $0.figures.longestSeconds = max($0.figures.longestSeconds, ended - started)
    }
  }
}
