import Foundation

/// What one `URLSessionTaskTransactionMetrics` says of a request, as plain values: what
/// ``TransferMetrics/init(urlSessionTransactions:taskInterval:)`` maps. Read from the metrics
/// Apple's URLSession collects for each task (FoundationNetworking collects none), and written by
/// hand in tests, on any platform.
package struct URLSessionTransaction: Sendable, Equatable {
  /// When the request began (its `fetchStartDate`).
  package var fetchStart: Date?
  /// When the host name was resolved.
  package var domainLookupEnd: Date?
  /// When the TLS handshake began: the TCP connection was up (Apple's `connectEndDate` comes after
  /// the handshake).
  package var secureConnectionStart: Date?
  /// When the TLS handshake ended.
  package var secureConnectionEnd: Date?
  /// When the connection (TCP, and TLS over https) was established.
  package var connectEnd: Date?
  /// When the request's first byte was about to be written.
  package var requestStart: Date?
  /// When the response's first byte arrived.
  package var responseStart: Date?
  /// When the response's last byte arrived.
  package var responseEnd: Date?
  /// ALPN's name of the protocol: `"http/1.1"`, `"h2"`, `"h3"`; nil when unknown.
  package var networkProtocolName: String?
  /// Whether the request used a connection kept from an earlier one.
  package var isReusedConnection: Bool
  /// Whether the request went to the network (not answered from the cache or a server push).
  package var isNetworkLoad: Bool
  /// The address connected to.
  package var remoteAddress: String?
  /// The port connected to.
  package var remotePort: Int?
  /// Bytes of the request's head and body written.
  package var requestBytes: Int64
  /// Bytes of the response's head and body received, before decoding.
  package var responseBytes: Int64

  package init(
    fetchStart: Date? = nil, domainLookupEnd: Date? = nil, secureConnectionStart: Date? = nil,
    secureConnectionEnd: Date? = nil, connectEnd: Date? = nil, requestStart: Date? = nil,
    responseStart: Date? = nil, responseEnd: Date? = nil, networkProtocolName: String? = nil,
    isReusedConnection: Bool = false, isNetworkLoad: Bool = true, remoteAddress: String? = nil,
    remotePort: Int? = nil, requestBytes: Int64 = 0, responseBytes: Int64 = 0
  ) {
    self.fetchStart = fetchStart
    self.domainLookupEnd = domainLookupEnd
    self.secureConnectionStart = secureConnectionStart
    self.secureConnectionEnd = secureConnectionEnd
    self.connectEnd = connectEnd
    self.requestStart = requestStart
    self.responseStart = responseStart
    self.responseEnd = responseEnd
    self.networkProtocolName = networkProtocolName
    self.isReusedConnection = isReusedConnection
    self.isNetworkLoad = isNetworkLoad
    self.remoteAddress = remoteAddress
    self.remotePort = remotePort
    self.requestBytes = requestBytes
    self.responseBytes = responseBytes
  }

  /// The values of `metrics`, one per request of the task.
  package static func all(of metrics: URLSessionTaskMetrics) -> [URLSessionTransaction] {
    metrics.transactionMetrics.map { transaction in
      URLSessionTransaction(
        fetchStart: transaction.fetchStartDate, domainLookupEnd: transaction.domainLookupEndDate,
        secureConnectionStart: transaction.secureConnectionStartDate,
        secureConnectionEnd: transaction.secureConnectionEndDate, connectEnd: transaction.connectEndDate,
        requestStart: transaction.requestStartDate, responseStart: transaction.responseStartDate,
        responseEnd: transaction.responseEndDate, networkProtocolName: transaction.networkProtocolName,
        isReusedConnection: transaction.isReusedConnection,
        isNetworkLoad: transaction.resourceFetchType == .networkLoad,
        remoteAddress: transaction.remoteAddress, remotePort: remotePort(of: transaction),
        requestBytes: transaction.countOfRequestHeaderBytesSent + transaction.countOfRequestBodyBytesSent,
        responseBytes: transaction.countOfResponseHeaderBytesReceived
          + transaction.countOfResponseBodyBytesReceived)
    }
  }

  /// The port connected to: an `Int` in Apple's Foundation, a `String` in swift-corelibs-foundation.
  private static func remotePort(of transaction: URLSessionTaskTransactionMetrics) -> Int? {
    #if canImport(FoundationNetworking)
      return transaction.remotePort.flatMap { Int($0) }
    #else
      return transaction.remotePort
    #endif
  }

  /// The ``TransferMetrics/httpVersion`` of an ALPN protocol name: `"h2"` is `"HTTP/2"`,
  /// `"http/1.1"` is `"HTTP/1.1"`; a name of no HTTP version this knows is kept as it is, and
  /// none (or an empty one) is nil.
  package static func httpVersion(networkProtocolName name: String?) -> String? {
    guard let name, !name.isEmpty else { return nil }
    switch name.lowercased() {
    case "http/0.9": return "HTTP/0.9"
    case "http/1.0": return "HTTP/1.0"
    case "http/1.1": return "HTTP/1.1"
    case "h2", "h2c": return "HTTP/2"
    case let draft where draft == "h3" || draft.hasPrefix("h3-"): return "HTTP/3"
    default: return name
    }
  }
}

extension TransferMetrics {
  /// The metrics of the last request of `transactions` that went to the network (the exchange's
  /// own: the fetcher follows redirects itself), with its phases in seconds from its start; nil
  /// when none went to the network. `taskInterval` gives the start and end a transaction lacks.
  ///
  /// Apple's `connectEndDate` comes after the TLS handshake, where ``connect`` is the TCP
  /// connection alone: ``connect`` is the handshake's start over https.
  package init?(urlSessionTransactions transactions: [URLSessionTransaction], taskInterval: DateInterval?) {
    guard let transaction = transactions.last(where: \.isNetworkLoad),
      let start = transaction.fetchStart ?? taskInterval?.start
    else { return nil }
    func since(_ date: Date?) -> TimeInterval? { date.map { max(0, $0.timeIntervalSince(start)) } }
    self.init(
      nameLookup: since(transaction.domainLookupEnd),
      connect: since(transaction.secureConnectionStart ?? transaction.connectEnd),
      secureConnection: since(
        transaction.secureConnectionStart == nil ? nil : transaction.secureConnectionEnd),
      requestStart: since(transaction.requestStart), firstByte: since(transaction.responseStart),
      total: since(transaction.responseEnd ?? taskInterval?.end) ?? 0,
      isReusedConnection: transaction.isReusedConnection,
      httpVersion: URLSessionTransaction.httpVersion(networkProtocolName: transaction.networkProtocolName),
      remoteAddress: transaction.remoteAddress, remotePort: transaction.remotePort,
      requestBytes: transaction.requestBytes, responseBytes: transaction.responseBytes)
  }
}
