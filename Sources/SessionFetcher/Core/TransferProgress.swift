import Foundation

/// How far a fetch's request body or response body has come: one value of
/// ``SessionFetcher/progressUpdates``.
///
/// ```swift
/// for await progress in fetcher.progressUpdates {
///   print(progress.direction, progress.completedBytes, progress.expectedBytes ?? -1)
/// }
/// ```
public struct TransferProgress: Sendable, Equatable, CustomStringConvertible {
  /// Which body the progress is about.
  public enum Direction: Sendable, Equatable {
    /// The request body, being sent.
    case upload
    /// The response body, being received (in memory, to ``SessionFetcher/destinationFileURL`` or
    /// to ``SessionFetcher/accumulateDataBlock``).
    case download
  }

  /// Which body moved.
  public var direction: Direction
  /// Bytes of that body moved so far in the current attempt (a retry or a new response starts
  /// again from 0).
  public var completedBytes: Int64
  /// The body's expected length, or nil when unknown (a chunked response without a length, a
  /// stream body without ``SessionFetcher/bodyLength``).
  public var expectedBytes: Int64?

  /// Creates a progress value.
  public init(direction: Direction, completedBytes: Int64, expectedBytes: Int64?) {
    self.direction = direction
    self.completedBytes = completedBytes
    self.expectedBytes = expectedBytes
  }

  /// `completedBytes / expectedBytes`, between 0 and 1, or nil when the length is unknown.
  public var fractionCompleted: Double? {
    guard let expectedBytes, expectedBytes > 0 else { return nil }
    return min(1, Double(completedBytes) / Double(expectedBytes))
  }

  /// For example `download 2000 of 5000 bytes`.
  public var description: String {
    "\(direction == .upload ? "upload" : "download") \(completedBytes) of "
      + (expectedBytes.map { "\($0) bytes" } ?? "unknown bytes")
  }
}

extension SessionFetcher {
  /// The fetch's progress as an `AsyncSequence`, for code that prefers it to
  /// ``sendProgressBlock``, ``receivedProgressBlock`` and ``downloadProgressBlock`` (which keep
  /// working beside it).
  ///
  /// Each access makes a new stream, which sees the progress reported from then on: take it before
  /// beginning the fetch. The stream finishes when the fetch ends (succeeds, fails or is stopped),
  /// and at once when it has already ended. It keeps only the newest value: a consumer slower than
  /// the transfer skips values and never holds the transfer up, and after the last value it sees
  /// the end.
  ///
  /// ```swift
  /// import SessionFetcher
  ///
  /// func save(_ url: URL, to file: URL) async throws -> URL {
  ///   let fetcher = SessionFetcher.fetcher(url: url)
  ///   let updates = fetcher.progressUpdates
  ///   let watcher = Task {
  ///     for await progress in updates {
  ///       print("\(progress.completedBytes) of \(progress.expectedBytes ?? -1) bytes")
  ///     }
  ///   }
  ///   defer { watcher.cancel() }
  ///   return try await fetcher.download(to: file)
  /// }
  /// ```
  public var progressUpdates: AsyncStream<TransferProgress> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: TransferProgress.self, bufferingPolicy: .bufferingNewest(1))
    let ended = storage.withLock { storage -> Bool in
      switch storage.lifecycle.phase {
      case .finished, .stopped:
        return true
      case .idle, .preparing, .waitingForSlot, .running, .waitingToRetry:
        storage.config.progressContinuations.append(continuation)
        return false
      }
    }
    if ended { continuation.finish() }
    return stream
  }
}

extension TransferProgress {
  /// Hands this progress to every ``SessionFetcher/progressUpdates`` stream in `continuations`
  /// (never blocks: each keeps only the newest value). The storage's mutating methods call it with
  /// their configuration's streams: a method of the storage (or of its configuration) called from
  /// them is handed a copy of the whole storage (or configuration).
  func publish(to continuations: [AsyncStream<TransferProgress>.Continuation]) {
    for continuation in continuations { continuation.yield(self) }
  }
}

extension FetcherStorage {
  /// Takes the progress streams of a fetch that ended, for the caller to finish after the lock.
  mutating func takeProgressContinuations() -> [AsyncStream<TransferProgress>.Continuation] {
    let continuations = config.progressContinuations
    if !continuations.isEmpty { config.progressContinuations = [] }
    return continuations
  }
}
