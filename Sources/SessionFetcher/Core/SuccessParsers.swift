import Foundation

/// The parse steps of fetches begun with parse-then-complete
/// (``SessionFetcher/beginFetch(parsing:completionHandler:)``), by fetcher, from begin until the
/// completion is delivered.
///
/// Kept beside the fetcher's storage rather than in it so that the core's state stays about
/// fetching; a fetcher is retained while it runs, so its identifier is not reused before its
/// entry is removed.
enum SuccessParsers {
  typealias Parser = @Sendable (Data?) -> Void

  private static let parsers = Locked<[ObjectIdentifier: Parser]>([:])

  static func register(_ parser: @escaping Parser, for fetcher: SessionFetcher) {
    parsers.withLock { $0[ObjectIdentifier(fetcher)] = parser }
  }

  /// Removes and returns the fetcher's parser, if it has one.
  @discardableResult
  static func take(for fetcher: SessionFetcher) -> Parser? {
    parsers.withLock { $0.removeValue(forKey: ObjectIdentifier(fetcher)) }
  }
}
