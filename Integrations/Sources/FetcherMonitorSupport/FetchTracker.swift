import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What kind of request a `willSendRequest` event is.
package enum SendKind: Sendable, Equatable {
  /// The first request of an attempt (the first attempt, or a retry).
  case attempt
  /// A redirect hop of the current attempt.
  case redirect
  /// The next Range window of the current attempt's body.
  case continuation
}

/// Per-fetch bookkeeping shared by the monitors: a process-unique fetch id, the attempt number and
/// what each request event is, keyed by the fetcher's identity while the fetch runs.
package final class FetchTracker<Extra: Sendable>: @unchecked Sendable {
  /// One running fetch.
  package struct Entry: Sendable {
    /// A process-unique id (`1`, `2`, …) for correlating one fetch's events.
    package var id: UInt64
    /// The attempt in progress (1 for the first).
    package var attempt = 1
    /// When the fetch began.
    package var start = ContinuousClock.now
    /// Whether a retry delay was announced and its request not yet sent.
    package var retryPending = false
    /// Whether a redirect was announced and its request not yet sent.
    package var redirectPending = false
    /// Whether at least one request was sent.
    package var sentAny = false
    /// What the monitor keeps per fetch.
    package var extra: Extra
  }

  private let lock = NSLock()
  private var entries: [ObjectIdentifier: Entry] = [:]
  private static var nextID: UInt64 { FetchIDs.next() }

  /// Creates an empty tracker.
  package init() {}

  /// Starts tracking `fetcher` and returns its entry.
  @discardableResult
  package func begin(_ fetcher: SessionFetcher, extra: Extra) -> Entry {
    let entry = Entry(id: Self.nextID, extra: extra)
    lock.lock()
    entries[ObjectIdentifier(fetcher)] = entry
    lock.unlock()
    return entry
  }

  /// The entry of `fetcher`, if it is tracked.
  package func entry(_ fetcher: SessionFetcher) -> Entry? {
    lock.lock()
    defer { lock.unlock() }
    return entries[ObjectIdentifier(fetcher)]
  }

  /// Changes the entry of `fetcher` (nil when it is not tracked).
  @discardableResult
  package func update<T>(_ fetcher: SessionFetcher, _ body: (inout Entry) -> T) -> T? {
    lock.lock()
    defer { lock.unlock() }
    guard var entry = entries[ObjectIdentifier(fetcher)] else { return nil }
    let result = body(&entry)
    entries[ObjectIdentifier(fetcher)] = entry
    return result
  }

  /// Classifies a request about to be sent and advances the attempt number for a retry.
  package func willSend(_ fetcher: SessionFetcher) -> (entry: Entry, kind: SendKind)? {
    update(fetcher) { entry -> (Entry, SendKind) in
      let kind: SendKind
      if entry.retryPending {
        entry.attempt += 1
        kind = .attempt
      } else if entry.redirectPending {
        kind = .redirect
      } else if entry.sentAny {
        kind = .continuation
      } else {
        kind = .attempt
      }
      entry.retryPending = false
      entry.redirectPending = false
      entry.sentAny = true
      return (entry, kind)
    }
  }

  /// Stops tracking `fetcher` and returns its entry.
  package func end(_ fetcher: SessionFetcher) -> Entry? {
    lock.lock()
    defer { lock.unlock() }
    return entries.removeValue(forKey: ObjectIdentifier(fetcher))
  }

  /// How many fetches are tracked.
  package var count: Int {
    lock.lock()
    defer { lock.unlock() }
    return entries.count
  }
}

/// The process-wide fetch id counter: ids are unique in the process; each monitor gives a fetch its
/// own, for correlating that monitor's events of one fetch.
private enum FetchIDs {
  private static let lock = NSLock()
  nonisolated(unsafe) private static var last: UInt64 = 0

  static func next() -> UInt64 {
    lock.lock()
    defer { lock.unlock() }
    last += 1
    return last
  }
}
