import FetcherService
import Foundation
import SessionFetcher

/// The upload fetcher's whole mutable state, behind one lock.
struct UploadState {
  // Configuration.
  var request: URLRequest
  var mimeType: String
  var chunkSize: Int64
  let service: FetcherService?
  var source: UploadSource?
  var isRetryEnabled: Bool
  var retryBlock: SessionFetcher.RetryBlock?
  var minRetryInterval: TimeInterval = 1
  var retryFactor: Double = 2
  var maxRetryInterval: TimeInterval = 600
  var comment: String?
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

  /// Where the upload is in its life, with the data of that state.
  var lifecycle: UploadLifecycle

  // The running upload's delivery.
  var completion: FetcherCompletionHandler?
  var forceCompletionOnStop = false
  /// The upload itself while it runs or waits to retry: nil before it begins, while it is paused
  /// (an upload let go of then is freed) and once it ended.
  var retainedSelf: SessionUploadFetcher?
  /// The latest command fetcher while the upload runs (see ``SessionUploadFetcher/activeFetcher``).
  var latestFetcher: SessionFetcher?
  /// The request of the latest chunk command.
  var lastChunkRequest: URLRequest?
  var response: HTTPURLResponse?

  init(request: URLRequest, location: URL?, mimeType: String, chunkSize: Int64, service: FetcherService?) {
    self.request = request
    lifecycle = UploadLifecycle(location: location)
    self.mimeType = mimeType
    self.chunkSize = max(1, chunkSize)
    self.service = service
    // What a service gives its own fetchers, an upload made by it takes too (as the original's
    // upload fetcher, made by its service, does); 0 in the service means its fetchers' default.
    isRetryEnabled = service?.isRetryEnabled ?? false
    retryBlock = service?.retryBlock
    if let interval = service?.minRetryInterval, interval > 0 { minRetryInterval = interval }
    if let interval = service?.maxRetryInterval, interval > 0 { maxRetryInterval = interval }
    allowedInsecureSchemes = service?.allowedInsecureSchemes ?? []
    allowLocalhostRequest = service?.allowLocalhostRequest ?? false
    stopFetchingTriggersCompletionHandler = service?.stopFetchingTriggersCompletionHandler ?? false
    callbackQueue = service?.callbackQueue ?? .main
  }

  mutating func setSource(_ newSource: UploadSource?) {
    guard lifecycle.isIdle else { return }
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
