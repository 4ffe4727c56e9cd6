import AsyncHTTPClient
import FetcherService
import Foundation
import HTTPLogging
import NIOCore
import NIOSSL
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The configuration the library gives its own sessions (`SharedSession.defaultConfiguration`,
/// adjusted): no URLCache, no platform cookie handling and, on Linux, at most 4 connections per
/// host (`BENCH_MAX_CONNECTIONS` overrides the per-host limit).
func libraryLikeConfiguration() -> URLSessionConfiguration {
  let configuration = URLSessionConfiguration.ephemeral
  configuration.urlCache = nil
  configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
  configuration.httpShouldSetCookies = false
  configuration.httpCookieAcceptPolicy = .never
  configuration.httpCookieStorage = nil
  #if canImport(FoundationNetworking)
    configuration.httpMaximumConnectionsPerHost = 4
  #endif
  // The connection-churn sweep (Benchmarks/README.md) sets the per-host connection limit.
  if let limit = ProcessInfo.processInfo.environment["BENCH_MAX_CONNECTIONS"].flatMap(Int.init) {
    configuration.httpMaximumConnectionsPerHost = limit
  }
  return configuration
}

/// Checks a small-GET reply; nil when it is the expected 200 with `expectedLength` bytes.
func smallReplyFailure(status: Int, length: Int, expectedLength: Int, error: (any Error)?) -> String? {
  if error == nil, status == 200, length == expectedLength { return nil }
  return compact("status=\(status) bytes=\(length) error=\(error.map { "\($0)" } ?? "nil")")
}

/// Raw URLSession: one delegate session on a serial delegate queue, bodies gathered per task.
///
/// `@unchecked Sendable`: `pending` is guarded by `lock` (tasks are registered from the completing
/// thread, delegate callbacks arrive on the delegate queue).
final class RawSessionIssuer: NSObject, URLSessionDataDelegate, RequestIssuer, @unchecked Sendable {
  private struct Pending {
    var body = Data()
    var done: @Sendable (String?) -> Void
  }

  private let request: URLRequest
  private let expectedLength: Int
  private let lock = NSLock()
  private var pending: [Int: Pending] = [:]
  private var session: URLSession?

  init(url: URL, expectedLength: Int) {
    request = URLRequest(url: url)
    self.expectedLength = expectedLength
    super.init()
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    session = URLSession(configuration: libraryLikeConfiguration(), delegate: self, delegateQueue: queue)
  }

  func issue(_ done: @escaping @Sendable (String?) -> Void) {
    guard let task = session?.dataTask(with: request) else { return done("no session") }
    lock.withLock { pending[task.taskIdentifier] = Pending(done: done) }
    task.resume()
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    lock.withLock { pending[dataTask.taskIdentifier]?.body.append(data) }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    guard let entry = lock.withLock({ pending.removeValue(forKey: task.taskIdentifier) }) else { return }
    let status = (task.response as? HTTPURLResponse)?.statusCode ?? -1
    entry.done(
      smallReplyFailure(
        status: status, length: entry.body.count, expectedLength: expectedLength, error: error))
  }

  func shutdown() {
    session?.finishTasksAndInvalidate()
  }
}

/// Hands out `items` in turn, from any thread.
///
/// `@unchecked Sendable`: `next` is guarded by `lock`; `items` is immutable.
final class RoundRobin<Item: Sendable>: @unchecked Sendable {
  private let items: [Item]
  private let lock = NSLock()
  private var next = 0

  init(_ items: [Item]) {
    precondition(!items.isEmpty, "RoundRobin needs at least one item")
    self.items = items
  }

  func take() -> Item {
    guard items.count > 1 else { return items[0] }
    return lock.withLock {
      defer { next = (next + 1) % items.count }
      return items[next]
    }
  }
}

/// SessionFetcher, standalone (`SessionFetcher.fetcher(url:)`) or from a `FetcherService`, asking
/// for each URL of `urls` in turn.
struct FetcherIssuer: RequestIssuer {
  let urls: RoundRobin<URL>
  let expectedLength: Int
  let service: FetcherService?
  let callbackQueue: DispatchQueue
  let postsNotifications: Bool
  let tlsSettings: TLSSettings

  init(
    urls: [URL], expectedLength: Int, service: FetcherService?, postsNotifications: Bool = true,
    tlsSettings: TLSSettings = TLSSettings()
  ) {
    self.urls = RoundRobin(urls)
    self.expectedLength = expectedLength
    self.service = service
    self.postsNotifications = postsNotifications
    self.tlsSettings = tlsSettings
    callbackQueue = DispatchQueue(label: "bench.fetcher-callbacks")
    if let service {
      service.tlsSettings = tlsSettings
      service.allowLocalhostRequest = true
      service.allowedInsecureSchemes = ["http"]
      service.callbackQueue = callbackQueue
    }
  }

  func issue(_ done: @escaping @Sendable (String?) -> Void) {
    let fetcher: SessionFetcher
    let url = urls.take()
    if let service {
      fetcher = service.fetcher(url: url)
    } else {
      fetcher = SessionFetcher.fetcher(url: url)
      fetcher.allowLocalhostRequest = true
      fetcher.allowedInsecureSchemes = ["http"]
      fetcher.callbackQueue = callbackQueue
      fetcher.postsNotifications = postsNotifications
      fetcher.tlsSettings = tlsSettings
    }
    let expectedLength = self.expectedLength
    fetcher.beginFetch { data, error in
      done(
        smallReplyFailure(
          status: fetcher.statusCode, length: data?.count ?? -1, expectedLength: expectedLength, error: error)
      )
    }
  }

  func shutdown() {
    service?.stopAllFetchers()
  }
}

/// AsyncHTTPClient through its futures API (`execute(request:)`), the faster of its two APIs for
/// small requests on this machine (perf-anchors.md §4), asking for each URL of `urls` in turn.
struct AHCIssuer: RequestIssuer {
  let client: HTTPClient
  let requests: RoundRobin<HTTPClient.Request>
  let expectedLength: Int

  init(urls: [URL], expectedLength: Int, connections: Int, trusting ca: URL?) throws {
    var configuration = HTTPClient.Configuration()
    configuration.tlsConfiguration = ahcTLSConfiguration(trusting: ca)
    configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections
    configuration.timeout.connect = .seconds(10)
    configuration.timeout.read = .seconds(30)
    client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    requests = RoundRobin(try urls.map { try HTTPClient.Request(url: $0.absoluteString) })
    self.expectedLength = expectedLength
  }

  func issue(_ done: @escaping @Sendable (String?) -> Void) {
    let expectedLength = self.expectedLength
    client.execute(request: requests.take()).whenComplete { result in
      switch result {
      case .success(let response):
        done(
          smallReplyFailure(
            status: Int(response.status.code), length: response.body?.readableBytes ?? 0,
            expectedLength: expectedLength, error: nil))
      case .failure(let error):
        done(compact("error=\(error)"))
      }
    }
  }

  func shutdown() {
    try? client.syncShutdown()
  }
}

/// AsyncHTTPClient's TLS configuration trusting `ca` as well (nil: the default).
func ahcTLSConfiguration(trusting ca: URL?) -> TLSConfiguration? {
  guard let ca else { return nil }
  var tls = TLSConfiguration.makeClientConfiguration()
  tls.additionalTrustRoots = [.file(ca.path)]
  return tls
}

/// How a small-GET child run logs through HTTPLogging.
enum LoggingMode: String {
  case off
  case files
  case memory
}

/// A small-GET child run: `inflight` warm-up requests (not timed), then `count` timed requests,
/// reported as one `RESULT` line with requests/s, latency percentiles and CPU per request.
func runSmallGet(client: String, options: Options) throws {
  let urls = options.urls("small.txt")
  let tls = options.benchTLSSettings
  let expected = options.smallLength
  let inflight = options.inflight
  let logging = LoggingMode(rawValue: options.logging) ?? .off
  if logging != .off {
    SessionFetcher.isLoggingAllowedInReleaseBuilds = true
    SessionFetcher.isLoggingToFileEnabled = logging == .files
    SessionFetcher.loggingDirectory = options.work.appendingPathComponent("logs", isDirectory: true)
    SessionFetcher.isLoggingEnabled = true
  }
  let issuer: any RequestIssuer
  switch client {
  case "raw":
    guard urls.count == 1 else { throw BenchmarkError("the raw client asks one host") }
    issuer = RawSessionIssuer(url: urls[0], expectedLength: expected)
  case "fetcher":
    issuer = FetcherIssuer(urls: urls, expectedLength: expected, service: nil, tlsSettings: tls)
  case "fetcher-quiet":
    issuer = FetcherIssuer(
      urls: urls, expectedLength: expected, service: nil, postsNotifications: false, tlsSettings: tls)
  case "service":
    let service = FetcherService()
    service.maxRunningFetchersPerHost = 16
    if ProcessInfo.processInfo.environment["BENCH_MAX_CONNECTIONS"].flatMap(Int.init) != nil {
      service.configuration = libraryLikeConfiguration()
    }
    issuer = FetcherIssuer(urls: urls, expectedLength: expected, service: service, tlsSettings: tls)
  case "ahc":
    issuer = try AHCIssuer(
      urls: urls, expectedLength: expected,
      connections: options.connections > 0 ? options.connections : max(inflight, 6),
      trusting: options.via == "plain" ? nil : options.caFile)
  default:
    throw BenchmarkError("unknown small-GET client \(client)")
  }
  defer { issuer.shutdown() }

  _ = try ClosedLoop.run(issuer, count: inflight, inflight: inflight)
  let cpuBefore = Measure.cpuSeconds()
  let start = Measure.now()
  let outcome = try ClosedLoop.run(issuer, count: options.count, inflight: inflight)
  if logging == .files { SessionFetcher.flushLogs() }
  let seconds = Double(Measure.now() - start) / 1e9
  let cpu = Measure.cpuSeconds() - cpuBefore
  let latencies = outcome.latenciesNanoseconds.map { Double($0) / 1000 }.sorted()
  Measure.report([
    "ok": "\(latencies.count)", "errors": "\(outcome.failures)",
    "first_error": outcome.firstFailure ?? "-",
    "rps": Measure.fixed(Double(latencies.count) / seconds, 1),
    "p50_us": Measure.fixed(Measure.percentile(latencies, 50), 1),
    "p99_us": Measure.fixed(Measure.percentile(latencies, 99), 1),
    "cpu_us_per_op": Measure.fixed(cpu / Double(max(options.count, 1)) * 1e6, 1),
    "secs": Measure.fixed(seconds),
  ])
}
