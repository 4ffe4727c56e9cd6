import Foundation

// The response body of the exchange in flight: each chunk counted under the lock, then written,
// handed over or kept, and the attempts the fetcher fails itself.
extension SessionFetcher {
  func receive(data: Data, from task: (any EngineTask)?, bypassingGate: Bool = false) {
    let delivery = storage.withLock { storage in
      storage.bodyChunkArrived(data, from: task, bypassingGate: bypassingGate, at: storage.clock.now)
    }
    let handOff: ChunkHandOffAction
    switch delivery {
    case .drop, .held:
      return
    case .fail(let failure):
      endAttempt(failure)
      return
    case .deliver(let decided):
      handOff = decided
    }
    let count = Int64(data.count)
    switch handOff.target {
    case .none:
      break
    case .file(let partFile):
      if !write(data, to: partFile, from: task) { return }
    case .accumulate(let block):
      deliver(on: handOff.queue) { block(data) }
    case .stream(let consumer):
      if consumer.fetcher(self, didReceiveStreamData: data) { pauseStreamTransfer(for: consumer) }
    }
    if let received = handOff.received {
      let total = handOff.total
      deliver(on: handOff.queue) { received(count, total) }
    }
    if let download = handOff.download {
      let (total, expected) = (handOff.total, handOff.expected)
      deliver(on: handOff.queue) { download(count, total, expected) }
    }
    for monitor in allMonitors() { monitor.fetcher(self, didReceiveData: data) }
  }

  /// Creates or opens the response's part file, or empties it, after the lock that chose it (see
  /// `PartFileAction`), before any chunk of the response arrives. Returns false when that failed:
  /// the attempt fails, unless a stop or a timeout already let go of the file meanwhile.
  func preparePartFile(_ choice: PartFileAction, from task: (any EngineTask)?) -> Bool {
    guard let (partFile, error) = choice.prepare() else { return true }
    let failedToOpen: Bool
    if case .open = choice.preparation { failedToOpen = true } else { failedToOpen = false }
    let failure = failAttempt(with: partFile, from: task, error: error) { storage in
      // A file that could not be opened is as if never chosen (`open()` ended it): a kept file is
      // neither parked again nor deleted. One that could not be emptied stays the attempt's, for
      // the end of the attempt to delete. Either way the head waits for no decision.
      if failedToOpen { storage.run.partFile = nil }
      storage.lifecycle.current.responseGate = nil
    }
    if let failure { endAttempt(failure) }
    return false
  }

  /// Writes a chunk to the part file, after the lock that accounted for it. Returns false when the
  /// write failed: the attempt fails, unless a stop or a timeout already let go of the file.
  private func write(_ data: Data, to partFile: PartFile, from task: (any EngineTask)?) -> Bool {
    do {
      try partFile.write(data)
      return true
    } catch {
      if let failure = failAttempt(with: partFile, from: task, error: error) { endAttempt(failure) }
      return false
    }
  }

  /// Fails the attempt for a part file whose disk work failed, if it is still the attempt's (a
  /// stop, a timeout or another failure may have let go of it while the work ran).
  private func failAttempt(
    with partFile: PartFile, from task: (any EngineTask)?, error: any Error,
    letGo: (inout FetcherStorage) -> Void = { _ in }
  ) -> EndAttemptAction? {
    storage.withLock { storage in
      guard accepts(task, storage), storage.run.partFile === partFile else { return nil }
      if case .failed? = storage.lifecycle.current.cancelReason { return nil }
      letGo(&storage)
      return fail(&storage, with: SessionFetcherError.downloadFailed(description: String(describing: error)))
    }
  }

  /// Fails the attempt because the fetcher cannot go on with it (a download that cannot be written,
  /// a body past the in-memory limit, a continuation that does not continue), under the lock that
  /// decided it: the failure is recorded and the task let go of there, so that neither a timeout
  /// nor a later event of the task can take its place. ``endAttempt(_:)`` follows, after the lock.
  func fail(_ storage: inout FetcherStorage, with error: any Error) -> EndAttemptAction {
    storage.failExchange(with: error)
  }

  /// Ends an attempt ``fail(_:with:)`` failed: at once, as a timeout does. A test block's answer
  /// (no task) ends by itself, in `simulate`.
  func endAttempt(_ failure: EndAttemptAction) {
    guard let task = failure.task else { return }
    completeHop(error: nil)
    Self.letGo(task)
  }
}

/// An attempt the fetcher failed itself (see `FetcherStorage.failExchange(with:)`): the task it
/// let go of, if any.
struct EndAttemptAction {
  var task: (any EngineTask)?
}

/// What the fetcher does with a chunk of the response body: decided under its lock by
/// `FetcherStorage.bodyChunkArrived(_:from:bypassingGate:at:)`, performed after it by
/// `SessionFetcher.receive(data:from:bypassingGate:)`.
enum ChunkAction {
  /// Not the exchange in flight's (a task let go of, a late chunk of a paused or failed exchange),
  /// or no fetch: nothing.
  case drop
  /// Held back with the head for ``SessionFetcher/didReceiveResponseBlock``: nothing until it
  /// decides.
  case held
  /// The body passed the in-memory limit: the exchange is failed and its task taken; end the attempt.
  case fail(EndAttemptAction)
  /// Counted: hand it to its target, then to the progress blocks.
  case deliver(ChunkHandOffAction)
}

/// Where a counted chunk goes, and who is told (see ``ChunkAction/deliver(_:)``).
struct ChunkHandOffAction {
  /// Where the chunk goes once counted.
  enum Target {
    /// Kept in memory already (or a file sink with no part file): nowhere else.
    case none
    /// Written to the download's part file, on the engine's thread.
    case file(PartFile)
    /// Handed to the accumulate block, on the callback queue.
    case accumulate(@Sendable (Data?) -> Void)
    /// Handed to the stream consumer, on the engine's thread.
    case stream(any FetcherStreamConsumer)
  }

  /// The fetch's callback queue.
  var queue: DispatchQueue
  var target: Target
  /// `receivedProgressBlock`: (bytes of this chunk, total).
  var received: (@Sendable (Int64, Int64) -> Void)?
  /// `downloadProgressBlock` of a download: (bytes of this chunk, total, expected).
  var download: (@Sendable (Int64, Int64, Int64) -> Void)?
  /// The body's length so far.
  var total: Int64
  /// Its announced length (-1: unknown, or passed).
  var expected: Int64
}

extension FetcherStorage {
  /// Fails the exchange in flight because the fetcher cannot go on with it: records the failure
  /// and takes its task, so that neither a timeout nor a later event of the task can take its place.
  mutating func failExchange(with error: any Error) -> EndAttemptAction {
    EndAttemptAction(task: lifecycle.cancelTask(.failed(error)).task)
  }

  /// A chunk of the response body arrived from `task` (nil: a test block's answer) at `now`:
  /// holds it back while the head waits for a decision (unless `bypassingGate`: the decision's own
  /// replay of what was held), else counts it and says where it goes. The chunk's I/O (the part
  /// file, the consumer, the blocks) is the caller's, after the lock.
  mutating func bodyChunkArrived(
    _ data: Data, from task: (any EngineTask)?, bypassingGate: Bool, at now: Date
  ) -> ChunkAction {
    guard lifecycle.accepts(task), let plan else { return .drop }
    let exchange = lifecycle.current
    if !bypassingGate, exchange.responseGate != nil {
      exchange.responseGate?.held.append(data)
      exchange.lastActivity = now
      return .held
    }
    let run = lifecycle.run
    let sink: ResponseSink
    let total: Int64
    let expected: Int64
    switch exchange.chunkReceived(data, at: now, inMemoryLimit: plan.maximumInMemoryBodyLength) {
    case .drop:
      // Bytes still arriving from a task cancelled for a pause come again with the continuation;
      // the rest of a test block's answer after the fetcher failed it (past the in-memory limit,
      // or an unwritable download) is dropped. A real task is let go of at once (`failExchange`).
      return .drop
    case .tooLarge(let limit):
      run.countReceived(data.count, at: now)
      return .fail(failExchange(with: SessionFetcherError.responseTooLarge(limit: limit)))
    case .deliver(let chunkSink, let chunkTotal, let chunkExpected):
      (sink, total, expected) = (chunkSink, chunkTotal, chunkExpected)
    }
    run.countReceived(data.count, at: now)
    let count = Int64(data.count)
    var target = ChunkHandOffAction.Target.none
    var download: (@Sendable (Int64, Int64, Int64) -> Void)?
    switch sink {
    case .memory, .redirect:
      break
    case .accumulate:
      run.accumulatedSinceResponse = true
      if let block = config.accumulateDataBlock { target = .accumulate(block) }
    case .file:
      // Written after the lock, on the engine's thread: the engine hands one exchange's chunks
      // over one at a time, so they reach the file in order.
      if let partFile = run.partFile { target = .file(partFile) }
      download = config.downloadProgressBlock
      if run.stream.windowLength != nil { run.stream.deliveredBytes += count }
    case .stream:
      run.stream.deliveredBytes += count
      if let consumer = run.stream.consumer?.consumer { target = .stream(consumer) }
    }
    let progress = TransferProgress(
      direction: .download, completedBytes: total, expectedBytes: expected >= 0 ? expected : nil)
    progress.publish(to: config.progressContinuations)
    return .deliver(
      ChunkHandOffAction(
        queue: plan.callbackQueue, target: target, received: config.receivedProgressBlock,
        download: download, total: total, expected: expected))
  }
}
