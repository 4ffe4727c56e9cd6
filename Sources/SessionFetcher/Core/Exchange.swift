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
/// What outlives one exchange stays in `FetcherStorage`: the attempt's redirect count and server
/// challenges, the hop counter, the retry count and backoff, the timing, the armed timeout check,
/// the download's part file (kept across retries) and the stream's progress.
struct Exchange {
  /// The hop this exchange is (see `FetcherStorage.hopCount`); 0 before the attempt's first.
  var hop: UInt64 = 0
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

  /// The response (made from ``responseHead`` on first use).
  var response: URLResponse? {
    get { responseHead?.response }
    set { responseHead = newValue.map(ResponseHead.init) }
  }
}
