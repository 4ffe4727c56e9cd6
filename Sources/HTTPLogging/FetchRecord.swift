import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A logged body: at most the body size cap of its bytes, and what the whole was.
struct LoggedBody: Sendable, Equatable {
  /// The first `cap` bytes of `data`, marked truncated when longer.
  static func capped(_ data: Data, cap: Int) -> LoggedBody {
    LoggedBody(
      source: .data, data: data.prefix(cap), totalLength: Int64(data.count), isTruncated: data.count > cap)
  }

  enum Source: Sendable, Equatable {
    /// The bytes (possibly capped) are in ``LoggedBody/data``.
    case data
    /// Sent from a file; only its path and size are logged.
    case file(path: String)
    /// Sent from a stream; only its size (if known) is logged.
    case stream
    /// Written to a file or handed to an accumulate block by the fetcher; logged by size.
    case delivered(path: String?)
  }

  var source: Source = .data
  /// The bytes kept, at most the cap.
  var data = Data()
  /// The length of the whole body, when known.
  var totalLength: Int64?

  /// Whether bytes were dropped at the cap (set when the bytes are kept: redaction may change
  /// the length of ``data`` later).
  var isTruncated = false

  var length: Int64 { totalLength ?? Int64(data.count) }

  var isEmpty: Bool { source == .data && length == 0 }
}

/// A header list in order (names as sent, duplicates allowed).
typealias HeaderList = [(name: String, value: String)]

/// One request on the wire and what came back: an attempt or a redirect hop.
struct LoggedExchange: Sendable {
  enum Kind: Sendable, Equatable {
    case first
    case redirect
    case retry(number: Int)
    /// The next Range window of the same body (a download or a stream in windows, on Linux).
    case continuation
  }

  var kind: Kind
  var method: String
  var url: String
  var requestHeaders: HeaderList
  var requestBody: LoggedBody?
  var sentDate: Date
  /// When the request body's last bytes so far went out (nil: no body, or the engine did not say):
  /// the end of the sending phase.
  var bodySentDate: Date?
  var responseDate: Date?
  var endDate: Date?
  var statusCode: Int?
  var responseURL: String?
  var responseHeaders: HeaderList = []
  var responseBody = LoggedBody()
  /// Why this exchange ended without being the final result (retry error), or the fetch's error.
  var errorText: String?
  /// The delay before the next attempt, when this exchange was retried.
  var retryDelay: TimeInterval?
  /// Where the redirect went, when this exchange was redirected.
  var redirectedTo: String?
  /// The phases the engine measured (the libcurl engine), once the exchange ended.
  var metrics: TransferMetrics?

  func header(_ name: String, in list: HeaderList) -> String? {
    list.first { $0.name.equalsIgnoringASCIICase(name) }?.value
  }

  var responseContentType: String? { header("Content-Type", in: responseHeaders) }
  var requestContentType: String? { header("Content-Type", in: requestHeaders) }
}

/// Everything logged about one fetch, gathered from monitor events.
struct FetchRecord: Sendable {
  var comment: String?
  var startDate: Date
  var endDate: Date
  /// The request as configured (for fetches that failed before any exchange).
  var method: String
  var url: String
  var exchanges: [LoggedExchange] = []
  /// When a fetch that waited for a slot of its service's per-host throttle got one.
  var throttleEndDate: Date?
  var errorText: String?
  var isCancelled = false
  /// The status the caller got (`fetcher.statusCode` at the end), which for a download in Range
  /// windows is not the last window's `206`; nil when no response came.
  var callerStatus: Int?

  var elapsed: TimeInterval { endDate.timeIntervalSince(startDate) }
  var finalStatus: Int? { exchanges.last?.statusCode }
  var retryCount: Int {
    exchanges.filter { if case .retry = $0.kind { return true } else { return false } }.count
  }
  var redirectCount: Int { exchanges.filter { $0.kind == .redirect }.count }
}

extension HTTPURLResponse {
  /// The response headers in a stable order.
  var loggedHeaders: HeaderList {
    var list: HeaderList = []
    for (key, value) in allHeaderFields {
      guard let name = key as? String else { continue }
      list.append((name, value as? String ?? String(describing: value)))
    }
    return list.sortedByLowercasedName()
  }
}

extension URLRequest {
  var loggedHeaders: HeaderList {
    (allHTTPHeaderFields ?? [:]).map { ($0.key, $0.value) }.sortedByLowercasedName()
  }
}

extension Array where Element == (name: String, value: String) {
  /// Sorted by lowercased name, each name lowercased once (not twice per comparison).
  func sortedByLowercasedName() -> HeaderList {
    map { (key: $0.name.lowercased(), header: $0) }.sorted { $0.key < $1.key }.map(\.header)
  }
}
