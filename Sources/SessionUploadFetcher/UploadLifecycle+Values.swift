import Foundation
import SessionFetcher

// The values the upload lifecycle's states carry, its events take and its actions give.
extension UploadLifecycle {
  /// What is known of an upload that has begun and not ended.
  package struct Upload: Sendable, Equatable {
    /// The upload URL, once known (given, or answered by `start`).
    package var location: URL?
    package var planner: ChunkPlanner
    /// The chunk size as given, planned again once `start` answers the server's granularity.
    package var requestedChunkSize: Int64
    /// The source is a file sent by URL (see ``ChunkPlanner``).
    package var wholeFileByURL: Bool
    /// The bytes the server is known to hold: where the next chunk starts.
    package var offset: Int64 = 0
    /// The end of the furthest chunk sent, nil before one is sent: with an unknown length, the most
    /// a query may answer the server holds.
    package var sentEnd: Int64?
    /// Retry delays that ended.
    package var retryCount = 0
    /// The latest retry delay, 0 before the first (the backoff has not begun).
    package var lastRetryInterval: TimeInterval = 0
    /// Chunk 4xx answers in a row that a query resynchronized, without a chunk succeeding since.
    package var resyncsWithoutProgress = 0
    /// The highest upload total reported to the send progress block.
    package var progressReported: Int64 = 0
    /// The token of the latest step.
    package var latestToken = 0

    package init(location: URL?, planner: ChunkPlanner, requestedChunkSize: Int64, wholeFileByURL: Bool) {
      self.location = location
      self.planner = planner
      self.requestedChunkSize = requestedChunkSize
      self.wholeFileByURL = wholeFileByURL
    }

    mutating func nextToken() -> Int {
      latestToken += 1
      return latestToken
    }

    /// The command that goes on after a retry delay, a resume or a begin.
    func restartPlan() -> CommandPlan {
      location.map { .query($0) } ?? .start(totalLength: planner.totalLength)
    }

    var ended: Ended { Ended(location: location, offset: offset, retryCount: retryCount) }
  }

  /// What a running upload is doing.
  package enum Step: Sendable, Equatable {
    /// The fetcher of a command is being made (see ``UploadLifecycle/commandMade(_:token:)``).
    case making(CommandPlan, token: Int)
    /// A command is on the wire.
    case sending(Command)
    /// A chunk is being read from the source.
    case readingChunk(ChunkRead)
    /// The retry block is deciding whether to retry a transient failure.
    case decidingRetry(interval: TimeInterval, token: Int)
  }

  /// A command to send.
  package enum CommandPlan: Sendable, Equatable {
    /// `start` to the request's URL, declaring the upload's length (nil: unknown).
    case start(totalLength: Int64?)
    /// `query` to the upload URL.
    case query(URL)
    /// The chunk of `length` bytes at `offset`, sent to the upload URL as `command`.
    case chunk(URL, offset: Int64, length: Int64, command: UploadCommand)

    package var command: UploadCommand {
      switch self {
      case .start: return .start
      case .query: return .query
      case .chunk(_, _, _, let command): return command
      }
    }
  }

  /// A command on the wire: what it sends and the fetcher sending it (compared by identity).
  package struct Command: Sendable, Equatable {
    package var plan: CommandPlan
    package var fetcher: SessionFetcher

    package init(plan: CommandPlan, fetcher: SessionFetcher) {
      self.plan = plan
      self.fetcher = fetcher
    }

    package static func == (lhs: Command, rhs: Command) -> Bool {
      lhs.plan == rhs.plan && lhs.fetcher === rhs.fetcher
    }
  }

  /// A chunk to read at `offset`: `length` bytes, the last one when `isFinal` (with an unknown
  /// `totalLength`, a read shorter than asked also ends the upload).
  package struct ChunkRead: Sendable, Equatable {
    package var token: Int
    package var offset: Int64
    package var length: Int64
    package var isFinal: Bool
    package var totalLength: Int64?

    package init(token: Int, offset: Int64, length: Int64, isFinal: Bool, totalLength: Int64?) {
      self.token = token
      self.offset = offset
      self.length = length
      self.isFinal = isFinal
      self.totalLength = totalLength
    }
  }

  /// What a chunk read gave.
  package enum ChunkReadResult: Sendable, Equatable {
    /// `length` bytes; `reportedFullLength` when the provider told the upload's full length.
    case read(length: Int64, reportedFullLength: Int64?)
    /// The source failed (its error ends the upload).
    case failed
  }

  /// A pending retry delay. `delay` is nil until armed: the fetcher arms it after posting
  /// `sessionFetcherRetryDelayStarted`, so that a short delay cannot end before that is posted.
  package struct RetryWait: Sendable, Equatable {
    package var interval: TimeInterval
    package var token: Int
    package var delay: RetryDelay?
  }

  /// What the upload fetcher still answers once the upload ended.
  package struct Ended: Sendable, Equatable {
    package var location: URL?
    package var offset: Int64
    package var retryCount: Int

    package init(location: URL?, offset: Int64, retryCount: Int) {
      self.location = location
      self.offset = offset
      self.retryCount = retryCount
    }
  }

  /// How the source measured when the upload began.
  package enum SourceLength: Sendable, Equatable {
    /// No source was set.
    case missing
    /// Measuring failed (its error ends the upload).
    case unmeasurable
    /// The length, nil when unknown.
    case measured(Int64?)
  }

  /// A command's answer: a 2xx with its response, or the command fetcher's error.
  ///
  /// `@unchecked Sendable`: the `HTTPURLResponse` is immutable once made (every property
  /// read-only), so sharing it between threads is safe; only its `Sendable` conformance differs
  /// between Apple's Foundation and swift-corelibs-foundation. The error is `any Error`, which is
  /// `Sendable`.
  package enum Answer: @unchecked Sendable {
    case success(HTTPURLResponse?)
    case failure(any Error)
  }

  /// The upload's retry settings when a transient failure comes.
  package struct RetrySettings: Sendable, Equatable {
    package var isEnabled: Bool
    package var minInterval: TimeInterval
    package var factor: Double
    package var maxInterval: TimeInterval
    package var hasRetryBlock: Bool

    package init(
      isEnabled: Bool, minInterval: TimeInterval, factor: Double, maxInterval: TimeInterval,
      hasRetryBlock: Bool
    ) {
      self.isEnabled = isEnabled
      self.minInterval = minInterval
      self.factor = factor
      self.maxInterval = maxInterval
      self.hasRetryBlock = hasRetryBlock
    }
  }

  /// A progress report for the send progress block: `sent` bytes since the previous report,
  /// `total` in all, of `expected` (-1 when unknown).
  package struct Progress: Sendable, Equatable {
    package var sent: Int64
    package var total: Int64
    package var expected: Int64

    package init(sent: Int64, total: Int64, expected: Int64) {
      self.sent = sent
      self.total = total
      self.expected = expected
    }
  }

  /// How the upload ended.
  package enum Outcome: Sendable, Equatable {
    /// Complete: the final answer's body.
    case completed
    /// The command failed: its error and body.
    case commandFailed
    /// The server broke the protocol: status 501 with the answer's body.
    case protocolError
    /// A byte count in an answer cannot be acted on (see ``UploadNumber``).
    case invalidProtocolValue(header: String, value: String)
    /// The upload URL given or answered is not one commands may go to.
    case invalidUploadLocation(URL)
    /// The next retry delay would reach the limit: the command's error, without a body.
    case retryLimitReached
    /// The source could not be measured or read: its error.
    case sourceFailed
    /// No source was set.
    case noSource
  }

  /// What the fetcher abandons when it pauses or stops.
  package struct Abandoned: Sendable, Equatable {
    /// The command on the wire, to stop.
    package var command: Command?
    /// The armed retry delay, to cancel (then post `sessionFetcherRetryDelayStopped`).
    package var retryDelay: RetryDelay?

    package init(command: Command?, retryDelay: RetryDelay?) {
      self.command = command
      self.retryDelay = retryDelay
    }
  }

  package enum BeginAction: Sendable, Equatable {
    /// The upload begun: perform this.
    case proceed(Action)
    /// ``stopFetching()`` came first: nothing starts.
    case stoppedBeforeBegin
    /// An upload fetcher begins once.
    case alreadyBegun
  }

  /// What the upload fetcher does after an event, outside its lock.
  package enum Action: Sendable, Equatable {
    case none
    /// Make the command's fetcher (with the chunk just read, for a chunk), then tell
    /// ``UploadLifecycle/commandMade(_:token:)``.
    case send(CommandPlan, token: Int)
    /// Report `progress` (if any), post `sessionUploadFetcherLocationObtained` if
    /// `announcingLocation`, then read the chunk.
    case read(ChunkRead, progress: Progress?, announcingLocation: Bool)
    /// Report `progress` (if any), then deliver the outcome.
    case finish(Outcome, progress: Progress?)
    /// Ask the retry block, with the library's `suggestion` (true for a transient failure), then
    /// tell ``UploadLifecycle/retryDecided(token:shouldRetry:)``.
    case askRetryBlock(token: Int, suggestion: Bool)
    /// Post `sessionFetcherRetryDelayStarted` (and, if `isFirst`,
    /// `sessionUploadFetcherInitialBackoffStarted`), arm a delay of `interval`, then tell
    /// ``UploadLifecycle/retryWaitArmed(token:delay:)``.
    case startRetryWait(interval: TimeInterval, token: Int, isFirst: Bool)
    /// The wait armed was left before it was armed (paused or stopped): cancel it and post
    /// `sessionFetcherRetryDelayStopped`, which the pause or stop could not.
    case abandonRetryWait(RetryDelay)
    /// Post `sessionFetcherRetryDelayStopped`, then send.
    case endRetryWait(then: CommandPlan, token: Int)
    /// Stop the command, cancel the delay and post `sessionFetcherRetryDelayStopped`.
    case pause(Abandoned)
    /// As ``pause(_:)``, then send `cancel` to the upload URL if known.
    case stop(Abandoned, cancelAt: URL?)
  }
}
