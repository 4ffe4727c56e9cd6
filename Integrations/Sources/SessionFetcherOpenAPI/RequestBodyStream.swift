import Foundation
import OpenAPIRuntime

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The source of a streamed request body: hands out one ``RequestBodyInputStream`` per attempt and
/// decides whether another attempt may resend the body.
///
/// An `HTTPBody` whose `iterationBehavior` is `.multiple` (bytes in memory, a file read anew) can
/// be iterated again, so every attempt, retry or 307/308 redirect gets a fresh stream. A `.single`
/// body (an upstream stream, a generator) can be read once: the first stream reads it, and asking
/// for a second one fails the fetch with ``SessionFetcherOpenAPIError/requestBodyNotReplayable``.
final class RequestBodySource: @unchecked Sendable {
  private let body: HTTPBody
  private let bufferLimit: Int
  private let lock = NSLock()
  private var streamsMade = 0
  private var producerFailure: (any Error)?

  init(body: HTTPBody, bufferLimit: Int) {
    self.body = body
    self.bufferLimit = bufferLimit
  }

  /// Whether a new attempt could send the body again.
  var canReplay: Bool {
    lock.lock()
    defer { lock.unlock() }
    return body.iterationBehavior == .multiple || streamsMade == 0
  }

  /// The error the body's own sequence threw, if it did (reported instead of the stream error the
  /// fetcher sees).
  var failure: (any Error)? {
    lock.lock()
    defer { lock.unlock() }
    return producerFailure
  }

  /// A fresh stream of the body, for the fetcher's `bodyStreamProvider`.
  func makeStream() throws -> InputStream {
    lock.lock()
    defer { lock.unlock() }
    if body.iterationBehavior == .single && streamsMade > 0 {
      throw SessionFetcherOpenAPIError.requestBodyNotReplayable
    }
    streamsMade += 1
    return RequestBodyInputStream(body: body, bufferLimit: bufferLimit) { [weak self] error in
      guard let self else { return }
      self.lock.lock()
      self.producerFailure = error
      self.lock.unlock()
    }
  }
}

/// An `InputStream` over an `HTTPBody`, read by the fetcher's transfer thread.
///
/// A task iterates the body and hands its chunks over through a buffer of at most `bufferLimit`
/// bytes (plus one chunk): when the buffer is full, the task waits, so the body is pulled only as
/// fast as the network takes it (backpressure) and is never held whole. `read` blocks its thread
/// until bytes, the end or an error arrive — what URLSession's synchronous body-stream reading
/// expects. Closing the stream (the transfer ended or was cancelled) cancels the task.
final class RequestBodyInputStream: InputStream {
  private let pipe: BodyPipe

  init(body: HTTPBody, bufferLimit: Int, onFailure: @escaping @Sendable (any Error) -> Void) {
    self.pipe = BodyPipe(body: body, bufferLimit: bufferLimit, onFailure: onFailure)
    super.init(data: Data())
  }

  override var streamStatus: Stream.Status { pipe.status }

  override var streamError: (any Error)? { pipe.error }

  /// True until the end was read; also true after a failure, so that readers that ask first go on
  /// to `read` and see the error instead of taking the body as complete.
  override var hasBytesAvailable: Bool {
    switch pipe.status {
    case .open, .reading, .error: return true
    default: return false
    }
  }

  override func open() { pipe.open() }

  override func close() { pipe.close() }

  override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
    pipe.read(buffer, maxLength: len)
  }

  override func getBuffer(
    _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
  ) -> Bool {
    false
  }

  deinit { pipe.close() }
}

/// The state of a ``RequestBodyInputStream``, shared between the reading thread and the task that
/// iterates the body; everything is guarded by `condition`.
private final class BodyPipe: @unchecked Sendable {
  private let body: HTTPBody
  private let bufferLimit: Int
  private let onFailure: @Sendable (any Error) -> Void
  private let condition = NSCondition()
  private var chunks: [ArraySlice<UInt8>] = []
  private var bufferedBytes = 0
  private var finished = false
  private var failure: (any Error)?
  private var closed = false
  private var producerWaiter: CheckedContinuation<Void, Never>?
  private var currentStatus: Stream.Status = .notOpen
  private var producer: Task<Void, Never>?

  init(body: HTTPBody, bufferLimit: Int, onFailure: @escaping @Sendable (any Error) -> Void) {
    self.body = body
    self.bufferLimit = max(1, bufferLimit)
    self.onFailure = onFailure
  }

  var status: Stream.Status {
    condition.lock()
    defer { condition.unlock() }
    return currentStatus
  }

  var error: (any Error)? {
    condition.lock()
    defer { condition.unlock() }
    return currentStatus == .error ? failure : nil
  }

  func open() {
    condition.lock()
    guard currentStatus == .notOpen else {
      condition.unlock()
      return
    }
    currentStatus = .open
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {
      // `read` blocks a libdispatch thread of the URL session until the body's next chunk is in;
      // on Linux, where Swift's task pool shares libdispatch's threads, a producer on the pool
      // could then wait for a thread that blocked readers hold. Its own thread keeps it moving.
      let executor = ProducerThreadExecutor()
      producer = Task(executorPreference: executor) { [self] in
        await produce()
        executor.stop()
      }
    } else {
      producer = Task.detached { [self] in await produce() }
    }
    condition.unlock()
  }

  func close() {
    condition.lock()
    closed = true
    if currentStatus != .error && currentStatus != .notOpen { currentStatus = .closed }
    let waiter = producerWaiter
    producerWaiter = nil
    let task = producer
    condition.broadcast()
    condition.unlock()
    waiter?.resume()
    task?.cancel()
  }

  private func produce() async {
    do {
      for try await chunk in body {
        if chunk.isEmpty { continue }
        await waitForRoom()
        guard deliver(chunk) else { return }
      }
      finish(nil)
    } catch {
      finish(error)
    }
  }

  /// Adds `chunk` to the buffer; false when the stream was closed.
  private func deliver(_ chunk: ArraySlice<UInt8>) -> Bool {
    condition.lock()
    defer { condition.unlock() }
    if closed { return false }
    chunks.append(chunk)
    bufferedBytes += chunk.count
    condition.broadcast()
    return true
  }

  /// Marks the end of the body, or its failure.
  private func finish(_ error: (any Error)?) {
    condition.lock()
    let reportable = !closed && error != nil
    failure = error
    finished = true
    condition.broadcast()
    condition.unlock()
    if reportable, let error { onFailure(error) }
  }

  /// Returns when the buffer is below its limit or the stream was closed.
  private func waitForRoom() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      condition.lock()
      if bufferedBytes < bufferLimit || closed {
        condition.unlock()
        continuation.resume()
        return
      }
      producerWaiter = continuation
      condition.unlock()
    }
  }

  func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
    guard len > 0 else { return 0 }
    open()
    condition.lock()
    while chunks.isEmpty && !finished && !closed {
      condition.wait()
    }
    if chunks.isEmpty {
      if failure != nil {
        currentStatus = .error
        condition.unlock()
        return -1
      }
      if currentStatus != .error { currentStatus = .atEnd }
      condition.unlock()
      return 0
    }
    var copied = 0
    while copied < len, !chunks.isEmpty {
      let chunk = chunks[0]
      let count = min(len - copied, chunk.count)
      chunk.withUnsafeBufferPointer { source in
        (buffer + copied).update(from: source.baseAddress!, count: count)
      }
      copied += count
      if count == chunk.count {
        chunks.removeFirst()
      } else {
        chunks[0] = chunk.dropFirst(count)
      }
    }
    bufferedBytes -= copied
    var waiter: CheckedContinuation<Void, Never>?
    if bufferedBytes < bufferLimit {
      waiter = producerWaiter
      producerWaiter = nil
    }
    condition.unlock()
    waiter?.resume()
    return copied
  }
}

/// Runs the jobs of one body producer on a thread of its own, which ends with the producer.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
private final class ProducerThreadExecutor: TaskExecutor, @unchecked Sendable {
  private let condition = NSCondition()
  private var jobs: [UnownedJob] = []
  private var stopped = false

  init() {
    let thread = Thread { [self] in run() }
    thread.name = "SessionFetcherOpenAPI.requestBody"
    thread.start()
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let unowned = UnownedJob(job)
    condition.lock()
    jobs.append(unowned)
    condition.signal()
    condition.unlock()
  }

  /// Lets the thread end once the jobs enqueued so far ran.
  func stop() {
    condition.lock()
    stopped = true
    condition.signal()
    condition.unlock()
  }

  private func run() {
    while true {
      condition.lock()
      while jobs.isEmpty && !stopped { condition.wait() }
      if jobs.isEmpty {
        condition.unlock()
        return
      }
      let job = jobs.removeFirst()
      condition.unlock()
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}
