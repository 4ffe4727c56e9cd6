import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Counts the notifications of the fetchers it watches.
final class NotificationCounter: @unchecked Sendable {
  // `@unchecked Sendable`: `counts` and `watched` are only touched under `lock`.
  private let lock = NSLock()
  private var counts: [Notification.Name: Int] = [:]
  private var watched: Set<ObjectIdentifier> = []
  private var observers: [any NSObjectProtocol] = []
  static let names: [Notification.Name] = [
    .sessionFetcherStarted, .sessionFetcherStopped, .sessionFetcherRetryDelayStarted,
    .sessionFetcherRetryDelayStopped, .sessionFetcherCompletionInvoked,
  ]

  init(_ fetchers: [SessionFetcher] = []) {
    for fetcher in fetchers { watch(fetcher) }
    for name in Self.names {
      observers.append(
        NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { [weak self] note in
          guard let self, let fetcher = note.object as? SessionFetcher else { return }
          self.lock.lock()
          if self.watched.contains(ObjectIdentifier(fetcher)) { self.counts[name, default: 0] += 1 }
          self.lock.unlock()
        })
    }
  }

  func watch(_ fetcher: SessionFetcher) {
    lock.lock()
    watched.insert(ObjectIdentifier(fetcher))
    lock.unlock()
  }

  deinit {
    for observer in observers { NotificationCenter.default.removeObserver(observer) }
  }

  func count(_ name: Notification.Name) -> Int {
    lock.lock()
    defer { lock.unlock() }
    return counts[name, default: 0]
  }

  var started: Int { count(.sessionFetcherStarted) }
  var stopped: Int { count(.sessionFetcherStopped) }
  var retryDelayStarted: Int { count(.sessionFetcherRetryDelayStarted) }
  var retryDelayStopped: Int { count(.sessionFetcherRetryDelayStopped) }
  var completionInvoked: Int { count(.sessionFetcherCompletionInvoked) }
}

/// A thread-safe box for values recorded in callbacks.
final class Recorder<Value>: @unchecked Sendable {
  // `@unchecked Sendable`: `values` is only touched under `lock`.
  private let lock = NSLock()
  private var storage: [Value] = []

  func append(_ value: Value) {
    lock.lock()
    storage.append(value)
    lock.unlock()
  }

  var values: [Value] {
    lock.lock()
    defer { lock.unlock() }
    return storage
  }

  var count: Int { values.count }
}

/// The result of a closure-form fetch.
struct FetchResult: @unchecked Sendable {
  // `@unchecked`: the error is only read by the test that made it.
  var data: Data?
  var error: (any Error)?

  var fetcherError: SessionFetcherError? { error as? SessionFetcherError }
  var urlError: URLError? { error as? URLError }
}

/// A per-test serial callback queue, so tests do not depend on the main queue.
func makeCallbackQueue() -> DispatchQueue {
  DispatchQueue(label: "test.callbacks")
}

extension TestServer {
  /// A fetcher for a path on this server, allowed to reach localhost.
  func fetcher(_ pathAndQuery: String, queue: DispatchQueue? = nil) -> SessionFetcher {
    let fetcher = SessionFetcher.fetcher(url: url(pathAndQuery))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = queue ?? makeCallbackQueue()
    // Suites run in parallel in one process: a private jar keeps one test's cookies out of another's
    // requests (SessionCookieStorage.shared is process-wide).
    fetcher.cookieStorage = SessionCookieStorage()
    return fetcher
  }
}

extension SessionFetcher {
  /// Begins with the closure API and waits (bounded) for the completion.
  func fetchResult(timeout: TimeInterval = 30) async -> FetchResult {
    await withCheckedContinuation { (continuation: CheckedContinuation<FetchResult, Never>) in
      let once = Recorder<Bool>()
      let resume: @Sendable (FetchResult) -> Void = { result in
        once.append(true)
        if once.count == 1 { continuation.resume(returning: result) }
      }
      beginFetch { data, error in resume(FetchResult(data: data, error: error)) }
      // Weak: a test may check that the fetcher (and what it holds) is freed long before this runs.
      DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self] in
        guard once.count == 0 else { return }
        let account =
          self.map { "\($0.request?.url?.absoluteString ?? "?"): \($0.diagnosticSummary)" } ?? "freed"
        print("fetchResult gave up after \(timeout) s on \(account)")
        resume(FetchResult(data: nil, error: TestTimeout()))
      }
    }
  }
}

struct TestTimeout: Error, CustomStringConvertible {
  var description: String { "the test's own bound ran out" }
}

/// Waits until `condition` holds, polling, at most `timeout` seconds.
func eventually(timeout: TimeInterval = 30, _ condition: () -> Bool) async -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while Date() < deadline {
    if condition() { return true }
    try? await Task.sleep(nanoseconds: 10_000_000)
  }
  return condition()
}

/// Lets queued callbacks run (a fetcher's notifications and blocks are asynchronous).
func drain(_ queue: DispatchQueue) async {
  await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
}

/// A fresh empty folder under the temporary directory.
func makeTemporaryFolder() throws -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "sessionfetcher-tests-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}

/// A port on 127.0.0.1 with nothing listening: bound and never listened on, for the life of the
/// process. (A port bound and closed again could be taken at once by another suite's server running
/// in parallel, and the "refused" connection would reach it.)
func closedPort() throws -> UInt16 {
  #if canImport(Glibc)
    let streamType = Int32(SOCK_STREAM.rawValue)
  #else
    let streamType = SOCK_STREAM
  #endif
  let descriptor = socket(AF_INET, streamType, 0)
  guard descriptor >= 0 else { throw TestTimeout() }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = 0
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let bound = withUnsafeMutablePointer(to: &address) { pointer in
    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
      bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
    }
  }
  guard bound else {
    close(descriptor)
    throw TestTimeout()
  }
  // Deliberately never closed: the port stays reserved, and refuses connections.
  return UInt16(bigEndian: address.sin_port)
}
