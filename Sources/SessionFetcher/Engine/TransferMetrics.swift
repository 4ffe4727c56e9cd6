import Foundation

/// What an engine measured of one exchange (one request and its response): the phases of the
/// connection and the transfer, as libcurl reports them.
///
/// In ``FetchTiming/transferMetrics``: available on the libcurl engine, and on the URLSession
/// engine on Apple platforms (from `URLSessionTaskMetrics`); nil on the URLSession engine on Linux,
/// where FoundationNetworking never delivers metrics. ``SessionFetcher/metricsCollectionBlock``
/// gets one for every exchange on both engines (on the URLSession engine on Linux, only what the
/// fetcher measures itself; the rest nil). Each phase is in seconds from the start of the exchange and includes the phases before
/// it, so `connect - nameLookup` is the TCP connect alone. A phase the exchange did not go through
/// (DNS for an IP address, TLS for plain http, any of them on a reused connection) is nil.
public struct TransferMetrics: Sendable, Equatable, CustomStringConvertible {
  /// The host name was resolved.
  public var nameLookup: TimeInterval?
  /// The TCP connection (or the proxy's) was established.
  public var connect: TimeInterval?
  /// The TLS handshake ended (https only).
  public var secureConnection: TimeInterval?
  /// The request was about to be sent.
  public var requestStart: TimeInterval?
  /// The first byte of the response arrived.
  public var firstByte: TimeInterval?
  /// The exchange ended.
  public var total: TimeInterval
  /// Whether the exchange used a connection kept from an earlier one.
  public var isReusedConnection: Bool
  /// The protocol of the response: `"HTTP/1.0"`, `"HTTP/1.1"`, `"HTTP/2"`, or nil if none arrived.
  public var httpVersion: String?
  /// The address and port connected to (the proxy's, through a proxy).
  public var remoteAddress: String?
  /// The port connected to.
  public var remotePort: Int?
  /// Bytes of the request (head and body) written to the connection.
  public var requestBytes: Int64
  /// Bytes of the response (head and body, as received before decoding).
  public var responseBytes: Int64

  /// Creates a record; all phases nil, nothing moved.
  public init(
    nameLookup: TimeInterval? = nil, connect: TimeInterval? = nil, secureConnection: TimeInterval? = nil,
    requestStart: TimeInterval? = nil, firstByte: TimeInterval? = nil, total: TimeInterval = 0,
    isReusedConnection: Bool = false, httpVersion: String? = nil, remoteAddress: String? = nil,
    remotePort: Int? = nil, requestBytes: Int64 = 0, responseBytes: Int64 = 0
  ) {
    self.nameLookup = nameLookup
    self.connect = connect
    self.secureConnection = secureConnection
    self.requestStart = requestStart
    self.firstByte = firstByte
    self.total = total
    self.isReusedConnection = isReusedConnection
    self.httpVersion = httpVersion
    self.remoteAddress = remoteAddress
    self.remotePort = remotePort
    self.requestBytes = requestBytes
    self.responseBytes = responseBytes
  }

  /// One line for a log, for example `HTTP/1.1 new connection, dns 0.1ms, connect 0.3ms, first
  /// byte 1.2ms, total 1.4ms`.
  public var description: String {
    func ms(_ value: TimeInterval?) -> String {
      value.map { String(format: "%.1fms", $0 * 1000) } ?? "-"
    }
    let connection = isReusedConnection ? "reused connection" : "new connection"
    return "\(httpVersion ?? "no response") \(connection), dns \(ms(nameLookup)), connect \(ms(connect)), "
      + "tls \(ms(secureConnection)), first byte \(ms(firstByte)), total \(ms(total))"
  }
}
