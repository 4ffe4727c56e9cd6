import Foundation
import SessionFetcher

extension SessionFetcher {
  /// The property key under which a command fetcher keeps its upload.
  static let parentUploadFetcherKey = "SessionUploadFetcher.parent"

  /// The upload this fetcher sends a command of (`start`, a chunk, `query`, `cancel`), when a
  /// ``SessionUploadFetcher`` made it; nil for any other fetcher. Held weakly: nil as well once
  /// the upload is gone.
  ///
  /// Notification observers and event monitors see every command fetcher; this tells them which
  /// upload one belongs to:
  ///
  /// ```swift
  /// NotificationCenter.default.addObserver(forName: .sessionFetcherStarted, object: nil, queue: nil) {
  ///   if ($0.object as? SessionFetcher)?.parentUploadFetcher === upload { started += 1 }
  /// }
  /// ```
  public var parentUploadFetcher: SessionUploadFetcher? {
    (property(forKey: Self.parentUploadFetcherKey) as? WeakUploadFetcher)?.fetcher
  }

  func setParentUploadFetcher(_ upload: SessionUploadFetcher) {
    setProperty(WeakUploadFetcher(upload), forKey: Self.parentUploadFetcherKey)
  }
}

/// A weak reference to an upload, kept in a command fetcher's properties: the upload holds its
/// command fetcher while it runs, so a strong one would be a cycle.
final class WeakUploadFetcher: Sendable {
  weak let fetcher: SessionUploadFetcher?

  init(_ fetcher: SessionUploadFetcher) {
    self.fetcher = fetcher
  }
}
