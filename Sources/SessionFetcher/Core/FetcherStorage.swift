import Foundation

/// What the user configured; read once when the fetch begins.
package struct FetcherConfiguration {
  /// The default of ``SessionFetcher/downloadWindowLength``: 16 MiB on Linux, nil elsewhere.
  package static let defaultDownloadWindowLength = EngineSessionFactory.defaultDownloadWindowLength

  package var request: URLRequest?
  package var comment: String?
  package var userData: (any Sendable)?
  package var properties: [String: any Sendable] = [:]
  package var bodyData: Data?
  package var bodyFileURL: URL?
  package var sendsBodyFileChunked = false
  package var bodyStreamProvider: SessionFetcher.BodyStreamProvider?
  package var bodyLength: Int64?
  /// Whether ``bodyLength`` is the exact length of every stream ``bodyStreamProvider`` makes, so
  /// the body may go with a `Content-Length` (see `SessionFetcher.sendHop`).
  package var bodyStreamHasExactLength = false
  package var destinationFileURL: URL?
  package var downloadWindowLength: Int64? = FetcherConfiguration.defaultDownloadWindowLength
  package var accumulateDataBlock: (@Sendable (Data?) -> Void)?
  package var sendProgressBlock: (@Sendable (Int64, Int64, Int64) -> Void)?
  package var receivedProgressBlock: (@Sendable (Int64, Int64) -> Void)?
  package var downloadProgressBlock: (@Sendable (Int64, Int64, Int64) -> Void)?
  package var progressContinuations: [AsyncStream<TransferProgress>.Continuation] = []
  package var isRetryEnabled = false
  package var maxRetryCount: Int?
  package var retryBlock: SessionFetcher.RetryBlock?
  package var minRetryInterval: TimeInterval?
  package var maxRetryInterval: TimeInterval?
  package var retryFactor: Double = 2
  package var allowedInsecureSchemes: [String] = []
  package var allowLocalhostRequest = false
  package var credential: URLCredential?
  package var proxyCredential: URLCredential?
  package var authorizer: (any FetcherAuthorizer)?
  package var willRedirectBlock: SessionFetcher.WillRedirectBlock?
  package var challengeBlock: ChallengeBlock?
  package var didReceiveResponseBlock: SessionFetcher.DidReceiveResponseBlock?
  package var metricsCollectionBlock: SessionFetcher.MetricsCollectionBlock?
  package var maximumRedirects = RedirectPolicy.maximumRedirects
  package var cookieStorage: SessionCookieStorage = .shared
  package var shouldHandleCookies = true
  package var resourceTimeoutInterval: TimeInterval?
  package var maximumResponseBodyLength: Int64?
  package var maximumLineLength = SessionFetcher.defaultMaximumLineLength
  package var maximumEventLength = SessionFetcher.defaultMaximumEventLength
  package var sessionConfiguration: URLSessionConfiguration?
  package var configurationBlock: (@Sendable (URLSessionConfiguration) -> Void)?
  package var stopFetchingTriggersCompletionHandler = false
  package var callbackQueue: DispatchQueue = .main
  package var testBlock: SessionFetcher.TestBlock?
  package var testBlockAccumulateDataChunkCount = 1
  package var resumeDataBlock: (@Sendable (Data) -> Void)?
  /// Called on the engine's thread before each chunk is written to the part file, with its size:
  /// lets a test hold a write on its way to the disk (see `PartFile`).
  package var partFileWillWrite: (@Sendable (Int) -> Void)?
  package var eventMonitors: [any FetcherEventMonitor] = []
  package var serviceHooks: (any FetcherServiceHooks)?
  package var service = WeakFetcherService(nil)
  package var serviceHost: String?
  package var userAgentProvider: (any UserAgentProvider)?
  package var presetUserAgent: String?
  package var sessionProvider: (@Sendable () -> SharedSession)?
  package var engine = FetcherEngine.default
  /// Makes the engine sessions of a fetch with a configuration of its own, in place of `engine`'s
  /// (a test's scripted engine).
  package var engineSessions: SharedSession.EngineSessionMaker?
  package var tlsSettings = TLSSettings()
  package var proxySettings: ProxySettings?
  package var unixSocketPath: String?
  package var servicePriority = 0
  package var postsNotifications = true
  /// The random first delay, chosen once per fetcher when first asked for (a draw from the
  /// system's generator is a system call: most fetches never retry).
  private var randomMinRetryInterval: TimeInterval?

  package init(request: URLRequest?) {
    self.request = request
  }

  /// A retry delay bound as set by the user: 0 or less means the default.
  package static func retryInterval(_ value: TimeInterval) -> TimeInterval? {
    value > 0 ? value : nil
  }

  package var effectiveMinRetryInterval: TimeInterval {
    mutating get {
      if let minRetryInterval { return minRetryInterval }
      if let randomMinRetryInterval { return randomMinRetryInterval }
      let interval = TimeInterval.random(in: 1...2)
      randomMinRetryInterval = interval
      return interval
    }
  }

  package var effectiveMaxRetryInterval: TimeInterval {
    if let maxRetryInterval { return maxRetryInterval }
    let method = (request?.httpMethod ?? "GET").uppercased()
    let hasBody = bodyData != nil || bodyStreamProvider != nil
    return (method == "GET" || method == "HEAD") && !hasBody ? 60 : 600
  }
}

/// The heap box of ``FetcherStorage/config``, copied on write when shared.
private final class ConfigurationBox {
  // Reached only through the fetcher's locked storage, which guarantees exclusive access.
  @exclusivity(unchecked) var value: FetcherConfiguration

  init(_ value: FetcherConfiguration) {
    self.value = value
  }
}

/// Where the body of the current response goes.
enum ResponseSink {
  /// Kept in memory (the default, and every non-2xx body).
  case memory
  /// Handed to the accumulate block.
  case accumulate
  /// Written to a part file beside the destination.
  case file
  /// A redirect's own body: kept in memory in case the redirect is refused.
  case redirect
  /// Handed to the stream consumer of ``SessionFetcher/beginStreaming(highWaterMark:lowWaterMark:)``.
  case stream
}

/// Why the fetcher cancelled its own task.
enum CancelReason {
  case stopped
  case timedOut
  case failed(any Error)
  /// A stream's buffer is full, or a stream's Range window ended (`StreamWindows`): the transfer
  /// is paused and continues later with a Range request.
  case pausedForBackpressure
}

/// The fetcher's whole mutable state, behind one lock.
struct FetcherStorage {
  /// What the user configured. It lives in a box of its own so that the storage (allocated with
  /// every fetcher) stays small enough for the allocator's per-thread cache: at its full size, over
  /// 1 KiB, each fetcher's allocation took glibc's slow path.
  var config: FetcherConfiguration {
    _read { yield configBox.value }
    _modify {
      if !isKnownUniquelyReferenced(&configBox) { configBox = ConfigurationBox(configBox.value) }
      yield &configBox.value
    }
  }
  private var configBox: ConfigurationBox
  let urlString: String
  var lifecycle = FetcherLifecycle()

  // Fixed when the fetch begins: configuration, outside the states because every state after
  // `idle` reads it and none may change it (the blocks are only released when the fetch ends).
  // What the fetch changes as it goes is its run (`RunState`), which the machine gives out in
  // every state after `idle`; what belongs to one attempt is its `AttemptState`, to one hop its `HopState` (see
  // `FetcherLifecycle`).
  /// The caller's completion, given at begin.
  var completion: FetcherCompletionHandler?
  /// The parse step of a parse-then-complete fetch
  /// (``SessionFetcher/beginFetch(parsing:completionHandler:)``): runs on a successful body before
  /// the completion is queued.
  var successParser: SuccessParser?
  /// What the fetch does, made from the configuration once it began (nil before, and when the
  /// configuration was refused).
  var plan: FetchPlan?

  // Configuration of resumable downloads (see `DownloadResume.swift`), set by the user (the token
  // before the fetch begins); the run's resume state starts from it.
  /// Keep the part file and make ``SessionFetcher/downloadResumeData`` when the fetch fails or
  /// stops. May be set while the fetch runs: it is read when the fetch ends.
  var keepsPartialDownload = false
  /// The part file a resume token given before begin continues (``SessionFetcher/resumeData``).
  var resumeFrom: ParkedDownload?
  /// Why the token given to ``SessionFetcher/resumeData`` was refused: the fetch fails with it.
  var resumeRefusal: String?

  // Configuration set before the fetch begins, which the run's stream state starts from (see
  // `SessionFetcher.attachStreamConsumer(_:windowLength:)`).
  /// The consumer of a streamed body (`beginStreaming`).
  var streamConsumer: WeakStreamConsumer?
  /// The length of the Range windows a stream asks for its body in, when the engine cannot pause.
  var streamWindowLength: Int64?

  /// Starts `run` from what was set before begin: a stream's consumer and windows, the part file a
  /// resume token continues. At begin, and at a stop before it, whose ended fetch still hands out
  /// the token it was given (``SessionFetcher/downloadResumeData``, the resume-data block).
  func startRun(_ run: RunState) {
    if let consumer = streamConsumer { run.stream.consumer = consumer }
    if let windowLength = streamWindowLength { run.stream.windowLength = windowLength }
    if let parked = resumeFrom { run.downloadResume.parked = parked }
  }

  init(request: URLRequest?, urlString: String) {
    configBox = ConfigurationBox(FetcherConfiguration(request: request))
    self.urlString = urlString
  }

  /// Whether the completion's delivery ran (see ``FetcherLifecycle/completionDelivered()``).
  var completionDelivered: Bool { lifecycle.isCompletionDelivered }

  /// What spans the fetch (see ``FetcherLifecycle/run``): only once it has begun.
  var run: RunState { lifecycle.run }

  /// When the running attempt began (only while running: the caller checks the phase first).
  var attemptStart: Date { lifecycle.attempt.start }

  /// The run's timing as the fetch reports it: with the transfer metrics of its last exchange (an
  /// empty timing before begin).
  var reportedTiming: FetchTiming {
    guard var reported = lifecycle.begunRun?.timing else { return FetchTiming() }
    reported.transferMetrics = lifecycle.exchange?.transferMetrics
    return reported
  }

  /// The blocks and monitors of the fetch, released when it ends.
  mutating func releaseBlocks() {
    completion = nil
    successParser = nil
    config.accumulateDataBlock = nil
    config.sendProgressBlock = nil
    config.receivedProgressBlock = nil
    config.downloadProgressBlock = nil
    config.retryBlock = nil
    config.willRedirectBlock = nil
    config.challengeBlock = nil
    config.didReceiveResponseBlock = nil
    config.metricsCollectionBlock = nil
    config.testBlock = nil
    config.bodyStreamProvider = nil
    plan?.body = .none
  }
}

/// A parse step of parse-then-complete, run on a successful body.
typealias SuccessParser = @Sendable (Data?) -> Void

/// The body of each attempt: what to send, not yet the bytes of one exchange. A stream provider
/// is called again, and a file checked again, for each attempt and each redirect that resends the
/// body; `sendHop` opens it as that exchange's ``EngineBody``.
enum BodySource {
  case none
  case data(Data)
  case file(URL)
  case stream(SessionFetcher.BodyStreamProvider)

  var isPresent: Bool {
    if case .none = self { return false }
    return true
  }
}

/// What the fetch does, fixed when it begins.
///
/// A class, shared rather than copied: the fetcher reads it under its lock several times per fetch.
/// `@unchecked Sendable`: only ``body`` changes (released when the fetch ends), under the fetcher's
/// lock, which is also where it is read.
final class FetchPlan: @unchecked Sendable {
  let baseRequest: URLRequest
  var body: BodySource
  let bodyLength: Int64?
  /// The exact length of every stream of a `.stream` body, to send with a `Content-Length`
  /// (``SessionFetcher/setBodyStream(_:exactLength:)``); nil sends streams chunked.
  let exactStreamLength: Int64?
  let destination: URL?
  let accumulates: Bool
  /// The most bytes of a response body kept in memory (nil: no limit).
  let maximumInMemoryBodyLength: Int64?
  let idleTimeout: TimeInterval
  let resourceTimeout: TimeInterval?
  /// Where this fetch's callbacks and notifications are queued: a serial queue that targets the
  /// fetcher's ``SessionFetcher/callbackQueue`` (the main queue itself, which is serial already).
  /// The caller's queue may be concurrent; a serial queue of the fetch's own keeps its callbacks one
  /// at a time and in the order they were queued (progress, chunks, then the completion).
  let callbackQueue: DispatchQueue
  /// The ``SessionFetcher/callbackQueue`` the fetch began with, for the blocking wait's checks.
  let userCallbackQueue: DispatchQueue
  /// The global monitors and the fetcher's own, as they were when the fetch began.
  let monitors: [any FetcherEventMonitor]
  let cookieStorage: SessionCookieStorage?
  let session: SharedSession
  let ownsSession: Bool
  /// The TLS settings of every exchange (checked when the plan was made).
  let tlsSettings: TLSSettings
  /// The proxy and Unix socket of every exchange (checked when the plan was made).
  let route: TransportRoute
  /// How the session's engine pauses a transfer whose consumer is behind.
  var pausing: StreamPausing.Method { session.pausing }
  let testBlock: SessionFetcher.TestBlock?
  /// ``SessionFetcher/postsNotifications`` when the fetch began.
  let postsNotifications: Bool
  /// The user-agent provider and decorators of every attempt (nil when there are none), set once
  /// before the first attempt.
  var preparation: AttemptPreparation?
  /// The calls of the fetch's authorizer (nil without one), set once before the first attempt.
  var authorization: AuthorizerCalls?

  init(
    baseRequest: URLRequest, body: BodySource, bodyLength: Int64?, exactStreamLength: Int64? = nil,
    destination: URL?, accumulates: Bool,
    maximumInMemoryBodyLength: Int64?, idleTimeout: TimeInterval, resourceTimeout: TimeInterval?,
    callbackQueue: DispatchQueue, monitors: [any FetcherEventMonitor],
    cookieStorage: SessionCookieStorage?, session: SharedSession, ownsSession: Bool,
    testBlock: SessionFetcher.TestBlock?, postsNotifications: Bool, tlsSettings: TLSSettings = TLSSettings(),
    route: TransportRoute = TransportRoute()
  ) {
    self.tlsSettings = tlsSettings
    self.route = route
    self.baseRequest = baseRequest
    self.body = body
    self.bodyLength = bodyLength
    self.exactStreamLength = exactStreamLength
    self.destination = destination
    self.accumulates = accumulates
    self.maximumInMemoryBodyLength = maximumInMemoryBodyLength
    self.idleTimeout = idleTimeout
    self.resourceTimeout = resourceTimeout
    self.userCallbackQueue = callbackQueue
    self.callbackQueue = SerialCallbackQueue.make(targeting: callbackQueue)
    self.monitors = monitors
    self.cookieStorage = cookieStorage
    self.session = session
    self.ownsSession = ownsSession
    self.testBlock = testBlock
    self.postsNotifications = postsNotifications
  }
}
