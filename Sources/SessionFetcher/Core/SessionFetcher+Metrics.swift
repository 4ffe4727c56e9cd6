import Foundation

/// What the fetcher itself measures of one exchange (one request and its response), for the
/// engines that measure nothing (the URLSession engine: its metrics never arrive on Linux).
struct ExchangeMeasure {
  /// The hop this exchange is (see `RunState.hopCount`); 0 before the first.
  var hop: UInt64 = 0
  /// When the request was handed on.
  var start = Date()
  /// When its response head arrived.
  var responseDate: Date?
  var bytesSent: Int64 = 0
  var bytesReceived: Int64 = 0
  /// Whether ``SessionFetcher/metricsCollectionBlock`` had this exchange already.
  var reported = false

  /// The record of an exchange that ended now: what the fetcher saw, nil where it cannot know.
  func metrics(endedAt end: Date) -> TransferMetrics {
    TransferMetrics(
      firstByte: responseDate.map { $0.timeIntervalSince(start) },
      total: end.timeIntervalSince(start), isReusedConnection: false, httpVersion: nil,
      remoteAddress: nil, remotePort: nil, requestBytes: bytesSent, responseBytes: bytesReceived)
  }
}

/// One call of a metrics block, made after the fetcher's lock is released.
struct MetricsDelivery {
  var queue: DispatchQueue
  var block: SessionFetcher.MetricsCollectionBlock
  var metrics: TransferMetrics

  func deliver(_ fetcher: SessionFetcher) {
    let (block, metrics) = (block, metrics)
    fetcher.deliver(on: queue) { block(metrics) }
  }
}

extension SessionFetcher {
  /// Receives the metrics of each exchange.
  public typealias MetricsCollectionBlock = @Sendable (TransferMetrics) -> Void

  /// Called once for every exchange of the fetch — each attempt and each redirect hop, and each
  /// request sent again to answer an authentication challenge —, successful or failed (a refused
  /// connection, a timeout, an error status too), on the callback queue, before the fetch's
  /// completion. Stubbed fetches (``testBlock``) make no exchange and report none; neither does a
  /// stopped one.
  ///
  /// On the libcurl engine the record is libcurl's measure (see ``TransferMetrics``); an exchange
  /// the fetcher ended itself (a timeout) and every exchange of the URLSession engine are measured
  /// by the fetcher: ``TransferMetrics/total`` and ``TransferMetrics/firstByte`` (when the response
  /// head arrived), ``TransferMetrics/requestBytes`` and ``TransferMetrics/responseBytes`` as body
  /// bytes only; the fields it cannot know (DNS, connect, TLS, the request start, the HTTP version,
  /// the address and port, connection reuse) are nil or false. In a service,
  /// `FetcherService.metricsCollectionBlock` sets it on every fetcher.
  ///
  /// ```swift
  /// fetcher.metricsCollectionBlock = { metrics in
  ///   print("exchange took \(metrics.total) s, \(metrics.responseBytes) bytes")
  /// }
  /// ```
  public var metricsCollectionBlock: MetricsCollectionBlock? {
    get { self[config: \.metricsCollectionBlock] }
    set { self[config: \.metricsCollectionBlock] = newValue }
  }

  /// The current exchange ended (under the fetcher's lock): the metrics block's call, once per
  /// exchange, or nil.
  func exchangeEnded(_ storage: inout FetcherStorage, error: (any Error)?) -> MetricsDelivery? {
    guard storage.lifecycle.phase == .running else { return nil }
    let exchange = storage.lifecycle.current
    switch exchange.cancelReason {
    case .stopped?, .pausedForBackpressure?: return nil
    case .timedOut?, .failed?, nil: break
    }
    guard !exchange.measure.reported, exchange.measure.hop == storage.run.hopCount,
      let plan = storage.plan, plan.testBlock == nil, let block = storage.config.metricsCollectionBlock
    else { return nil }
    storage.lifecycle.current.measure.reported = true
    let metrics = exchange.transferMetrics ?? exchange.measure.metrics(endedAt: Date())
    return MetricsDelivery(queue: plan.callbackQueue, block: block, metrics: metrics)
  }
}
