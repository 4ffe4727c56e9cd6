import Foundation

/// When a fetch ran and how much it moved, measured by the fetcher itself (URLSession's metrics
/// never arrive on Linux).
public struct FetchTiming: Sendable, Equatable, CustomStringConvertible {
  /// When the fetch began (``SessionFetcher/beginFetch(completionHandler:)`` was called).
  public var startDate: Date?
  /// When the engine started the request of the fetch's latest exchange (an attempt's request or a
  /// redirect's). On the libcurl engine that is when the fetcher handed it over; on the URLSession
  /// engine, when FoundationNetworking's task was made and resumed, which waits behind the work of
  /// every URLSession of the process on FoundationNetworking's shared work queue (see
  /// <doc:LinuxNotes>). The idle timeout of ``SessionFetcher/request``'s `timeoutInterval` counts
  /// from here, or from the exchange's latest activity after it.
  public var requestStartDate: Date?
  /// When the first response head of the fetch arrived.
  public var firstResponseDate: Date?
  /// When the first body byte of the fetch arrived.
  public var firstByteDate: Date?
  /// When the fetch ended (finished or stopped).
  public var endDate: Date?
  /// Attempts after the first.
  public var retryCount = 0
  /// Redirects followed, over all attempts.
  public var redirectCount = 0
  /// Request body bytes sent, over all attempts.
  public var bytesSent: Int64 = 0
  /// Response body bytes received, over all attempts and redirects.
  public var bytesReceived: Int64 = 0
  /// The phases of the fetch's last exchange (DNS, connect, TLS, first byte, total, bytes, whether
  /// the connection was reused, the HTTP version), as its engine measured them: filled on the
  /// libcurl engine and on Apple platforms' URLSession, nil on the URLSession engine on Linux
  /// (whose metrics never arrive).
  public var transferMetrics: TransferMetrics?

  /// Creates an empty timing record.
  public init() {}

  /// Seconds from start to end, or nil while the fetch runs.
  public var duration: TimeInterval? {
    guard let startDate, let endDate else { return nil }
    return endDate.timeIntervalSince(startDate)
  }

  /// Seconds from start to the first response head.
  public var timeToFirstResponse: TimeInterval? {
    guard let startDate, let firstResponseDate else { return nil }
    return firstResponseDate.timeIntervalSince(startDate)
  }

  /// Seconds from start to the first response body byte.
  public var timeToFirstByte: TimeInterval? {
    guard let startDate, let firstByteDate else { return nil }
    return firstByteDate.timeIntervalSince(startDate)
  }

  /// One line for a log, for example `duration 0.120s, first response 0.080s, first byte 0.081s,
  /// retries 0, redirects 0, sent 0 B, received 2000 B`.
  public var description: String {
    let total = duration.map { String(format: "%.3fs", $0) } ?? "running"
    let head = timeToFirstResponse.map { String(format: "%.3fs", $0) } ?? "-"
    let firstByte = timeToFirstByte.map { String(format: "%.3fs", $0) } ?? "-"
    return
      "duration \(total), first response \(head), first byte \(firstByte), retries \(retryCount), "
      + "redirects \(redirectCount), sent \(bytesSent) B, received \(bytesReceived) B"
  }
}
