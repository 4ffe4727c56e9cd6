import AsyncHTTPClient
import FetcherService
import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// A memory child run (`child memory service|raw|ahc`): what a client holds, in resident bytes after
/// `malloc_trim(0)`, each figure against the reading just before it, in one process:
/// - `idle_service_bytes`: per `FetcherService` (AsyncHTTPClient: per `HTTPClient` on the shared
///   event loop group) of 1,000 made and kept, nothing fetched;
/// - `dropped_fetchers_bytes`: left after 10,000 fetchers made from one service and dropped without
///   beginning (AsyncHTTPClient: 10,000 `HTTPClient.Request`s);
/// - `inflight_bytes`: per fetch of 1,000 begun against a listener that accepts and never answers
///   (the engine's connection limit applies: most wait in the engine, as they would for a user);
/// - `after_stop_bytes`: left once those fetches are stopped and have ended, the caller has let go
///   of them, and the worker threads the stops woke have gone (``Resident/settleThreads()``; the
///   base reading settles the same way).
///
/// Before the first reading the client has made 16 small GETs, so its engine, connections and
/// threads exist.
func runMemory(client: String, options: Options) throws {
  let small = options.viaBase.appendingPathComponent("small.txt")
  let listener = try SilentListener()
  defer { listener.close() }
  let silent = URL(string: "http://127.0.0.1:\(listener.port)/never")!
  let idleCount = 1000
  let droppedCount = 10_000
  let inflightCount = 1000

  var fields: [(String, String)] = []
  switch client {
  case "service":
    let service = try warmedUpService(small: small, options: options)

    var base = Resident.trimmedBytes()
    var services: [FetcherService] = []
    for _ in 0..<idleCount { services.append(FetcherService()) }
    fields.append(("idle_service_bytes", "\((Resident.trimmedBytes() - base) / idleCount)"))
    services.removeAll()

    base = Resident.trimmedBytes()
    for _ in 0..<droppedCount { _ = service.fetcher(url: small) }
    fields.append(("dropped_fetchers_bytes", "\(Resident.trimmedBytes() - base)"))

    try measureInflightRounds(count: inflightCount, into: &fields) {
      var fetchers: [SessionFetcher] = []
      for _ in 0..<inflightCount {
        let fetcher = service.fetcher(url: silent)
        fetcher.beginFetch { _, _ in }
        fetchers.append(fetcher)
      }
      // Until the engine has made its requests: the listener has seen a connection.
      _ = listener.waitForConnections(1, timeout: 10)
      Thread.sleep(forTimeInterval: 1)
      return {
        // A stopped fetch calls no completion (as GTMSessionFetcher): wait until none is fetching.
        service.stopAllFetchers()
        let deadline = Date().addingTimeInterval(60)
        while fetchers.contains(where: \.isFetching) {
          guard Date() < deadline else { throw BenchmarkError("stopped fetches still fetching after 60 s") }
          Thread.sleep(forTimeInterval: 0.01)
        }
        // The caller lets go of them, as the other clients' runs do: a stopped fetcher the caller
        // keeps is the caller's memory (its request, settings and response state).
        fetchers.removeAll()
      }
    }
  case "raw":
    // The URLSession engine's baseline: the same fetches as plain data tasks of one URLSession (the
    // library's configuration), cancelled. Nothing is made per idle service or dropped fetcher.
    let raw = RawSessionIssuer(url: small, expectedLength: options.smallLength)
    defer { raw.shutdown() }
    let warm = try ClosedLoop.run(raw, count: 16, inflight: 16)
    guard warm.failures == 0 else { throw BenchmarkError(warm.firstFailure ?? "warm-up failed") }
    let session = URLSession(configuration: libraryLikeConfiguration())
    defer { session.invalidateAndCancel() }
    try measureInflightRounds(count: inflightCount, into: &fields) {
      var tasks = (0..<inflightCount).map { _ in session.dataTask(with: silent) }
      tasks.forEach { $0.resume() }
      _ = listener.waitForConnections(1, timeout: 10)
      Thread.sleep(forTimeInterval: 1)
      return {
        tasks.forEach { $0.cancel() }
        let deadline = Date().addingTimeInterval(60)
        while tasks.contains(where: { $0.state != .completed }) {
          guard Date() < deadline else { throw BenchmarkError("cancelled tasks still running after 60 s") }
          Thread.sleep(forTimeInterval: 0.01)
        }
        tasks.removeAll()
      }
    }
  case "ahc":
    let issuer = try AHCIssuer(
      urls: [small], expectedLength: options.smallLength, connections: 8,
      trusting: options.via == "plain" ? nil : options.caFile)
    defer { issuer.shutdown() }
    let warm = try ClosedLoop.run(issuer, count: 16, inflight: 16)
    guard warm.failures == 0 else { throw BenchmarkError(warm.firstFailure ?? "warm-up failed") }

    var base = Resident.trimmedBytes()
    var clients: [HTTPClient] = []
    for _ in 0..<idleCount { clients.append(HTTPClient(eventLoopGroupProvider: .singleton)) }
    fields.append(("idle_service_bytes", "\((Resident.trimmedBytes() - base) / idleCount)"))
    for idle in clients { try idle.syncShutdown() }
    clients.removeAll()

    base = Resident.trimmedBytes()
    for _ in 0..<droppedCount { _ = try HTTPClient.Request(url: small.absoluteString) }
    fields.append(("dropped_fetchers_bytes", "\(Resident.trimmedBytes() - base)"))

    let request = try HTTPClient.Request(url: silent.absoluteString)
    try measureInflightRounds(count: inflightCount, into: &fields) {
      let ended = Countdown(inflightCount)
      for _ in 0..<inflightCount {
        issuer.client.execute(request: request).whenComplete { _ in ended.tick() }
      }
      _ = listener.waitForConnections(1, timeout: 10)
      Thread.sleep(forTimeInterval: 1)
      return {
        // AsyncHTTPClient has no stop-all but its shutdown: the silent listener's connections are
        // closed instead, which fails every request (the queued ones on the connections that
        // replace them).
        listener.closeConnections(untilEnded: ended, timeout: 60)
        guard ended.wait(timeout: 1) else { throw BenchmarkError("requests did not all end in 60 s") }
      }
    }
  default:
    throw BenchmarkError("unknown memory client \(client)")
  }
  Measure.report(["ok": "1", "errors": "0", "first_error": "-"], extra: fields)
}

/// A `FetcherService` with no per-host limit of its own that has made 16 small GETs of `small`, so
/// its engine, connections and threads exist before a first reading.
func warmedUpService(small: URL, options: Options) throws -> FetcherService {
  let service = FetcherService()
  service.maxRunningFetchersPerHost = 0
  let issuer = FetcherIssuer(
    urls: [small], expectedLength: options.smallLength, service: service,
    tlsSettings: options.benchTLSSettings)
  let warm = try ClosedLoop.run(issuer, count: 16, inflight: 16)
  guard warm.failures == 0 else { throw BenchmarkError(warm.firstFailure ?? "warm-up failed") }
  return service
}

/// Three rounds of `count` fetches in flight: `begin` starts them and returns how to stop them
/// and wait until they have ended. Adds `inflight_bytes` (per fetch, first round), `after_stop_bytes`
/// (left after the first round ended, 1 s later) and `repeat_growth_bytes` (what each later round
/// added to that, on average: a leak shows here, a high-water mark does not).
private func measureInflightRounds(
  count: Int, into fields: inout [(String, String)], begin: () throws -> () throws -> Void
) throws {
  Resident.settleThreads()
  let base = Resident.trimmedBytes()
  var afterStop: [Int] = []
  for round in 0..<3 {
    let stop = try begin()
    if round == 0 { fields.append(("inflight_bytes", "\((Resident.trimmedBytes() - base) / count)")) }
    try stop()
    Resident.settleThreads()
    afterStop.append(Resident.trimmedBytes())
  }
  fields.append(("after_stop_bytes", "\(afterStop[0] - base)"))
  fields.append(("repeat_growth_bytes", "\((afterStop[2] - afterStop[0]) / 2)"))
}

/// Resident memory of this process.
enum Resident {
  private typealias TrimFunction = @convention(c) (Int) -> Int32

  /// glibc's `malloc_trim`, which the Glibc module does not declare.
  private static let trim: TrimFunction? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
    return unsafeBitCast(symbol, to: TrimFunction.self)
  }()

  /// The threads of this process now.
  static func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
  }

  /// Waits until the process's thread count has not changed for 6 s (at most 20 s): libdispatch
  /// retires a worker thread about 5 s after it goes idle, and the stack it touched stays resident
  /// until then, which is not what a client keeps (Benchmarks/README has the figures).
  static func settleThreads() {
    let limit = Date().addingTimeInterval(20)
    var count = threadCount()
    var since = Date()
    while Date() < limit && Date().timeIntervalSince(since) < 6 {
      Thread.sleep(forTimeInterval: 0.5)
      let now = threadCount()
      if now != count { (count, since) = (now, Date()) }
    }
  }

  /// `VmRSS` in bytes after `malloc_trim(0)`, so that what glibc could give back does not count.
  static func trimmedBytes() -> Int {
    _ = trim?(0)
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
      return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
    return 0
  }
}

/// Counts completions down to zero.
///
/// `@unchecked Sendable`: `remaining` is guarded by `lock`; `done` is a semaphore.
final class Countdown: @unchecked Sendable {
  private let lock = NSLock()
  private var remaining: Int
  private let done = DispatchSemaphore(value: 0)

  init(_ count: Int) { remaining = count }

  func tick() {
    let last = lock.withLock { () -> Bool in
      remaining -= 1
      return remaining == 0
    }
    if last { done.signal() }
  }

  var isDone: Bool { lock.withLock { remaining <= 0 } }

  /// Whether the count reached zero within `timeout` seconds.
  func wait(timeout: TimeInterval) -> Bool {
    if isDone { return true }
    return done.wait(timeout: .now() + timeout) == .success
  }
}

/// A loopback listener that accepts connections and never reads or answers: every request sent to
/// it stays in flight until its client gives up or the connection is closed.
///
/// `@unchecked Sendable`: `accepted` and `closed` are guarded by `lock`; `socket` is set once.
final class SilentListener: @unchecked Sendable {
  let port: Int
  private let socket: Int32
  private let lock = NSLock()
  private var accepted: [Int32] = []
  private var closed = false

  init() throws {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw BenchmarkError("socket: errno \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
        Glibc.bind(socket, socketAddress, length) == 0 && listen(socket, 4096) == 0
          && getsockname(socket, socketAddress, &length) == 0
      }
    }
    guard bound else {
      Glibc.close(socket)
      throw BenchmarkError("bind/listen: errno \(errno)")
    }
    self.socket = socket
    port = Int(UInt16(bigEndian: address.sin_port))
    let thread = Thread { [self] in acceptLoop() }
    thread.start()
  }

  private func acceptLoop() {
    while true {
      let connection = accept(socket, nil, nil)
      if connection < 0 {
        if errno == EINTR { continue }
        return
      }
      let keep = lock.withLock { () -> Bool in
        guard !closed else { return false }
        accepted.append(connection)
        return true
      }
      if !keep {
        Glibc.close(connection)
        return
      }
    }
  }

  /// Waits until `count` connections have been accepted or `timeout` seconds have passed.
  func waitForConnections(_ count: Int, timeout: TimeInterval) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if lock.withLock({ accepted.count }) >= count { return true }
      Thread.sleep(forTimeInterval: 0.01)
    }
    return false
  }

  /// Closes the accepted connections, again and again as clients open new ones, until `ended` is
  /// done or `timeout` seconds have passed.
  func closeConnections(untilEnded ended: Countdown, timeout: TimeInterval) {
    let deadline = Date().addingTimeInterval(timeout)
    while !ended.isDone, Date() < deadline {
      let connections = lock.withLock { () -> [Int32] in
        defer { accepted = [] }
        return accepted
      }
      for connection in connections { Glibc.close(connection) }
      Thread.sleep(forTimeInterval: 0.01)
    }
  }

  func close() {
    let connections = lock.withLock { () -> [Int32] in
      closed = true
      defer { accepted = [] }
      return accepted
    }
    for connection in connections { Glibc.close(connection) }
    shutdown(socket, Int32(SHUT_RDWR))
    Glibc.close(socket)
  }
}
