import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The facts about a request that logs, metrics and spans describe it by, read synchronously from
/// the event (cheap: no I/O, no redaction; that happens later, off the fetch's queue).
package struct RequestFacts: Sendable {
  /// `GET`, `POST`, …
  package var method: String
  /// The absolute URL, unredacted.
  package var url: String?
  /// The host (`server.address`).
  package var host: String?
  /// The port, explicit or the scheme's default.
  package var port: Int?
  /// The header fields, unredacted.
  package var headers: [String: String]

  /// The facts of `request`.
  package init(_ request: URLRequest?) {
    method = (request?.httpMethod ?? "GET").uppercased()
    url = request?.url?.absoluteString
    host = request?.url?.host
    let scheme = request?.url?.scheme?.lowercased()
    port = request?.url?.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
    headers = request?.allHTTPHeaderFields ?? [:]
  }
}

/// How a fetch ended, as the monitors report it.
package struct Outcome: Sendable {
  /// The final HTTP status (0 without a response).
  package var statusCode: Int
  /// `2xx`, `3xx`, `4xx`, `5xx`, or `error` when no response came.
  package var statusClass: String
  /// The error's kind for `error.type` (nil on success): the status code for an HTTP error, the
  /// `URLError` code's name, `cancelled`, or the error's type name.
  package var errorType: String?
  /// The error's description (nil on success), unredacted.
  package var errorDescription: String?
  /// The response's `Content-Type`.
  package var contentType: String?
  /// Body bytes sent and received over all attempts.
  package var bytesSent: Int64
  /// Body bytes received.
  package var bytesReceived: Int64
  /// Retries done.
  package var retryCount: Int
  /// Redirects followed.
  package var redirectCount: Int

  /// Reads the outcome of `fetcher`, which ended with `error`.
  package init(fetcher: SessionFetcher, error: (any Error)?) {
    let response = fetcher.response as? HTTPURLResponse
    statusCode = response?.statusCode ?? 0
    statusClass = Outcome.statusClass(statusCode)
    contentType = response?.value(forHTTPHeaderField: "Content-Type")
    let timing = fetcher.timing
    bytesSent = timing.bytesSent
    bytesReceived = timing.bytesReceived
    retryCount = timing.retryCount
    redirectCount = timing.redirectCount
    errorType = error.map(Outcome.errorType)
    errorDescription = error.map { String(describing: $0) }
  }

  /// `2xx` … `5xx` for a status, `error` for 0 (no response).
  package static func statusClass(_ status: Int) -> String {
    (100...599).contains(status) ? "\(status / 100)xx" : "error"
  }

  /// A short, low-cardinality name of `error`.
  package static func errorType(_ error: any Error) -> String {
    if let fetcherError = error as? SessionFetcherError {
      if let status = fetcherError.statusCode { return String(status) }
      if case .cancelled = fetcherError { return "cancelled" }
      // The case name: a case with a payload is a labelled child of its mirror.
      return Mirror(reflecting: fetcherError).children.first?.label ?? "SessionFetcherError"
    }
    if let urlError = error as? URLError { return "URLError.\(urlError.code.rawValue)" }
    if error is CancellationError { return "cancelled" }
    return String(describing: type(of: error))
  }
}
