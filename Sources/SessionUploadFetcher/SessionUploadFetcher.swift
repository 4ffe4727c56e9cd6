import FetcherService
import Foundation
import SessionFetcher

extension Notification.Name {
  /// Posted on the upload fetcher's callback queue when the server gave the upload URL (see
  /// ``SessionUploadFetcher/uploadLocationURL``). The object is the ``SessionUploadFetcher``.
  public static let sessionUploadFetcherLocationObtained = Notification.Name(
    "SessionUploadFetcherLocationObtained")

  /// Posted on the upload fetcher's callback queue when its backoff begins: the first retry delay
  /// of the upload (the original's `kGTMSessionFetcherUploadInitialBackoffStartedNotification`),
  /// just after that delay's `sessionFetcherRetryDelayStarted`. The object is the
  /// ``SessionUploadFetcher``.
  public static let sessionUploadFetcherInitialBackoffStarted = Notification.Name(
    "SessionUploadFetcherInitialBackoffStarted")
}

/// A resumable upload over Google's chunked upload protocol (`X-Goog-Upload-*` headers), a
/// re-creation of `GTMSessionUploadFetcher`.
///
/// ```swift
/// var request = URLRequest(url: URL(string: "https://example.com/upload/files")!)
/// request.httpBody = metadataJSON            // sent with the start command
/// let upload = SessionUploadFetcher(
///   request: request, uploadMIMEType: "video/mp4", chunkSize: 8 * 1024 * 1024, fetcherService: service)
/// upload.uploadFileURL = movieURL
/// upload.sendProgressBlock = { _, sent, total in print("\(sent) of \(total)") }
/// let responseBody = try await upload.beginFetch()
/// ```
///
/// The upload starts with a `start` command to the request's URL (a GET becomes a POST; the
/// request's body is sent as the upload's metadata), which answers with the upload URL. The bytes
/// then go as `PUT`s of at most ``chunkSize`` bytes to that URL, without `Authorization` (the URL
/// is the credential), each with its `X-Goog-Upload-Offset`; the last one finalizes. A chunk
/// refused with a 4xx (but 404) makes the fetcher `query` the server and resume where the server
/// stands; with ``isRetryEnabled``, transient failures do the same after a backoff
/// (``minRetryInterval``, doubling) until the next delay would reach ``maxUploadRetryInterval``.
///
/// Every command is one `SessionFetcher` (made by the `FetcherService` when one is given, so its
/// authorizer, cookies, throttling, user agent and event monitors apply). The command fetchers do
/// not retry by themselves: resending a chunk blindly is wrong once the server may hold part of
/// it, so the upload fetcher retries with a query.
///
/// **Sources.** Set exactly one of ``uploadData``, ``uploadFileURL`` (read chunk by chunk at its
/// offset, never whole; a file that fits in one chunk is sent by URL), ``uploadFileHandle`` or a
/// provider (``setUploadDataLength(_:provider:)``, ``setUploadDataLength(_:fullLengthProvider:)``);
/// setting one replaces the others.
///
/// **Notifications.** Each command fetcher posts its own `sessionFetcherStarted` and
/// `sessionFetcherStopped` (its `SessionFetcher.parentUploadFetcher` is this upload). The upload
/// fetcher posts ``Foundation/NSNotification/Name/sessionUploadFetcherLocationObtained``, and for
/// each retry delay `sessionFetcherRetryDelayStarted` and then `sessionFetcherRetryDelayStopped`
/// (when the delay ends, or when the upload is paused or stopped during it), the first delay also
/// ``Foundation/NSNotification/Name/sessionUploadFetcherInitialBackoffStarted``; their object is the
/// upload fetcher.
///
/// **Threading.** Every member may be used from any thread. Closures and notifications run on
/// ``callbackQueue`` (the main queue unless set), one at a time and in order, the completion last,
/// even when the queue is concurrent.
public final class SessionUploadFetcher: @unchecked Sendable {
  // `@unchecked Sendable`: every mutable property is in `state`, read and written under its lock;
  // the lock is never held while calling a fetcher or a user closure.

  /// Gives the bytes of the upload at `offset`: call `respond` once, from any thread, with
  /// `length` bytes (fewer only at the end of an upload of unknown length), or with an error, which
  /// ends the upload with that error.
  public typealias DataProvider =
    @Sendable (
      _ offset: Int64, _ length: Int64, _ respond: @escaping @Sendable (Data?, (any Error)?) -> Void
    ) -> Void

  /// Called when ``stopFetching()`` stopped an upload, with the `cancel` command's fetcher, body and
  /// error (nil, nil, nil when the upload URL was not known and no cancel was sent).
  public typealias CancellationHandler =
    @Sendable (_ cancelFetcher: SessionFetcher?, _ data: Data?, _ error: (any Error)?) -> Void

  /// Gives the bytes of the upload at `offset`, like ``DataProvider``, and may tell the upload's
  /// full length once it knows it (the original's `fullUploadLength`): call `respond` once with
  /// the bytes, the full length (``unknownLength``, any negative value, while not known) and nil,
  /// or with nil, any length and an error.
  ///
  /// For an upload begun with an unknown length, the first length told is kept: the following
  /// chunks are planned to it, the last one finalizes the upload, and send progress reports it as
  /// the expected total. A chunk may then be shorter than asked only when it ends the upload
  /// (the bytes left before the told length). A length told when the length is already known is
  /// ignored.
  public typealias FullLengthDataProvider =
    @Sendable (
      _ offset: Int64, _ length: Int64,
      _ respond: @escaping @Sendable (_ data: Data?, _ fullUploadLength: Int64, _ error: (any Error)?) -> Void
    ) -> Void

  /// A chunk size meaning "as large as allowed": the whole upload in one chunk when sent by file
  /// URL, else chunks of 100 MB.
  public static let standardChunkSize = Int64.max
  /// The length to give ``setUploadDataLength(_:provider:)`` when the provider's length is unknown.
  public static let unknownLength: Int64 = -1

  let state: Locked<UploadState>
  /// The queue every command fetcher calls back on: the upload's decisions happen one at a time.
  let workQueue = DispatchQueue(label: "SessionUploadFetcher")

  // MARK: - Creation

  /// Creates an upload that begins with a `start` command to `request`'s URL.
  ///
  /// - Parameters:
  ///   - request: where the upload is created; its headers and body (the metadata) go with the
  ///     start command.
  ///   - uploadMIMEType: the content type of the uploaded bytes (`X-Goog-Upload-Content-Type`).
  ///   - chunkSize: the largest chunk, in bytes (``standardChunkSize`` for as large as allowed).
  ///   - fetcherService: makes the command fetchers; nil for standalone fetchers.
  public init(
    request: URLRequest, uploadMIMEType: String, chunkSize: Int64 = SessionUploadFetcher.standardChunkSize,
    fetcherService: FetcherService? = nil
  ) {
    state = Locked(
      UploadState(
        request: request, location: nil, mimeType: uploadMIMEType, chunkSize: chunkSize,
        service: fetcherService))
  }

  /// Resumes an upload created earlier, perhaps by another process, at its upload URL: the fetch
  /// begins with a `query` and sends the bytes the server does not hold yet. Set the same source
  /// as the original upload.
  ///
  /// `location` usually comes back from storage, so it is checked when the fetch begins: anything
  /// but an absolute `http` or `https` URL with a host and without user information fails it with
  /// ``SessionUploadFetcherError/invalidUploadLocation(_:)`` before any traffic. An upload URL the
  /// server's `start` answers is held to the same rule. With `fetcherService`, the commands carry
  /// the service's defaults (its authorizer only for `start`: the upload URL is the credential).
  public init(
    location: URL, uploadMIMEType: String, chunkSize: Int64 = SessionUploadFetcher.standardChunkSize,
    fetcherService: FetcherService? = nil
  ) {
    state = Locked(
      UploadState(
        request: URLRequest(url: location), location: location, mimeType: uploadMIMEType,
        chunkSize: chunkSize, service: fetcherService))
  }

  // MARK: - Sources

  /// The bytes to upload, in memory.
  public var uploadData: Data? {
    get { state.withLock { if case .data(let data)? = $0.source { return data } else { return nil } } }
    set { state.withLock { $0.setSource(newValue.map { .data($0) }) } }
  }

  /// A file to upload, read one chunk at a time at its offset (a file that fits in one chunk is
  /// sent by URL without being read into memory). A missing file fails the fetch before any traffic.
  public var uploadFileURL: URL? {
    get { state.withLock { if case .file(let url)? = $0.source { return url } else { return nil } } }
    set { state.withLock { $0.setSource(newValue.map { .file($0) }) } }
  }

  /// A file handle to upload from, open for reading: its length is where its end is when the
  /// upload begins, and each chunk is read at its offset (the handle's position moves). The upload
  /// does not close it; close it once the upload has ended. A handle that cannot be read when the
  /// upload begins fails it before any traffic with `SessionFetcherError.bodyUnavailable`; one that
  /// is closed (or stops being readable) during the upload ends it with
  /// ``SessionUploadFetcherError/chunkUnavailable(description:)`` when the next chunk is read, with
  /// no partial chunk sent.
  public var uploadFileHandle: FileHandle? {
    get {
      state.withLock { if case .fileHandle(let handle)? = $0.source { return handle } else { return nil } }
    }
    set { state.withLock { $0.setSource(newValue.map { .fileHandle($0) }) } }
  }

  /// Uploads the bytes a provider gives that may tell the upload's full length once it knows it
  /// (see ``FullLengthDataProvider``): `length` bytes in all, or ``unknownLength`` (any negative
  /// value) when not known yet.
  ///
  /// ```swift
  /// upload.setUploadDataLength(SessionUploadFetcher.unknownLength) { offset, length, respond in
  ///   let bytes = recorder.bytes(at: offset, upTo: length)
  ///   respond(bytes, recorder.isFinished ? recorder.totalLength : SessionUploadFetcher.unknownLength, nil)
  /// }
  /// ```
  public func setUploadDataLength(_ length: Int64, fullLengthProvider: @escaping FullLengthDataProvider) {
    state.withLock {
      $0.setSource(.fullLengthProvider(length: length >= 0 ? length : nil, fullLengthProvider))
    }
  }

  /// Uploads the bytes a provider gives, `length` bytes in all, or ``unknownLength`` (any negative
  /// value) when the length is not known: the start then declares `-1`, and the first chunk the
  /// provider fills only partly is the last.
  public func setUploadDataLength(_ length: Int64, provider: @escaping DataProvider) {
    state.withLock { $0.setSource(.provider(length: length >= 0 ? length : nil, provider)) }
  }

  // MARK: - Configuration (before beginning)

  /// The request that creates the upload (for an upload made with a location, a GET of it).
  public var request: URLRequest { state.withLock { $0.request } }

  /// The largest chunk, in bytes, as given; the server's granularity rounds it down.
  public var chunkSize: Int64 { state.withLock { $0.chunkSize } }

  /// The content type of the uploaded bytes.
  public var uploadMIMEType: String { state.withLock { $0.mimeType } }

  /// The service that makes the command fetchers, if any.
  public var fetcherService: FetcherService? { state.withLock { $0.service } }

  /// Whether transient failures (408, 429, 502, 503, 504, dropped connections) query the server
  /// and resume after a backoff. Default: the service's setting, else false.
  public var isRetryEnabled: Bool {
    get { state.withLock { $0.isRetryEnabled } }
    set { state.withLock { $0.isRetryEnabled = newValue } }
  }

  /// Decides each retry: the suggestion, the failure, and `response` to call with the decision.
  /// Default: the service's.
  public var retryBlock: SessionFetcher.RetryBlock? {
    get { state.withLock { $0.retryBlock } }
    set { state.withLock { $0.retryBlock = newValue } }
  }

  /// The first retry delay (default: the service's when set, else 1 s); each next one is
  /// ``retryFactor`` times longer.
  public var minRetryInterval: TimeInterval {
    get { state.withLock { $0.minRetryInterval } }
    set { state.withLock { $0.minRetryInterval = newValue > 0 ? newValue : 1 } }
  }

  /// The factor between consecutive retry delays (default 2).
  public var retryFactor: Double {
    get { state.withLock { $0.retryFactor } }
    set { state.withLock { $0.retryFactor = newValue > 1 ? newValue : 2 } }
  }

  /// Retrying ends with ``SessionUploadFetcherError/retryLimitReached(underlying:)`` once the next
  /// delay would reach this (default: the service's when set, else 600 s). The name of
  /// `SessionFetcher` and `FetcherService`.
  public var maxRetryInterval: TimeInterval {
    get { state.withLock { $0.maxRetryInterval } }
    set { state.withLock { $0.maxRetryInterval = newValue > 0 ? newValue : 600 } }
  }

  /// The former name of ``maxRetryInterval``.
  @available(*, deprecated, renamed: "maxRetryInterval")
  public var maxUploadRetryInterval: TimeInterval {
    get { maxRetryInterval }
    set { maxRetryInterval = newValue }
  }

  /// A description of the upload for logs: each command fetcher's `comment` is this (or "upload")
  /// with what the command does, as the original's are: `start`, the chunk's byte range
  /// (`photo (0-74999)`), `query` or `cancel`.
  public var comment: String? {
    get { state.withLock { $0.comment } }
    set { state.withLock { $0.comment = newValue } }
  }

  /// Retries done so far.
  public var retryCount: Int { state.withLock { $0.lifecycle.retryCount } }

  /// Schemes allowed besides https for the command fetchers. Default: the service's, else none.
  public var allowedInsecureSchemes: [String] {
    get { state.withLock { $0.allowedInsecureSchemes } }
    set { state.withLock { $0.allowedInsecureSchemes = newValue } }
  }

  /// Whether commands to localhost are allowed. Default: the service's setting, else false.
  public var allowLocalhostRequest: Bool {
    get { state.withLock { $0.allowLocalhostRequest } }
    set { state.withLock { $0.allowLocalhostRequest = newValue } }
  }

  /// Upload progress over the whole upload: bytes sent now, in total (the chunk's offset included),
  /// and the upload's length (-1 when unknown).
  public var sendProgressBlock: (@Sendable (Int64, Int64, Int64) -> Void)? {
    get { state.withLock { $0.sendProgressBlock } }
    set { state.withLock { $0.sendProgressBlock = newValue } }
  }

  /// Runs for every command fetcher just before it begins (on an internal queue): a place to set a
  /// comment, headers or monitors. The command is in the request's `X-Goog-Upload-Command`.
  public var willBeginCommandFetcher: (@Sendable (SessionFetcher) -> Void)? {
    get { state.withLock { $0.willBeginCommandFetcher } }
    set { state.withLock { $0.willBeginCommandFetcher = newValue } }
  }

  /// Called after ``stopFetching()`` with the result of the `cancel` command.
  public var cancellationHandler: CancellationHandler? {
    get { state.withLock { $0.cancellationHandler } }
    set { state.withLock { $0.cancellationHandler = newValue } }
  }

  /// Whether ``stopFetching()`` calls the completion with `SessionFetcherError.cancelled`
  /// (default: the service's setting, else false).
  public var stopFetchingTriggersCompletionHandler: Bool {
    get { state.withLock { $0.stopFetchingTriggersCompletionHandler } }
    set { state.withLock { $0.stopFetchingTriggersCompletionHandler = newValue } }
  }

  /// The queue of every callback and notification. Default: the service's, else the main queue.
  public var callbackQueue: DispatchQueue {
    get { state.withLock { $0.callbackQueue } }
    set { state.withLock { $0.callbackQueue = newValue } }
  }

  // MARK: - State and results

  /// The upload URL, once the start answered it (or as given to
  /// ``init(location:uploadMIMEType:chunkSize:fetcherService:)``). Keep it to resume the upload
  /// later, from another process.
  public var uploadLocationURL: URL? { state.withLock { $0.lifecycle.location } }

  /// Whether the upload has begun and not ended (a paused upload is still fetching).
  public var isFetching: Bool { state.withLock { $0.lifecycle.isFetching } }

  /// Whether ``pauseFetching()`` paused the upload.
  public var isPaused: Bool { state.withLock { $0.lifecycle.isPaused } }

  /// The command fetcher on the wire, if any.
  public var currentCommandFetcher: SessionFetcher? { state.withLock { $0.lifecycle.currentFetcher } }

  /// The command fetcher of the running upload (the original's `activeFetcher`): the one on the
  /// wire, else, between commands (reading a chunk, waiting to retry, paused), the latest one. nil
  /// before the first command and once the upload has ended (the upload then holds no fetcher).
  public var activeFetcher: SessionFetcher? {
    state.withLock { $0.lifecycle.currentFetcher ?? $0.latestFetcher }
  }

  /// The request of the latest chunk command (`upload`, `upload, finalize` or `finalize`), with its
  /// `X-Goog-Upload-*` headers and the changes ``willBeginCommandFetcher`` made; kept after the
  /// upload ends. nil before the first chunk.
  public var lastChunkRequest: URLRequest? { state.withLock { $0.lastChunkRequest } }

  /// The response of the latest command (the final one once the upload ended).
  public var response: HTTPURLResponse? { state.withLock { $0.response } }

  /// The HTTP status of ``response``, 0 before any.
  public var statusCode: Int { response?.statusCode ?? 0 }

  /// The bytes the server is known to hold: the offset of the next chunk, and the whole length once
  /// the upload has finished.
  public var uploadedLength: Int64 { state.withLock { $0.lifecycle.offset } }
}
