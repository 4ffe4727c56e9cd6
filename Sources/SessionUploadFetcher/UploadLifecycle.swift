import Foundation
import SessionFetcher

/// Chunk 4xx answers resynchronized by a query in a row, without a chunk succeeding, before the
/// chunk's error is reported (a server that keeps refusing would otherwise loop forever).
private let maximumResyncsWithoutProgress = 3

/// The life of one upload as an explicit state machine: no I/O, only decisions.
///
/// ```
/// idle ──begin──▶ running ──transient failure──▶ waitingToRetry ──retryDelayEnded──▶ running
///                 │    ▲                               │
///           pause ▼    │ resume                        │ pause
///                 paused ◀─────────────────────────────┘
/// running ──final answer or failure──▶ finished      idle ──begin without a usable source──▶ finished
/// any state but finished ──stop──▶ stopped
/// ```
///
/// The upload fetcher holds one of these under its lock; each method takes an event and returns
/// the ``Action`` the fetcher performs after the lock (make and begin a command fetcher, read a
/// chunk, post notifications, arm or cancel a retry delay, deliver the completion). While running,
/// the upload is at one ``Step``; every step has a token, and events of a step the upload has left
/// (a command fetcher abandoned by a pause, a chunk read that ends after a stop) change nothing.
/// An event that cannot happen in the current state is a precondition failure naming the state.
///
/// A retry wait's delay is armed after `sessionFetcherRetryDelayStarted` is posted, so that a short
/// delay cannot end first. A pause or stop before it is armed posts no
/// `sessionFetcherRetryDelayStopped`: the side arming it does (``Action/abandonRetryWait(_:)``),
/// after its Started, so every Started has one Stopped, in order.
package struct UploadLifecycle: Sendable, Equatable {
  package enum State: Sendable, Equatable {
    /// Created, not begun; `location` is the upload URL the upload was created with, if any.
    case idle(location: URL?)
    /// Begun: at `Step`.
    case running(Upload, Step)
    /// Waiting out a retry delay before a `query` (or a `start` again, before the upload URL is
    /// known).
    case waitingToRetry(Upload, RetryWait)
    /// Paused by the caller; resuming sends a `query` (or a `start`). `interruptedRetryDecision` is
    /// the token of the retry block's decision the pause interrupted: a refusal still ends the upload.
    case paused(Upload, interruptedRetryDecision: Int?)
    /// The completion is delivered or queued.
    case finished(Ended)
    /// Stopped by the caller.
    case stopped(Ended)
  }

  package private(set) var state: State

  package init(location: URL?) {
    state = .idle(location: location)
  }

  // MARK: - Queries

  /// Whether the upload has begun and not ended (a paused upload is still fetching).
  package var isFetching: Bool {
    switch state {
    case .running, .waitingToRetry, .paused: return true
    case .idle, .finished, .stopped: return false
    }
  }

  package var isIdle: Bool {
    switch state {
    case .idle: return true
    case .running, .waitingToRetry, .paused, .finished, .stopped: return false
    }
  }

  package var isPaused: Bool {
    switch state {
    case .paused: return true
    case .idle, .running, .waitingToRetry, .finished, .stopped: return false
    }
  }

  package var isStopped: Bool {
    switch state {
    case .stopped: return true
    case .idle, .running, .waitingToRetry, .paused, .finished: return false
    }
  }

  /// The upload URL, once known.
  package var location: URL? {
    switch state {
    case .idle(let location): return location
    case .running(let upload, _), .waitingToRetry(let upload, _), .paused(let upload, _):
      return upload.location
    case .finished(let ended), .stopped(let ended): return ended.location
    }
  }

  /// The bytes the server is known to hold.
  package var offset: Int64 {
    switch state {
    case .idle: return 0
    case .running(let upload, _), .waitingToRetry(let upload, _), .paused(let upload, _): return upload.offset
    case .finished(let ended), .stopped(let ended): return ended.offset
    }
  }

  package var retryCount: Int {
    switch state {
    case .idle: return 0
    case .running(let upload, _), .waitingToRetry(let upload, _), .paused(let upload, _):
      return upload.retryCount
    case .finished(let ended), .stopped(let ended): return ended.retryCount
    }
  }

  /// The upload's length, nil while unknown (and before the upload begins).
  package var totalLength: Int64? {
    switch state {
    case .running(let upload, _), .waitingToRetry(let upload, _), .paused(let upload, _):
      return upload.planner.totalLength
    case .idle, .finished, .stopped: return nil
    }
  }

  /// The command fetcher on the wire.
  package var currentFetcher: SessionFetcher? {
    switch state {
    case .running(_, .sending(let command)): return command.fetcher
    case .running(_, .making), .running(_, .readingChunk), .running(_, .decidingRetry): return nil
    case .idle, .waitingToRetry, .paused, .finished, .stopped: return nil
    }
  }

  // MARK: - Begin

  /// `beginFetch`: plans the chunks and sends `start` (or `query`, when the upload URL was given).
  package mutating func begin(source: SourceLength, requestedChunkSize: Int64, wholeFileByURL: Bool)
    -> BeginAction
  {
    let location: URL?
    switch state {
    case .idle(let given):
      location = given
    case .stopped:
      return .stoppedBeforeBegin
    case .running, .waitingToRetry, .paused, .finished:
      return .alreadyBegun
    }
    let ended = Ended(location: location, offset: 0, retryCount: 0)
    let totalLength: Int64?
    switch source {
    case .missing:
      state = .finished(ended)
      return .proceed(.finish(.noSource, progress: nil))
    case .unmeasurable:
      state = .finished(ended)
      return .proceed(.finish(.sourceFailed, progress: nil))
    case .measured(let length):
      totalLength = length
    }
    if let location, !UploadLocation.isAcceptable(location) {
      state = .finished(ended)
      return .proceed(.finish(.invalidUploadLocation(location), progress: nil))
    }
    var upload = Upload(
      location: location,
      planner: ChunkPlanner(
        requestedChunkSize: requestedChunkSize, totalLength: totalLength, granularity: nil,
        wholeFileByURL: wholeFileByURL),
      requestedChunkSize: requestedChunkSize, wholeFileByURL: wholeFileByURL)
    return .proceed(make(upload.restartPlan(), in: &upload))
  }

  /// Moves to making `plan`'s fetcher, as a new step.
  private mutating func make(_ plan: CommandPlan, in upload: inout Upload) -> Action {
    let token = upload.nextToken()
    state = .running(upload, .making(plan, token: token))
    return .send(plan, token: token)
  }

  /// Moves to reading the chunk at the upload's offset, as a new step.
  private mutating func readNextChunk(
    in upload: inout Upload, progress: Progress?, announcingLocation: Bool
  ) -> Action {
    let chunk = upload.planner.chunk(at: upload.offset)
    let read = ChunkRead(
      token: upload.nextToken(), offset: upload.offset, length: chunk.length, isFinal: chunk.isFinal,
      totalLength: upload.planner.totalLength)
    state = .running(upload, .readingChunk(read))
    return .read(read, progress: progress, announcingLocation: announcingLocation)
  }

  private mutating func finish(_ upload: Upload, _ outcome: Outcome, progress: Progress? = nil) -> Action {
    state = .finished(upload.ended)
    return .finish(outcome, progress: progress)
  }

  // MARK: - Commands

  /// The fetcher of the command of step `token` is made. True: begin it (it is the command on the
  /// wire); false: the upload left that step (paused or stopped), drop the fetcher unbegun.
  package mutating func commandMade(_ fetcher: SessionFetcher, token: Int) -> Bool {
    switch state {
    case .running(let upload, .making(let plan, let current)):
      checkIssued(token, by: upload, event: "commandMade")
      guard token == current else { return false }
      state = .running(upload, .sending(Command(plan: plan, fetcher: fetcher)))
      return true
    case .running(let upload, .sending(let command)):
      checkIssued(token, by: upload, event: "commandMade")
      precondition(
        command.fetcher !== fetcher, "UploadLifecycle: commandMade twice for one command in \(state)")
      return false
    case .running(let upload, .readingChunk), .running(let upload, .decidingRetry),
      .waitingToRetry(let upload, _), .paused(let upload, _):
      checkIssued(token, by: upload, event: "commandMade")
      return false
    case .finished, .stopped:
      return false
    case .idle:
      impossible("commandMade")
    }
  }

  /// The command `fetcher` sent ended with `answer`. `reportsProgress`: a send progress block is
  /// set (a chunk's answer reports what the server holds as sent).
  package mutating func commandEnded(
    _ fetcher: SessionFetcher, answer: Answer, reportsProgress: Bool, retrying: RetrySettings
  ) -> Action {
    let command: Command
    var upload: Upload
    switch state {
    case .running(let current, .sending(let sent)) where sent.fetcher === fetcher:
      command = sent
      upload = current
    case .running, .waitingToRetry, .paused, .finished, .stopped:
      return .none
    case .idle:
      impossible("commandEnded")
    }
    switch answer {
    case .failure(let error):
      return commandFailed(command.plan.command, error: error, upload: &upload, retrying: retrying)
    case .success(let response):
      switch command.plan {
      case .start:
        let decision = UploadResponse.start(response)
        if case .invalidNumber(let header, let value) = decision {
          return finish(upload, .invalidProtocolValue(header: header, value: value))
        }
        guard case .uploadFrom(_, let location?, let granularity) = decision else {
          return finish(upload, .protocolError)
        }
        guard UploadLocation.isAcceptable(location) else {
          return finish(upload, .invalidUploadLocation(location))
        }
        upload.location = location
        upload.offset = 0
        upload.planner = ChunkPlanner(
          requestedChunkSize: upload.requestedChunkSize, totalLength: upload.planner.totalLength,
          granularity: granularity, wholeFileByURL: upload.wholeFileByURL)
        return readNextChunk(in: &upload, progress: nil, announcingLocation: true)
      case .chunk(_, let offset, let length, let sent):
        // What the server holds counts as sent even when the transport skipped its last progress
        // callback for the chunk.
        switch UploadResponse.chunk(response, offset: offset, length: length, wasFinal: sent != .upload) {
        case .done:
          let progress = reportsProgress ? report(total: offset + length, in: &upload) : nil
          upload.offset = offset + length
          return finish(upload, .completed, progress: progress)
        case .uploadFrom(let next, _, _):
          let progress = reportsProgress ? report(total: next, in: &upload) : nil
          upload.offset = next
          upload.resyncsWithoutProgress = 0
          return readNextChunk(in: &upload, progress: progress, announcingLocation: false)
        case .invalidNumber(let header, let value):
          return finish(upload, .invalidProtocolValue(header: header, value: value))
        case .protocolError, .query, .retry, .fail:
          return finish(upload, .protocolError)
        }
      case .query:
        // The server stands at least where it last said, and holds at most the upload's bytes.
        let ceiling = upload.planner.totalLength ?? upload.sentEnd
        switch UploadResponse.query(response, acknowledged: upload.offset, ceiling: ceiling) {
        case .done:
          // Final: the server holds every byte, as far as the upload knows how many there are.
          upload.offset = upload.planner.totalLength ?? max(upload.offset, upload.sentEnd ?? 0)
          return finish(upload, .completed)
        case .uploadFrom(let next, _, _):
          upload.offset = next
          return readNextChunk(in: &upload, progress: nil, announcingLocation: false)
        case .invalidNumber(let header, let value):
          return finish(upload, .invalidProtocolValue(header: header, value: value))
        case .protocolError, .query, .retry, .fail:
          return finish(upload, .protocolError)
        }
      }
    }
  }

  private mutating func commandFailed(
    _ command: UploadCommand, error: any Error, upload: inout Upload, retrying: RetrySettings
  ) -> Action {
    let status = (error as? SessionFetcherError)?.statusCode
    switch UploadResponse.failure(of: command, statusCode: status, error: error) {
    case .query:
      upload.resyncsWithoutProgress += 1
      guard upload.resyncsWithoutProgress <= maximumResyncsWithoutProgress, let location = upload.location
      else { return finish(upload, .commandFailed) }
      return make(.query(location), in: &upload)
    case .retry:
      // The next backoff delay, then a query (or a start again, before the upload URL is known),
      // unless retrying is off, the retry block refuses, or the delay reaches the limit.
      guard retrying.isEnabled else { return finish(upload, .commandFailed) }
      let interval =
        upload.lastRetryInterval == 0 ? retrying.minInterval : upload.lastRetryInterval * retrying.factor
      guard interval < retrying.maxInterval else { return finish(upload, .retryLimitReached) }
      guard retrying.hasRetryBlock else { return waitToRetry(interval, upload: &upload) }
      let token = upload.nextToken()
      state = .running(upload, .decidingRetry(interval: interval, token: token))
      return .askRetryBlock(token: token, suggestion: true)
    case .fail where retrying.isEnabled && retrying.hasRetryBlock:
      // The original asks its retry block about every failure (being offline, a 404, …),
      // suggesting no retry for these; the block may still retry.
      let interval =
        upload.lastRetryInterval == 0 ? retrying.minInterval : upload.lastRetryInterval * retrying.factor
      guard interval < retrying.maxInterval else { return finish(upload, .commandFailed) }
      let token = upload.nextToken()
      state = .running(upload, .decidingRetry(interval: interval, token: token))
      return .askRetryBlock(token: token, suggestion: false)
    case .uploadFrom, .done, .protocolError, .invalidNumber, .fail:
      return finish(upload, .commandFailed)
    }
  }

  // MARK: - Chunks

  /// The chunk read of step `token` ended.
  package mutating func chunkRead(token: Int, result: ChunkReadResult) -> Action {
    let read: ChunkRead
    var upload: Upload
    switch state {
    case .running(let current, .readingChunk(let reading)):
      checkIssued(token, by: current, event: "chunkRead")
      guard reading.token == token else { return .none }
      read = reading
      upload = current
    case .running(let current, .making), .running(let current, .sending),
      .running(let current, .decidingRetry), .waitingToRetry(let current, _), .paused(let current, _):
      checkIssued(token, by: current, event: "chunkRead")
      return .none
    case .finished, .stopped:
      return .none
    case .idle:
      impossible("chunkRead")
    }
    guard let location = upload.location else {
      preconditionFailure("UploadLifecycle: a chunk was read before the upload URL was known in \(state)")
    }
    guard case .read(let length, let reportedFullLength) = result else {
      return finish(upload, .sourceFailed)
    }
    var isFinal = read.isFinal || (read.totalLength == nil && length < read.length)
    if let fullLength = reportedFullLength {
      // The provider told the length at last: plan the rest of the upload to it.
      if upload.planner.totalLength == nil { upload.planner.totalLength = fullLength }
      isFinal = read.offset + length >= fullLength
    }
    let command = ChunkPlanner.command(length: length, isFinal: isFinal)
    upload.sentEnd = max(upload.sentEnd ?? 0, read.offset + length)
    return make(.chunk(location, offset: read.offset, length: length, command: command), in: &upload)
  }

  /// A command fetcher reported `total` bytes of the upload sent: the report to deliver, if that
  /// is more than reported so far (totals only grow: a chunk sent again does not move them back).
  package mutating func progressSent(total: Int64) -> Progress? {
    switch state {
    case .running(var upload, let step):
      let progress = report(total: total, in: &upload)
      state = .running(upload, step)
      return progress
    case .waitingToRetry, .paused, .finished, .stopped:
      return nil
    case .idle:
      impossible("progressSent")
    }
  }

  private func report(total: Int64, in upload: inout Upload) -> Progress? {
    guard total > upload.progressReported else { return nil }
    let sent = total - upload.progressReported
    upload.progressReported = total
    return Progress(sent: sent, total: total, expected: upload.planner.totalLength ?? -1)
  }

  // MARK: - Retries

  /// The retry block decided on the failure of step `token`.
  package mutating func retryDecided(token: Int, shouldRetry: Bool) -> Action {
    switch state {
    case .running(var upload, .decidingRetry(let interval, let current)):
      checkIssued(token, by: upload, event: "retryDecided")
      guard token == current else { return .none }
      return shouldRetry ? waitToRetry(interval, upload: &upload) : finish(upload, .commandFailed)
    case .paused(let upload, let interrupted):
      checkIssued(token, by: upload, event: "retryDecided")
      // A pause does not undo the failure: refused, the upload ends with it.
      guard token == interrupted, !shouldRetry else { return .none }
      return finish(upload, .commandFailed)
    case .running(let upload, .making), .running(let upload, .sending), .running(let upload, .readingChunk),
      .waitingToRetry(let upload, _):
      checkIssued(token, by: upload, event: "retryDecided")
      return .none
    case .finished, .stopped:
      return .none
    case .idle:
      impossible("retryDecided")
    }
  }

  private mutating func waitToRetry(_ interval: TimeInterval, upload: inout Upload) -> Action {
    let isFirst = upload.lastRetryInterval == 0
    upload.lastRetryInterval = interval
    let token = upload.nextToken()
    state = .waitingToRetry(upload, RetryWait(interval: interval, token: token, delay: nil))
    return .startRetryWait(interval: interval, token: token, isFirst: isFirst)
  }

  /// The delay of the wait of step `token` is armed (after its start was posted). Kept while the
  /// upload still waits in it; else let go of at once.
  package mutating func retryWaitArmed(token: Int, delay: RetryDelay) -> Action {
    switch state {
    case .waitingToRetry(let upload, var wait) where wait.token == token:
      precondition(wait.delay == nil, "UploadLifecycle: retryWaitArmed twice in \(state)")
      wait.delay = delay
      state = .waitingToRetry(upload, wait)
      return .none
    case .running(let upload, _), .waitingToRetry(let upload, _), .paused(let upload, _):
      checkIssued(token, by: upload, event: "retryWaitArmed")
      return .abandonRetryWait(delay)
    case .finished, .stopped:
      return .abandonRetryWait(delay)
    case .idle:
      impossible("retryWaitArmed")
    }
  }

  /// The delay of the wait of step `token` ended: the upload goes on.
  package mutating func retryDelayEnded(token: Int) -> Action {
    switch state {
    case .waitingToRetry(var upload, let wait) where wait.token == token:
      precondition(
        wait.delay != nil, "UploadLifecycle: retryDelayEnded before the delay was armed in \(state)")
      upload.retryCount += 1
      let plan = upload.restartPlan()
      let next = upload.nextToken()
      state = .running(upload, .making(plan, token: next))
      return .endRetryWait(then: plan, token: next)
    case .running(let upload, _), .waitingToRetry(let upload, _), .paused(let upload, _):
      checkIssued(token, by: upload, event: "retryDelayEnded")
      return .none
    case .finished, .stopped:
      return .none
    case .idle:
      impossible("retryDelayEnded")
    }
  }

  // MARK: - Pause, resume, stop

  /// `pauseFetching()`: the command on the wire and a pending retry delay are abandoned.
  package mutating func pause() -> Action {
    switch state {
    case .running(var upload, let step):
      let abandoned: Abandoned
      var interrupted: Int?
      switch step {
      case .sending(let command): abandoned = Abandoned(command: command, retryDelay: nil)
      case .decidingRetry(_, let token):
        abandoned = Abandoned(command: nil, retryDelay: nil)
        interrupted = token
      case .making, .readingChunk: abandoned = Abandoned(command: nil, retryDelay: nil)
      }
      _ = upload.nextToken()
      state = .paused(upload, interruptedRetryDecision: interrupted)
      return .pause(abandoned)
    case .waitingToRetry(var upload, let wait):
      _ = upload.nextToken()
      state = .paused(upload, interruptedRetryDecision: nil)
      return .pause(Abandoned(command: nil, retryDelay: wait.delay))
    case .idle, .paused, .finished, .stopped:
      return .none
    }
  }

  /// `resumeFetching()`: a paused upload goes on with a `query` (or a `start`).
  package mutating func resume() -> Action {
    switch state {
    case .paused(var upload, _):
      return make(upload.restartPlan(), in: &upload)
    case .idle, .running, .waitingToRetry, .finished, .stopped:
      return .none
    }
  }

  /// `stopFetching()`: the command on the wire and a pending retry delay are abandoned, and the
  /// server is told (`cancel`) when the upload URL is known.
  package mutating func stop() -> Action {
    switch state {
    case .idle(let location):
      // Remembered, so that a begin behind it starts nothing.
      state = .stopped(Ended(location: location, offset: 0, retryCount: 0))
      return .none
    case .running(let upload, let step):
      let command: Command?
      switch step {
      case .sending(let sent): command = sent
      case .making, .readingChunk, .decidingRetry: command = nil
      }
      state = .stopped(upload.ended)
      return .stop(Abandoned(command: command, retryDelay: nil), cancelAt: upload.location)
    case .waitingToRetry(let upload, let wait):
      state = .stopped(upload.ended)
      return .stop(Abandoned(command: nil, retryDelay: wait.delay), cancelAt: upload.location)
    case .paused(let upload, _):
      state = .stopped(upload.ended)
      return .stop(Abandoned(command: nil, retryDelay: nil), cancelAt: upload.location)
    case .finished, .stopped:
      return .none
    }
  }

  // MARK: - Impossible events

  /// Tokens come only from the steps this machine issued.
  private func checkIssued(_ token: Int, by upload: Upload, event: String) {
    precondition(
      token > 0 && token <= upload.latestToken,
      "UploadLifecycle: \(event) for step \(token), never issued, in \(state)")
  }

  private func impossible(_ event: String) -> Never {
    preconditionFailure("UploadLifecycle: \(event) cannot happen in \(state)")
  }
}
