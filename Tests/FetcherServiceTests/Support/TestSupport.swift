import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// A thread-safe box for values recorded in callbacks.
final class Recorder<Value>: @unchecked Sendable {
  // `@unchecked Sendable`: `storage` is only touched under `lock`.
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

/// Counts the notifications of the fetchers it watches, and records their order.
final class NotificationRecorder: @unchecked Sendable {
  // `@unchecked Sendable`: `events` and `watched` are only touched under `lock`.
  private let lock = NSLock()
  private var events: [(Notification.Name, ObjectIdentifier)] = []
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
          if self.watched.contains(ObjectIdentifier(fetcher)) {
            self.events.append((name, ObjectIdentifier(fetcher)))
          }
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
    return events.filter { $0.0 == name }.count
  }

  /// The fetchers in the order of their first `name` notification.
  func order(of name: Notification.Name) -> [ObjectIdentifier] {
    lock.lock()
    defer { lock.unlock() }
    var seen: Set<ObjectIdentifier> = []
    return events.filter { $0.0 == name }.map(\.1).filter { seen.insert($0).inserted }
  }

  var started: Int { count(.sessionFetcherStarted) }
  var stopped: Int { count(.sessionFetcherStopped) }
  var completionInvoked: Int { count(.sessionFetcherCompletionInvoked) }
}

/// The result of a closure-form fetch.
struct FetchResult: @unchecked Sendable {
  // `@unchecked`: the error is only read by the test that made it.
  var data: Data?
  var error: (any Error)?

  var fetcherError: SessionFetcherError? { error as? SessionFetcherError }
}

struct TestTimeout: Error, CustomStringConvertible {
  var description: String { "the test's own bound ran out" }
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

/// A service for tests: its own serial callback queue, allowed to reach the loopback server.
func makeService(maxPerHost: Int = 10) -> FetcherService {
  let service = FetcherService()
  service.allowLocalhostRequest = true
  service.callbackQueue = DispatchQueue(label: "test.service.callbacks")
  service.maxRunningFetchersPerHost = maxPerHost
  // FoundationNetworking opens at most 6 connections per host by default: lift that, so that the
  // service's limit is the one the server sees.
  let configuration = URLSessionConfiguration.ephemeral
  configuration.httpMaximumConnectionsPerHost = 64
  service.configuration = configuration
  return service
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

/// Sleeps for `seconds` (for "nothing happens later" checks, never for speed).
func pause(_ seconds: Double) async {
  try? await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
}

extension TestServer {
  /// `pathAndQuery` on this server under the host name `localhost` instead of `127.0.0.1`: the same
  /// server, but another throttling host for a service.
  func localhostURL(_ pathAndQuery: String) -> URL {
    URL(string: "http://localhost:\(port)\(pathAndQuery)")!
  }

  /// The requests recorded for `path`.
  func requests(path: String) -> [RecordedRequest] {
    requests.filter { $0.path == path }
  }
}

/// A gate that server route handlers wait on until the test opens it (or a bound runs out).
final class Gate: @unchecked Sendable {
  // `@unchecked Sendable`: `isOpen` is only touched under `condition`.
  private let condition = NSCondition()
  private var isOpen = false

  func wait(timeout: TimeInterval = 15) {
    condition.lock()
    defer { condition.unlock() }
    let deadline = Date().addingTimeInterval(timeout)
    while !isOpen && condition.wait(until: deadline) {}
  }

  func open() {
    condition.lock()
    isOpen = true
    condition.broadcast()
    condition.unlock()
  }
}

/// Counts requests in flight per `Host` header on the server side, and the most seen at once.
final class ConcurrencyMeter: @unchecked Sendable {
  // `@unchecked Sendable`: both dictionaries are only touched under `lock`.
  private let lock = NSLock()
  private var inFlight: [String: Int] = [:]
  private var peaks: [String: Int] = [:]

  func enter(_ host: String) {
    lock.lock()
    inFlight[host, default: 0] += 1
    peaks[host] = max(peaks[host] ?? 0, inFlight[host] ?? 0)
    lock.unlock()
  }

  func leave(_ host: String) {
    lock.lock()
    inFlight[host, default: 0] -= 1
    lock.unlock()
  }

  /// The highest concurrency per host name (the `Host` header without the port).
  var peakByHost: [String: Int] {
    lock.lock()
    defer { lock.unlock() }
    var result: [String: Int] = [:]
    for (host, peak) in peaks {
      let name = String(host.split(separator: ":").first ?? "")
      result[name] = max(result[name] ?? 0, peak)
    }
    return result
  }
}

extension TestServer {
  /// Adds a route at `path` that measures per-host concurrency with `meter`, waits for `gate` (if
  /// any) and `delay` seconds, and answers `body <i>` for `?i=<i>`.
  func meteredRoute(_ path: String, meter: ConcurrencyMeter, gate: Gate? = nil, delay: TimeInterval = 0) {
    route(path) { request in
      let host = request.header("Host") ?? "?"
      meter.enter(host)
      defer { meter.leave(host) }
      gate?.wait()
      if delay > 0 { Thread.sleep(forTimeInterval: delay) }
      return .text("body \(request.query["i"] ?? "")")
    }
  }
}
