import Foundation
import SessionFetcher

/// An event monitor that stops its fetcher once the download (bytes resumed from a part file
/// included) reaches a length: for tests of resumable downloads that interrupt a transfer at a
/// chosen byte.
///
/// It runs on the delivery path itself, so the stop always comes before the body ends; a progress
/// block, which runs later on the callback queue, could run after the completion.
///
/// ```swift
/// let fetcher = server.fetcher("/bytes/1000000")
/// fetcher.destinationFileURL = destination
/// fetcher.keepsPartialDownloadForResume = true
/// fetcher.eventMonitors = [StopAtLengthMonitor(400_000)]
/// fetcher.beginFetch { _, _ in }
/// // Later: SessionFetcher(resumeData: fetcher.downloadResumeData!) continues from the kept bytes.
/// ```
public final class StopAtLengthMonitor: FetcherEventMonitor, @unchecked Sendable {
  // `@unchecked Sendable`: `length` is immutable and `stopFetching()` is thread-safe.
  /// The downloaded length at which the fetcher is stopped.
  public let length: Int64

  /// A monitor that stops its fetcher once its `downloadedLength` reaches `length`.
  public init(_ length: Int64) { self.length = length }

  /// Stops `fetcher` once its downloaded length reaches ``length``.
  public func fetcher(_ fetcher: SessionFetcher, didReceiveData data: Data) {
    if fetcher.downloadedLength >= length { fetcher.stopFetching() }
  }
}
