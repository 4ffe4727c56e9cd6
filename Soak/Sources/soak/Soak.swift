import FetcherTesting
import Foundation
import SessionFetcher
import SoakSupport

/// The fault soak and the leak/RSS run. Prints its figures and exits non-zero when any check fails.
///
///     swift run -c release --package-path Soak soak [--fetches N] [--sequential N]
///     swift run -c release --package-path Soak soak --service-churn N [--engine urlSession|libcurl]
///     swift run -c release --package-path Soak soak --download-memory PARALLEL [--window MIB] [--engine E]
@main
enum Soak {
  static func main() throws {
    var fetches = 1_000
    var sequential = 10_000
    var serviceChurn: Int?
    var downloadMemory: Int?
    var windowMiB: Int64 = 16
    var engine = FetcherEngine.default
    var arguments = CommandLine.arguments.dropFirst().makeIterator()
    while let argument = arguments.next() {
      switch argument {
      case "--fetches": fetches = Int(arguments.next() ?? "") ?? fetches
      case "--sequential": sequential = Int(arguments.next() ?? "") ?? sequential
      case "--service-churn": serviceChurn = Int(arguments.next() ?? "")
      case "--download-memory": downloadMemory = Int(arguments.next() ?? "")
      case "--window": windowMiB = Int64(arguments.next() ?? "") ?? windowMiB
      case "--engine": engine = arguments.next()?.lowercased() == "libcurl" ? .libcurl : .urlSession
      default:
        print(
          "usage: soak [--fetches N] [--sequential N] | --service-churn N | --download-memory N [--window MIB]"
            + " [--engine urlSession|libcurl]")
        exit(2)
      }
    }
    if let downloadMemory {
      try DownloadMemoryRun(parallel: downloadMemory, rounds: 3, windowMiB: windowMiB, engine: engine).run()
      exit(0)
    }
    if let serviceChurn {
      // Services made, used and dropped: each must leave (next to) nothing behind.
      let figures = try ServiceChurnRun(count: serviceChurn, fetchesPerService: 3, engine: engine).run()
      let allowed = Int64(2 << 20) + max(0, figures.baseline ?? 0)
      let pass = figures.failed == 0 && figures.alive == 0 && figures.library <= allowed
      print("service churn: \(pass ? "PASS" : "FAIL") (allowed \(megabytes(allowed)))")
      exit(pass ? 0 : 1)
    }
    var failures: [String] = []
    failures += try FaultSoak(fetches: fetches).run()
    let baseline = try RawURLSessionRun(count: sequential).run()
    failures += try SequentialRun(count: sequential, baselineGrowth: baseline).run()
    if failures.isEmpty {
      print("soak: PASS")
    } else {
      print("soak: FAIL")
      for failure in failures { print("  - \(failure)") }
      exit(1)
    }
  }
}

/// Weak references to every fetcher made, to prove they were all deallocated.
final class FetcherRegistry: @unchecked Sendable {
  private let references = Guarded<[() -> SessionFetcher?]>([])

  func add(_ fetcher: SessionFetcher) {
    references.with { $0.append({ [weak fetcher] in fetcher }) }
  }

  var alive: Int { references.with { $0 }.reduce(0) { $0 + ($1() == nil ? 0 : 1) } }
}

/// Per-fetcher notification balance: Started − Stopped, RetryDelayStarted − RetryDelayStopped, and
/// the number of CompletionInvoked.
final class NotificationLedger: @unchecked Sendable {
  struct Entry {
    var attempts = 0
    var delays = 0
    var completions = 0
    var started = 0
  }

  private let entries = Guarded<[ObjectIdentifier: Entry]>([:])
  private var observers: [any NSObjectProtocol] = []

  init() {
    let changes: [(Notification.Name, @Sendable (inout Entry) -> Void)] = [
      (
        .sessionFetcherStarted,
        {
          $0.attempts += 1; $0.started += 1
        }
      ),
      (.sessionFetcherStopped, { $0.attempts -= 1 }),
      (.sessionFetcherRetryDelayStarted, { $0.delays += 1 }),
      (.sessionFetcherRetryDelayStopped, { $0.delays -= 1 }),
      (.sessionFetcherCompletionInvoked, { $0.completions += 1 }),
    ]
    for (name, change) in changes {
      observers.append(
        NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { [entries] note in
          guard let fetcher = note.object as? SessionFetcher else { return }
          entries.with { change(&$0[ObjectIdentifier(fetcher), default: Entry()]) }
        })
    }
  }

  func stop() {
    for observer in observers { NotificationCenter.default.removeObserver(observer) }
    observers = []
  }

  func entry(_ fetcher: SessionFetcher) -> Entry {
    entries.with { $0[ObjectIdentifier(fetcher)] ?? Entry() }
  }
}

/// 1,000 fetches (by default) with about 30 % injected faults, retries on, 16 in flight.
struct FaultSoak {
  enum Fault: String, CaseIterable {
    case none
    case status503 = "503"
    case status503RetryAfter = "503+Retry-After"
    case reset = "reset mid-body"
    case truncate = "truncated body"
    case stall = "stall past timeout"
    case empty = "empty reply"
    case refused = "refused connection"
  }

  enum Sink: CaseIterable {
    case memory, file, accumulate
  }

  struct Plan {
    var id: Int
    var fault: Fault
    var sink: Sink
    var length: Int
  }

  struct Outcome {
    var completions = 0
    var correct = false
    var wrong = false
    var error: String?
    var retries = 0
  }

  let fetches: Int

  func run() throws -> [String] {
    print("== fault soak: \(fetches) fetches, ~30 % faults, retries on, 16 in flight")
    var generator = SplitMix64(seed: 0x5E55_10F3)
    let faults: [Fault] = [.status503, .status503RetryAfter, .reset, .truncate, .stall, .empty, .refused]
    let plans = (0..<fetches).map { id -> Plan in
      let faulty = Double(generator.next() % 1000) / 1000 < 0.3
      let fault = faulty ? faults[Int(generator.next() % UInt64(faults.count))] : .none
      let sink = Sink.allCases[Int(generator.next() % 3)]
      let length = 1_000 + Int(generator.next() % 120_000)
      return Plan(id: id, fault: fault, sink: sink, length: length)
    }

    let attempts = Guarded<[Int: Int]>([:])
    @Sendable func install(on server: TestServer) {
      server.route("/soak") { request in
        let id = Int(request.query["id"] ?? "") ?? -1
        let length = Int(request.query["length"] ?? "") ?? 0
        let fault = Fault(rawValue: request.query["fault"] ?? "") ?? .none
        let attempt = attempts.with { counts -> Int in
          counts[id, default: 0] += 1
          return counts[id]!
        }
        let body = TestServer.patternBytes(count: length, offset: id)
        guard attempt == 1 else { return TestResponse(status: 200, body: body) }
        switch fault {
        case .none, .refused: return TestResponse(status: 200, body: body)
        case .status503: return .status(503)
        case .status503RetryAfter:
          return TestResponse.status(503).adding(header: "Retry-After", id % 2 == 0 ? "0" : "1")
        case .reset: return .fault(.reset(announcedLength: length), body: body.prefix(length / 2))
        case .truncate: return .fault(.truncate(announcedLength: length), body: body.prefix(length / 3))
        case .stall: return .fault(.stall(announcedLength: length), body: body.prefix(length / 4))
        case .empty: return .fault(.closeWithoutResponse)
        }
      }
    }

    let server = try TestServer()
    defer { server.stop() }
    install(on: server)
    // Refused connections: a second server, stopped while the first attempts go out, started again
    // on the same port shortly after.
    var flaky: TestServer? = try TestServer()
    let flakyPort = flaky!.port
    flaky?.stop()
    flaky = nil

    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "sessionfetcher-soak-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }

    let ledger = NotificationLedger()
    let registry = FetcherRegistry()
    let outcomes = Guarded<[Int: Outcome]>([:])
    let fetchersByID = Guarded<[Int: SessionFetcher]>([:])
    let inFlight = DispatchSemaphore(value: 16)
    let allDone = DispatchGroup()
    let callbackQueue = DispatchQueue(label: "soak.callbacks")
    let rssBefore = residentBytes()
    let started = Date()

    // Refused connections first, all at once (not counted against the 16 in flight), while the
    // second server is down; it comes back on the same port after 0.5 s and their retries succeed.
    let flakyServer = Guarded<TestServer?>(nil)
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
      if let server = try? TestServer(port: flakyPort) {
        install(on: server)
        flakyServer.with { $0 = server }
      } else {
        print("warning: could not restart the refused-connection server on port \(flakyPort)")
      }
    }
    let ordered = plans.filter { $0.fault == .refused } + plans.filter { $0.fault != .refused }

    for plan in ordered {
      let throttled = plan.fault != .refused
      if throttled { inFlight.wait() }
      allDone.enter()
      let base = plan.fault == .refused ? URL(string: "http://127.0.0.1:\(flakyPort)")! : server.baseURL
      let faultName = plan.fault.rawValue.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
      let url = URL(
        string: "\(base.absoluteString)/soak?id=\(plan.id)&length=\(plan.length)&fault=\(faultName)")!
      let fetcher = SessionFetcher.fetcher(url: url)
      fetcher.allowLocalhostRequest = true
      fetcher.callbackQueue = callbackQueue
      fetcher.isRetryEnabled = true
      fetcher.minRetryInterval = 0.1
      fetcher.maxRetryInterval = 3
      fetcher.request?.timeoutInterval = 1
      registry.add(fetcher)
      fetchersByID.with { $0[plan.id] = fetcher }
      let expected = TestServer.patternBytes(count: plan.length, offset: plan.id)
      let accumulated = Guarded(Data())
      let destination = folder.appendingPathComponent("fetch-\(plan.id).bin")
      switch plan.sink {
      case .memory: break
      case .file: fetcher.destinationFileURL = destination
      case .accumulate:
        fetcher.accumulateDataBlock = { chunk in
          accumulated.with { data in
            if let chunk { data.append(chunk) } else { data = Data() }
          }
        }
      }
      fetcher.beginFetch { data, error in
        var received: Data?
        switch plan.sink {
        case .memory: received = data
        case .file: received = try? Data(contentsOf: destination)
        case .accumulate: received = accumulated.with { $0 }
        }
        let checksumMatches =
          received.map { TestServer.checksum($0) == TestServer.checksum(expected) } ?? false
        outcomes.with { outcomes in
          var outcome = outcomes[plan.id] ?? Outcome()
          outcome.completions += 1
          if let error {
            outcome.error = "\(plan.fault.rawValue): \(error)"
          } else if checksumMatches {
            outcome.correct = true
          } else {
            outcome.wrong = true
          }
          outcomes[plan.id] = outcome
        }
        if throttled { inFlight.signal() }
        allDone.leave()
      }
    }
    let finished = allDone.wait(timeout: .now() + 300) == .success
    // Let late (duplicate) completions and notifications arrive, if there were any.
    Thread.sleep(forTimeInterval: 0.5)
    callbackQueue.sync {}
    let elapsed = Date().timeIntervalSince(started)
    flakyServer.with { $0?.stop() }

    let results = outcomes.with { $0 }
    let fetchers = fetchersByID.with { $0 }
    var retries = 0
    var unbalanced = 0
    for (_, fetcher) in fetchers {
      retries += fetcher.retryCount
      let entry = ledger.entry(fetcher)
      if entry.attempts != 0 || entry.delays != 0 || entry.completions != 1 || entry.started == 0 {
        unbalanced += 1
      }
    }
    let injected = plans.filter { $0.fault != .none }
    let correct = results.values.filter(\.correct).count
    let wrong = results.values.filter(\.wrong).count
    let duplicated = results.values.filter { $0.completions > 1 }.count
    let missing = plans.count - results.count
    let errors = results.values.compactMap(\.error)
    let leftovers =
      (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.filter {
        !$0.hasPrefix("fetch-")
      } ?? []
    ledger.stop()
    fetchersByID.with { $0 = [:] }
    // Fetchers release themselves once their completion was delivered.
    var alive = registry.alive
    let deadline = Date().addingTimeInterval(10)
    while alive > 0 && Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
      alive = registry.alive
    }
    let rssAfter = residentBytes()

    print("fetches:                       \(plans.count)")
    print("faults injected:               \(injected.count) (\(Self.breakdown(injected)))")
    print("retries:                       \(retries)")
    print("fetches ending correct:        \(correct) (bodies verified by checksum)")
    print("wrong bodies:                  \(wrong)")
    print("ended with an error:           \(errors.count)")
    print("duplicated completions:        \(duplicated)")
    print("missing completions:           \(missing)")
    print("unbalanced notifications:      \(unbalanced)")
    print("files left behind:             \(leftovers.count)")
    print("fetchers still allocated:      \(alive)")
    print("RSS before/after:              \(megabytes(rssBefore)) / \(megabytes(rssAfter))")
    print(String(format: "elapsed:                       %.1f s", elapsed))
    for error in errors.prefix(5) { print("  error: \(error)") }

    var failures: [String] = []
    if !finished { failures.append("the soak did not finish within 300 s") }
    if wrong > 0 { failures.append("\(wrong) wrong bodies") }
    if duplicated > 0 { failures.append("\(duplicated) duplicated completions") }
    if missing > 0 { failures.append("\(missing) missing completions") }
    if unbalanced > 0 { failures.append("\(unbalanced) fetchers with unbalanced notifications") }
    if !leftovers.isEmpty { failures.append("\(leftovers.count) files left behind: \(leftovers.prefix(3))") }
    if alive > 0 { failures.append("\(alive) fetchers never deallocated") }
    if !errors.isEmpty { failures.append("\(errors.count) fetches did not recover from a transient fault") }
    return failures
  }

  static func breakdown(_ plans: [Plan]) -> String {
    Fault.allCases.filter { $0 != .none }.map { fault in
      "\(fault.rawValue) \(plans.filter { $0.fault == fault }.count)"
    }.joined(separator: ", ")
  }
}

/// 10,000 (by default) sequential fetches; RSS growth after a warm-up, and every fetcher freed.
struct SequentialRun {
  let count: Int
  /// The RSS growth of the same fetches made with URLSession alone.
  let baselineGrowth: Int64

  func run() throws -> [String] {
    print("== \(count) sequential fetches (1 KiB each, in memory)")
    let server = try TestServer()
    defer { server.stop() }
    let registry = FetcherRegistry()
    let queue = DispatchQueue(label: "soak.sequential")
    let expected = TestServer.patternBytes(count: 1024)
    var wrong = 0
    var rssAfterWarmUp: Int64 = 0
    let warmUp = min(1_000, count / 10)
    let started = Date()
    for index in 0..<count {
      // The server records every request: forget them, so that only the client's memory is measured.
      if index % 100 == 0 { server.resetRecords() }
      if index == warmUp { rssAfterWarmUp = residentBytes() }
      let fetcher = SessionFetcher.fetcher(url: server.url("/bytes/1024"))
      fetcher.allowLocalhostRequest = true
      fetcher.callbackQueue = queue
      registry.add(fetcher)
      let done = DispatchSemaphore(value: 0)
      let result = Guarded<Data?>(nil)
      fetcher.beginFetch { data, _ in
        result.with { $0 = data }
        done.signal()
      }
      if done.wait(timeout: .now() + 20) == .timedOut || result.with({ $0 }) != expected { wrong += 1 }
    }
    queue.sync {}
    let elapsed = Date().timeIntervalSince(started)
    var alive = registry.alive
    let deadline = Date().addingTimeInterval(10)
    while alive > 0 && Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
      alive = registry.alive
    }
    let rssAfter = residentBytes()
    let growth = rssAfter - rssAfterWarmUp
    print(
      "fetches:                       \(count) (\(String(format: "%.0f", Double(count) / elapsed)) per second)"
    )
    print("failed or wrong:               \(wrong)")
    print("fetchers still allocated:      \(alive)")
    print("RSS after \(warmUp) / after \(count):   \(megabytes(rssAfterWarmUp)) / \(megabytes(rssAfter))")
    print(
      "RSS growth:                    \(megabytes(growth)) (URLSession alone: \(megabytes(baselineGrowth)))")
    var failures: [String] = []
    if wrong > 0 { failures.append("\(wrong) sequential fetches failed or were wrong") }
    if alive > 0 { failures.append("\(alive) sequential fetchers never deallocated") }
    if growth > 8 * 1_048_576 { failures.append("RSS grew by \(megabytes(growth)) over \(count) fetches") }
    return failures
  }
}

/// The same sequential fetches with a bare delegate-less URLSession: the growth FoundationNetworking
/// itself shows, for comparison.
struct RawURLSessionRun {
  let count: Int

  func run() throws -> Int64 {
    print("== \(count) sequential fetches with URLSession alone (baseline)")
    let server = try TestServer()
    defer { server.stop() }
    let configuration = URLSessionConfiguration.ephemeral
    configuration.urlCache = nil
    configuration.httpCookieStorage = nil
    let session = URLSession(configuration: configuration)
    defer { session.invalidateAndCancel() }
    let url = server.url("/bytes/1024")
    var rssAfterWarmUp: Int64 = 0
    let warmUp = min(1_000, count / 10)
    var failed = 0
    for index in 0..<count {
      if index % 100 == 0 { server.resetRecords() }
      if index == warmUp { rssAfterWarmUp = residentBytes() }
      let done = DispatchSemaphore(value: 0)
      let ok = Guarded(false)
      session.dataTask(with: url) { data, _, error in
        ok.with { $0 = error == nil && data?.count == 1024 }
        done.signal()
      }.resume()
      if done.wait(timeout: .now() + 20) == .timedOut || !ok.with({ $0 }) { failed += 1 }
    }
    let growth = residentBytes() - rssAfterWarmUp
    print("failed:                        \(failed)")
    print("RSS growth:                    \(megabytes(growth))")
    return growth
  }
}
