import Foundation

/// One exchange of the fetch: one request on the wire and its response (the first request of an
/// attempt, a redirect hop, or a request sent again to answer a challenge).
///
/// It exists only while the fetcher is ``FetcherLifecycle/State/running(_:)``: starting a hop makes
/// a fresh one in a single assignment, so nothing of a previous hop (its task, its response, its
/// cancel reason) can leak into the next. When the fetcher leaves `running`, the last exchange goes
/// with it into the next state, read-only, for what the fetcher reports afterwards (its
/// ``SessionFetcher/response``, ``SessionFetcher/statusCode``, ``SessionFetcher/downloadedLength``
/// and ``SessionFetcher/request``).
///
/// What spans the hops of an attempt (its start, redirect count and server challenges) is its
/// ``attempt``, handed from hop to hop. What outlives an attempt is the fetch's run (a
/// ``RunState``, which ``FetcherLifecycle/run`` reaches in every state after `idle`).
///
/// A class, touched only under the fetcher's lock: the states hand one reference on, and the
/// fetcher's many reads and changes of the exchange in flight neither copy its fields nor retain
/// each of them (a struct in the enum's payload was copied out and back on every access).
final class HopState {
  /// The hop this exchange is (see `RunState.hopCount`); 0 before the attempt's first.
  var hop: UInt64 = 0
  /// What spans the hops of its attempt, while the attempt runs: `FetcherLifecycle` sets it when
  /// the hop starts (a fresh one for an attempt's first, the previous hop's for the next) and
  /// takes it when the attempt ends, so the last exchange a later state carries has none.
  var attempt: AttemptState?
  /// The request as sent (with the jar's cookies and any Range headers).
  var request: URLRequest?
  /// The request before the jar's cookies were added: the base for the next redirect.
  var hopRequest: URLRequest?
  /// Whether this hop carries the attempt's body (a redirect that drops it does not).
  var keepsBody = true
  /// The engine's task, once made.
  var task: (any EngineTask)?
  /// The hop being handed to the engine, or waiting for a decision (a challenge's answer, a
  /// response block), without a task: its number while the timeout covers it.
  var pendingHop: UInt64?
  /// The response head; its `URLResponse` is made when ``response`` is first read.
  var responseHead: ResponseHead?
  /// Where the response body goes.
  var sink: ResponseSink = .memory
  var responseData = Data()
  var responseBodyLength: Int64 = 0
  var expectedContentLength: Int64 = -1
  /// Whether any byte of the response body arrived (a retry would not be idempotent for some).
  var receivedPartialBody = false
  /// Where the engine was asked to redirect (the response's Location).
  var redirectTarget: URL?
  /// A server or proxy challenge was cancelled: the 401 or 407 is the answer.
  var challengeCancelled = false
  /// The final response head waiting for ``SessionFetcher/didReceiveResponseBlock`` (see
  /// `SessionFetcher+ResponseDisposition.swift`).
  var responseGate: ResponseGate?
  /// What the fetcher measures of this exchange (see `SessionFetcher+Metrics.swift`).
  var measure = ExchangeMeasure()
  /// Why the fetcher cancelled this exchange's task, if it did.
  var cancelReason: CancelReason?
  /// The last sign of life of the exchange, for the idle timeout.
  var lastActivity = Date()
  /// The phases of this exchange as its engine measured them (reported as
  /// ``FetchTiming/transferMetrics`` of the fetch's last exchange).
  var transferMetrics: TransferMetrics?
  /// Its task is suspended (``StreamPausing/Method/suspendTask``): a paused stream, not idle.
  var isSuspended = false

  init() {}

  /// The exchange of hop `hop`, about to send `request`.
  init(hop: UInt64, request: URLRequest, hopRequest: URLRequest, keepsBody: Bool, now: Date) {
    self.hop = hop
    self.request = request
    self.hopRequest = hopRequest
    self.keepsBody = keepsBody
    self.measure = ExchangeMeasure(hop: hop, start: now)
    self.lastActivity = now
  }

  /// The fetcher ends the exchange's task: takes it, so that nothing the task still reports is
  /// accepted, and records `reason` as why (nil: keeps the reason it had, if any). Returns the
  /// task for the caller to let go of after the lock (nil: it had none).
  func endTask(_ reason: CancelReason?) -> (any EngineTask)? {
    let ended = task
    task = nil
    if let reason { cancelReason = reason }
    return ended
  }

  /// The response (made from ``responseHead`` on first use).
  var response: URLResponse? {
    get { responseHead?.response }
    set { responseHead = newValue.map(ResponseHead.init) }
  }
}

extension HopState {
  /// What a chunk of the response body is for the exchange (see ``chunkReceived(_:at:inMemoryLimit:)``).
  enum ChunkAction: Equatable {
    /// A late chunk of a task cancelled for a pause (the continuation asks for it again) or of an
    /// answer the fetcher failed: nothing.
    case drop
    /// The body passed the in-memory limit: what was kept is dropped, the fetcher fails the exchange.
    case tooLarge(limit: Int64)
    /// Counted (and kept, for an in-memory sink): deliver it to `sink`. `total` is the body's
    /// length so far, `expected` its announced length (-1: unknown, or passed).
    case deliver(sink: ResponseSink, total: Int64, expected: Int64)
  }

  /// A chunk of the response body arrived at `now`: counts it, keeps it in memory when the sink
  /// is memory (up to `inMemoryLimit` bytes), and says where it goes.
  func chunkReceived(_ data: Data, at now: Date, inMemoryLimit: Int64?) -> ChunkAction {
    switch cancelReason {
    case .pausedForBackpressure?, .failed?: return .drop
    case .stopped?, .timedOut?, nil: break
    }
    let count = Int64(data.count)
    lastActivity = now
    measure.bytesReceived += count
    responseBodyLength += count
    receivedPartialBody = true
    switch sink {
    case .memory, .redirect:
      if let limit = inMemoryLimit, responseBodyLength > limit {
        // Keep nothing more (and drop what was kept): the fetch fails with responseTooLarge.
        responseData = Data()
        return .tooLarge(limit: limit)
      }
      responseData.append(data)
    case .accumulate, .file, .stream:
      break
    }
    var expected = expectedContentLength
    if expected >= 0 && responseBodyLength > expected { expected = -1 }
    return .deliver(sink: sink, total: responseBodyLength, expected: expected)
  }
}
