import FetcherService
import FetcherTesting
import Foundation
import Logging
import SessionFetcher
import SessionFetcherOpenAPI

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A service for tests against the in-process server: http to 127.0.0.1 allowed, callbacks on a
/// private queue, fast retries.
func makeTestService(retries: Bool = false) -> FetcherService {
  let service = FetcherService()
  service.allowLocalhostRequest = true
  service.callbackQueue = DispatchQueue(label: "tests.callbacks")
  service.isRetryEnabled = retries
  service.minRetryInterval = 0.05
  return service
}

/// Waits until `condition` holds or `seconds` pass; returns whether it held.
func waitUntil(within seconds: Double = 5, _ condition: @Sendable () -> Bool) async -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while Date() < deadline {
    if condition() { return true }
    try? await Task.sleep(nanoseconds: 20_000_000)
  }
  return condition()
}

/// A thread-safe box.
final class Box<Value: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: Value
  init(_ value: Value) { stored = value }
  var value: Value {
    lock.lock()
    defer { lock.unlock() }
    return stored
  }
  func mutate<T>(_ body: (inout Value) -> T) -> T {
    lock.lock()
    defer { lock.unlock() }
    return body(&stored)
  }
}

/// One captured log message.
struct CapturedLog: Sendable {
  var level: Logger.Level
  var message: String
  var metadata: [String: String]

  /// Everything in the message, for "a secret appears nowhere" checks.
  var allText: String { message + " " + metadata.map { "\($0.key)=\($0.value)" }.joined(separator: " ") }
}

/// A swift-log handler that keeps messages in memory; `delay` makes it deliberately slow.
struct CapturingLogHandler: LogHandler {
  let store: Box<[CapturedLog]>
  var delay: Double = 0
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .trace

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    if delay > 0 { Thread.sleep(forTimeInterval: delay) }
    var flat: [String: String] = [:]
    for (key, value) in event.metadata ?? [:] { flat[key] = "\(value)" }
    store.mutate {
      $0.append(CapturedLog(level: event.level, message: "\(event.message)", metadata: flat))
    }
  }
}

/// A logger writing to `store`.
func capturingLogger(_ store: Box<[CapturedLog]>, delay: Double = 0) -> Logger {
  Logger(label: "tests") { _ in CapturingLogHandler(store: store, delay: delay) }
}

/// An async sequence of `count` chunks of `size` pattern bytes, made as they are asked for, that
/// records how far it ran ahead of `sent()` (bytes the fetcher reports sent).
struct GeneratedChunks: AsyncSequence, Sendable {
  typealias Element = ArraySlice<UInt8>
  let count: Int
  let size: Int
  let produced: Box<Int>

  struct AsyncIterator: AsyncIteratorProtocol {
    var index = 0
    let parent: GeneratedChunks
    mutating func next() async throws -> ArraySlice<UInt8>? {
      guard index < parent.count else { return nil }
      let chunk = ArraySlice(TestServer.patternBytes(count: parent.size, offset: index * parent.size))
      index += 1
      parent.produced.mutate { $0 += parent.size }
      return chunk
    }
  }

  func makeAsyncIterator() -> AsyncIterator { AsyncIterator(parent: self) }
}
