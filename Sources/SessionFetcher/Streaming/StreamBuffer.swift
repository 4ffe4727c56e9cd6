import Foundation

/// The buffer between a streamed fetch and the one task that consumes it: chunks in arrival order,
/// the response head, the ending, and the backpressure decisions.
///
/// The fetcher fills it from the session's delegate queue; the consumer drains it with `next()`.
/// It never calls user code. `@unchecked Sendable`: all mutable state is in `state`, a `Locked`.
final class StreamBuffer: FetcherStreamConsumer, @unchecked Sendable {
  private struct State {
    var chunks: [Data] = []
    var firstChunk = 0
    /// Where chunks are kept instead of `chunks` when the engine wants them copied (see
    /// ``ByteRing``), from the response's head on.
    var ring: ByteRing?
    var bufferedBytes = 0
    var head: URLResponse?
    var headWaiter: CheckedContinuation<URLResponse, any Error>?
    var chunkWaiter: CheckedContinuation<Data?, any Error>?
    /// How the fetch ended: nil while it runs.
    var ending: Result<Void, any Error>?
    var isErrorDelivered = false
    var isPauseRequested = false
    var isConsumerGone = false

    /// Whether a chunk waits for the consumer.
    var hasChunk: Bool { firstChunk < chunks.count || (ring?.count ?? 0) > 0 }

    /// Keeps `data` for the consumer.
    mutating func store(_ data: Data) {
      if let ring { ring.append(data) } else { chunks.append(data) }
      bufferedBytes += data.count
    }
  }

  let fetcher: SessionFetcher
  let highWaterMark: Int
  let lowWaterMark: Int
  /// The fetcher's ``SessionFetcher/maximumLineLength`` and ``SessionFetcher/maximumEventLength``
  /// when the stream was made (a fetch whose limits are not positive fails at begin).
  let maximumLineLength: Int
  let maximumEventLength: Int
  private let state = Locked(State())

  /// The most a chunk taken from the ring holds.
  static let ringChunkLength = 64 * 1024

  init(fetcher: SessionFetcher, highWaterMark: Int, lowWaterMark: Int) {
    self.fetcher = fetcher
    self.highWaterMark = max(1, highWaterMark)
    self.lowWaterMark = min(max(0, lowWaterMark), self.highWaterMark)
    maximumLineLength = fetcher.maximumLineLength
    maximumEventLength = fetcher.maximumEventLength
  }

  deinit {
    // Nobody can read the stream any more.
    fetcher.stopFetching()
  }

  /// Bytes buffered and not yet taken by the consumer.
  var bufferedBytes: Int { state.withLock { $0.bufferedBytes } }

  // MARK: - Producer (the fetcher)

  func fetcher(_ fetcher: SessionFetcher, didReceiveStreamResponse response: URLResponse) {
    // Before the first chunk: where the engine asks for it, chunks are kept in a ring from now on
    // and the consumer takes new chunks of at most `ringChunkLength` bytes (see `ByteRing`).
    let copiesChunks = fetcher.streamBuffersCopyChunks
    let waiter = state.withLock { state -> CheckedContinuation<URLResponse, any Error>? in
      guard state.head == nil else { return nil }
      if copiesChunks, state.ring == nil, !state.hasChunk { state.ring = ByteRing() }
      state.head = response
      defer { state.headWaiter = nil }
      return state.headWaiter
    }
    waiter?.resume(returning: response)
  }

  func fetcher(_ fetcher: SessionFetcher, didReceiveStreamData data: Data) -> Bool {
    let (waiter, pause) = state.withLock { state -> (CheckedContinuation<Data?, any Error>?, Bool) in
      guard !state.isConsumerGone, state.ending == nil else { return (nil, false) }
      if let waiter = state.chunkWaiter {
        state.chunkWaiter = nil
        return (waiter, false)
      }
      state.store(data)
      guard state.bufferedBytes > highWaterMark, !state.isPauseRequested else { return (nil, false) }
      state.isPauseRequested = true
      return (nil, true)
    }
    waiter?.resume(returning: data)
    return pause
  }

  var wantsTransferPaused: Bool { state.withLock { $0.isPauseRequested && !$0.isConsumerGone } }

  func fetcherShouldRequestNextWindow(_ fetcher: SessionFetcher) -> Bool {
    state.withLock { state in
      guard !state.isConsumerGone, state.ending == nil else { return false }
      // A pause already requested is resumed by the consumer's next drain (`resumeTransferIfDrained`).
      if state.bufferedBytes <= lowWaterMark, !state.isPauseRequested { return true }
      state.isPauseRequested = true
      return false
    }
  }

  /// The fetch's completion: success (`data` is a body that never went through the stream, such as
  /// an ETag-cache answer or a stub) or the error.
  func fetchDidComplete(data: Data?, error: (any Error)?) {
    let response = fetcher.response
    enum Wake {
      case none
      case chunk(CheckedContinuation<Data?, any Error>, Result<Data?, any Error>)
    }
    let (headWaiter, headResult, wake) = state.withLock {
      state -> (CheckedContinuation<URLResponse, any Error>?, Result<URLResponse, any Error>?, Wake) in
      guard state.ending == nil else { return (nil, nil, .none) }
      if let error {
        state.ending = .failure(error)
      } else {
        state.ending = .success(())
        if state.head == nil, let response {
          state.head = response
          if let data, !data.isEmpty { state.store(data) }
        }
      }
      var headResult: Result<URLResponse, any Error>?
      let headWaiter = state.headWaiter
      state.headWaiter = nil
      if headWaiter != nil {
        if let head = state.head {
          headResult = .success(head)
        } else {
          state.isErrorDelivered = true
          headResult = .failure(error ?? SessionFetcherError.cancelled)
        }
      }
      var wake = Wake.none
      if let waiter = state.chunkWaiter {
        state.chunkWaiter = nil
        wake = .chunk(waiter, takeNext(&state))
      }
      return (headWaiter, headResult, wake)
    }
    if let headWaiter, let headResult { headWaiter.resume(with: headResult) }
    if case .chunk(let waiter, let result) = wake { waiter.resume(with: result) }
  }

  // MARK: - Consumer

  /// Waits for the head of a successful response; throws the fetch's error if it ends first.
  func response() async throws -> URLResponse {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<URLResponse, any Error>) in
        let result = state.withLock { state -> Result<URLResponse, any Error>? in
          if let head = state.head { return .success(head) }
          if case .failure(let error)? = state.ending {
            state.isErrorDelivered = true
            return .failure(error)
          }
          if state.ending != nil { return .failure(SessionFetcherError.cancelled) }
          state.headWaiter = continuation
          return nil
        }
        if let result { continuation.resume(with: result) }
      }
    } onCancel: {
      self.consumerDidCancel()
    }
  }

  /// The next chunk; nil at the end. The fetch's error is thrown once, after the buffered chunks.
  func next() async throws -> Data? {
    try await withTaskCancellationHandler {
      let ready: Result<Data?, any Error>? = state.withLock { state in
        if state.hasChunk || state.ending != nil { return takeNext(&state) }
        return nil
      }
      let result: Data?
      if let ready {
        result = try ready.get()
      } else {
        result = try await withCheckedThrowingContinuation {
          (continuation: CheckedContinuation<Data?, any Error>) in
          let now = state.withLock { state -> Result<Data?, any Error>? in
            if state.hasChunk || state.ending != nil { return takeNext(&state) }
            if state.isConsumerGone { return .failure(SessionFetcherError.cancelled) }
            state.chunkWaiter = continuation
            return nil
          }
          if let now { continuation.resume(with: now) }
        }
      }
      resumeTransferIfDrained()
      return result
    } onCancel: {
      self.consumerDidCancel()
    }
  }

  /// Takes the next buffered chunk, else the ending (the error only once).
  private func takeNext(_ state: inout State) -> Result<Data?, any Error> {
    if let ring = state.ring, ring.count > 0 {
      let chunk = ring.take(upTo: Self.ringChunkLength)
      state.bufferedBytes -= chunk.count
      // Drained after a burst far past the high-water mark (the engine's pause takes effect late):
      // the ring gives back what it grew beyond twice the mark.
      let mark = max(highWaterMark, ByteRing.minimumCapacity)
      let kept = mark > Int.max / 2 ? Int.max : 2 * mark
      if ring.count <= lowWaterMark, ring.capacity > kept { ring.shrink(toCapacity: kept) }
      return .success(chunk)
    }
    if state.firstChunk < state.chunks.count {
      let chunk = state.chunks[state.firstChunk]
      state.firstChunk += 1
      state.bufferedBytes -= chunk.count
      if state.firstChunk == state.chunks.count || state.firstChunk > 1024 {
        state.chunks.removeFirst(state.firstChunk)
        state.firstChunk = 0
      }
      return .success(chunk)
    }
    switch state.ending {
    case .failure(let error)? where !state.isErrorDelivered:
      state.isErrorDelivered = true
      return .failure(error)
    default:
      return .success(nil)
    }
  }

  private func resumeTransferIfDrained() {
    let resume = state.withLock { state -> Bool in
      guard state.isPauseRequested, state.bufferedBytes <= lowWaterMark else { return false }
      state.isPauseRequested = false
      return true
    }
    if resume { fetcher.resumeStreamTransfer() }
  }

  /// The consuming task was cancelled or let go of the stream: stop the transfer, drop the buffer.
  /// A consumer still reading gets ``SessionFetcherError/cancelled`` once.
  func consumerDidCancel() {
    let (headWaiter, chunkWaiter) = state.withLock {
      state -> (CheckedContinuation<URLResponse, any Error>?, CheckedContinuation<Data?, any Error>?) in
      state.isConsumerGone = true
      state.chunks = []
      state.firstChunk = 0
      state.ring?.removeAll()
      state.bufferedBytes = 0
      if state.ending == nil {
        state.ending = .failure(SessionFetcherError.cancelled)
      }
      let waiters = (state.headWaiter, state.chunkWaiter)
      if waiters.0 != nil || waiters.1 != nil { state.isErrorDelivered = true }
      state.headWaiter = nil
      state.chunkWaiter = nil
      return waiters
    }
    fetcher.stopFetching()
    headWaiter?.resume(throwing: SessionFetcherError.cancelled)
    chunkWaiter?.resume(throwing: SessionFetcherError.cancelled)
  }
}
