import FetcherService
import Foundation
import SessionFetcher

/// The upload fetcher's whole mutable state, behind one lock.
struct UploadState {
  enum Phase: Equatable {
    /// Created, not begun.
    case idle
    /// A command is on the wire or a chunk is being read.
    case running
    /// Waiting out a retry delay before a query.
    case waitingToRetry
    /// Paused by the caller; resuming sends a query.
    case paused
    /// The completion is delivered or queued.
    case finished
    /// Stopped by the caller.
    case stopped

    var isFetching: Bool {
      switch self {
      case .running, .waitingToRetry, .paused: return true
      case .idle, .finished, .stopped: return false
      }
    }
  }

  /// The command fetcher on the wire and the step it belongs to.
  struct Command {
    var fetcher: SessionFetcher
    var step: Int
  }

  // Configuration.
  var request: URLRequest
  var location: URL?
  var mimeType: String
  var chunkSize: Int64
  let service: FetcherService?
  var source: UploadSource?
  var isRetryEnabled: Bool
  var retryBlock: SessionFetcher.RetryBlock?
  var minRetryInterval: TimeInterval = 1
  var retryFactor: Double = 2
  var maxUploadRetryInterval: TimeInterval = 600
  var allowedInsecureSchemes: [String]
  var allowLocalhostRequest: Bool
  var sendProgressBlock: (@Sendable (Int64, Int64, Int64) -> Void)?
  var willBeginCommandFetcher: (@Sendable (SessionFetcher) -> Void)?
  var cancellationHandler: SessionUploadFetcher.CancellationHandler?
  var stopFetchingTriggersCompletionHandler: Bool
  var callbackQueue: DispatchQueue
  /// The serial queue of the running upload's callbacks, targeting ``callbackQueue`` (made when
  /// the upload begins: a concurrent callback queue must not reorder them).
  var deliveryQueue: DispatchQueue?

  /// Where callbacks and notifications are queued.
  var queue: DispatchQueue { deliveryQueue ?? callbackQueue }

  // The running upload.
  var phase = Phase.idle
  var completion: FetcherCompletionHandler?
  var forceCompletionOnStop = false
  var retainedSelf: SessionUploadFetcher?
  var totalLength: Int64?
  var planner: ChunkPlanner?
  /// The bytes the server is known to hold: where the next chunk starts.
  var offset: Int64 = 0
  /// Bumped by every step (command, chunk read, pause, stop): answers of older steps are ignored.
  var step = 0
  var current: Command?
  /// The latest command fetcher while the upload runs (see ``SessionUploadFetcher/activeFetcher``).
  var latestFetcher: SessionFetcher?
  /// The request of the latest chunk command.
  var lastChunkRequest: URLRequest?
  /// Whether the first retry delay began (``Notification.Name/sessionUploadFetcherInitialBackoffStarted``).
  var backoffStarted = false
  /// The pending wait before the next command (see `RetryDelay`).
  var retryDelay: RetryDelay?
  var lastRetryInterval: TimeInterval = 0
  var retryCount = 0
  /// Chunk 4xx answers in a row that a query resynchronized, without a chunk succeeding since.
  var resyncsWithoutProgress = 0
  /// The highest upload total reported to the send progress block.
  var progressReported: Int64 = 0
  var response: HTTPURLResponse?

  init(request: URLRequest, location: URL?, mimeType: String, chunkSize: Int64, service: FetcherService?) {
    self.request = request
    self.location = location
    self.mimeType = mimeType
    self.chunkSize = max(1, chunkSize)
    self.service = service
    isRetryEnabled = service?.isRetryEnabled ?? false
    allowedInsecureSchemes = service?.allowedInsecureSchemes ?? []
    allowLocalhostRequest = service?.allowLocalhostRequest ?? false
    stopFetchingTriggersCompletionHandler = service?.stopFetchingTriggersCompletionHandler ?? false
    callbackQueue = service?.callbackQueue ?? .main
  }

  mutating func setSource(_ newSource: UploadSource?) {
    guard phase == .idle else { return }
    source = newSource
  }

  /// The blocks, released when the upload ends.
  mutating func releaseBlocks() {
    completion = nil
    retryBlock = nil
    sendProgressBlock = nil
    willBeginCommandFetcher = nil
    cancellationHandler = nil
    source = nil
    latestFetcher = nil
  }
}
