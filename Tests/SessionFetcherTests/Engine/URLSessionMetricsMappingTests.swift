import Foundation
import Testing

@testable import SessionFetcher

/// How the URLSession engine turns Apple's `URLSessionTaskMetrics` (as plain values) into
/// ``TransferMetrics``: a pure mapping, tested here on every platform, though only Apple's
/// URLSession delivers metrics.
@Suite("URLSession metrics mapping")
struct URLSessionMetricsMappingTests {
  @Test(
    arguments: [
      ("h2", "HTTP/2"), ("http/1.1", "HTTP/1.1"), ("HTTP/1.1", "HTTP/1.1"), ("http/1.0", "HTTP/1.0"),
      ("h3", "HTTP/3"), ("h3-29", "HTTP/3"), ("h2c", "HTTP/2"), ("spdy/3.1", "spdy/3.1"), ("", nil),
    ] as [(String, String?)])
  func protocolNamesBecomeHTTPVersions(_ name: String, _ version: String?) {
    #expect(URLSessionTransaction.httpVersion(networkProtocolName: name) == version)
  }

  @Test func noProtocolNameIsNoVersion() {
    #expect(URLSessionTransaction.httpVersion(networkProtocolName: nil) == nil)
  }

  /// A start, and a moment `seconds` after it.
  static let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
  static func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }

  struct Row: Sendable, CustomStringConvertible {
    let name: String
    let transactions: [URLSessionTransaction]
    let interval: DateInterval?
    let expected: TransferMetrics?
    var description: String { name }
  }

  static let rows: [Row] = [
    Row(
      name: "a new https connection: connect is the TCP part, before the handshake",
      transactions: [
        URLSessionTransaction(
          fetchStart: start, domainLookupEnd: at(0.01), secureConnectionStart: at(0.03),
          secureConnectionEnd: at(0.05), connectEnd: at(0.05), requestStart: at(0.06), responseStart: at(0.1),
          responseEnd: at(0.2), networkProtocolName: "h2", remoteAddress: "192.0.2.1", remotePort: 443,
          requestBytes: 120, responseBytes: 5_300)
      ],
      interval: nil,
      expected: TransferMetrics(
        nameLookup: 0.01, connect: 0.03, secureConnection: 0.05, requestStart: 0.06, firstByte: 0.1,
        total: 0.2,
        httpVersion: "HTTP/2", remoteAddress: "192.0.2.1", remotePort: 443, requestBytes: 120,
        responseBytes: 5_300)),
    Row(
      name: "plain http: connect is connectEnd, no TLS phase",
      transactions: [
        URLSessionTransaction(
          fetchStart: start, domainLookupEnd: at(0.02), connectEnd: at(0.04), requestStart: at(0.04),
          responseStart: at(0.09), responseEnd: at(0.1), networkProtocolName: "http/1.1")
      ],
      interval: nil,
      expected: TransferMetrics(
        nameLookup: 0.02, connect: 0.04, requestStart: 0.04, firstByte: 0.09, total: 0.1,
        httpVersion: "HTTP/1.1")),
    Row(
      name: "a reused connection: no DNS, connect or TLS phase",
      transactions: [
        URLSessionTransaction(
          fetchStart: start, requestStart: at(0.001), responseStart: at(0.01), responseEnd: at(0.02),
          networkProtocolName: "http/1.1", isReusedConnection: true)
      ],
      interval: nil,
      expected: TransferMetrics(
        requestStart: 0.001, firstByte: 0.01, total: 0.02, isReusedConnection: true, httpVersion: "HTTP/1.1")),
    Row(
      name: "the last request that went to the network, not the cache's answer after it",
      transactions: [
        URLSessionTransaction(fetchStart: start, responseEnd: at(0.3), networkProtocolName: "h2"),
        URLSessionTransaction(fetchStart: at(0.4), responseEnd: at(0.41), isNetworkLoad: false),
      ],
      interval: nil,
      expected: TransferMetrics(total: 0.3, httpVersion: "HTTP/2")),
    Row(
      name: "no end of its own: the task's end",
      transactions: [URLSessionTransaction(responseStart: at(0.5))],
      interval: DateInterval(start: start, end: at(0.7)),
      expected: TransferMetrics(firstByte: 0.5, total: 0.7)),
    Row(
      name: "only the cache answered: nothing measured",
      transactions: [URLSessionTransaction(fetchStart: start, responseEnd: at(0.1), isNetworkLoad: false)],
      interval: nil, expected: nil),
    Row(
      name: "no transaction", transactions: [], interval: DateInterval(start: start, duration: 1),
      expected: nil),
    Row(
      name: "no start anywhere", transactions: [URLSessionTransaction(responseEnd: at(0.1))], interval: nil,
      expected: nil),
  ]

  @Test(arguments: rows)
  func transactionsBecomeTransferMetrics(_ row: Row) throws {
    let mapped = TransferMetrics(urlSessionTransactions: row.transactions, taskInterval: row.interval)
    guard let expected = row.expected else {
      #expect(mapped == nil)
      return
    }
    let metrics = try #require(mapped)
    let phases: [KeyPath<TransferMetrics, TimeInterval?>] = [
      \.nameLookup, \.connect, \.secureConnection, \.requestStart, \.firstByte,
    ]
    for phase in phases {
      switch (metrics[keyPath: phase], expected[keyPath: phase]) {
      case (nil, nil): break
      case (let value?, let wanted?): #expect(abs(value - wanted) < 1e-6, "\(phase)")
      case (let value, let wanted):
        Issue.record("\(phase): \(String(describing: value)), not \(String(describing: wanted))")
      }
    }
    #expect(abs(metrics.total - expected.total) < 1e-6)
    #expect(metrics.isReusedConnection == expected.isReusedConnection)
    #expect(metrics.httpVersion == expected.httpVersion)
    #expect(metrics.remoteAddress == expected.remoteAddress && metrics.remotePort == expected.remotePort)
    #expect(metrics.requestBytes == expected.requestBytes && metrics.responseBytes == expected.responseBytes)
  }
}
