import FetcherService
import Foundation
import SessionFetcher
import SoakSupport

/// The network soak: nginx and httpbin in a network namespace of its own behind a veth pair, a
/// mixed workload across it (directly and through the soak's fault proxies), and a fault schedule
/// acting on the link and the server. Prints its figures and exits non-zero when a goal is missed.
///
///     netsoak [--duration S] [--inflight N | A...B] [--timeout S] [--drain S] [--seed N]
///             [--fault-gap A...B] [--proxy-faults RATE] [--rss-interval S] [--rss-plot FILE.svg]
///             [--events N] [--no-faults] [--httpbin GUNICORN] [--lab N]
///
/// `--httpbin` names a gunicorn whose Python has httpbin installed; without it the workload has no
/// httpbin fetches (and says so). `--lab N` picks another namespace and subnet (see `NetworkLab`).
@main
enum NetSoak {
  static func main() {
    var options = Options()
    do {
      options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
    } catch {
      say("\(error)\n\(Options.usage)")
      exit(2)
    }
    let lab = NetworkLab(index: options.lab)
    if let reason = lab.unavailableReason() {
      say("netsoak: skipped: \(reason)")
      exit(ProcessInfo.processInfo.environment["CI"] == "true" ? 1 : 0)
    }
    // The signal sources must live as long as the run (an unused local is released early).
    let failures = withExtendedLifetime(installSignalHandlers(lab: lab)) { () -> [String] in
      var failures: [String]
      do {
        failures = try Run(options: options, lab: lab).run()
      } catch {
        failures = ["\(error)"]
      }
      lab.tearDown()
      return failures
    }
    if failures.isEmpty {
      say("netsoak: PASS")
    } else {
      say("netsoak: FAIL")
      for failure in failures { say("  - \(failure)") }
      exit(1)
    }
  }

  /// SIGINT and SIGTERM remove the namespace (and the nginx in it) before exiting.
  static func installSignalHandlers(lab: NetworkLab) -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM, SIGHUP].map { number in
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler {
        say("netsoak: signal \(number): cleaning up")
        lab.tearDown()
        exit(128 + number)
      }
      source.resume()
      return source
    }
  }
}

struct Options {
  var duration: TimeInterval = 140
  var inflight: ClosedRange<Int> = 8...16
  var timeout: TimeInterval = 4
  var drain: TimeInterval = 75
  var seed: UInt64 = 0x4E37_50A4
  var faultGap: ClosedRange<Double> = 2...6
  var proxyFaultRate = 0.35
  var rssInterval: TimeInterval = 10
  var rssPlot: String?
  var eventCount = 150
  var faults = true
  var httpbin: String?
  var lab = 0

  static let usage = """
    usage: netsoak [--duration S] [--inflight N|A...B] [--timeout S] [--drain S] [--seed N]
                   [--fault-gap A...B] [--proxy-faults RATE] [--rss-interval S] [--rss-plot FILE.svg]
                   [--events N] [--no-faults] [--httpbin GUNICORN] [--lab N]
    """

  static func parse(_ arguments: [String]) throws -> Options {
    var options = Options()
    var iterator = arguments.makeIterator()
    func value(_ name: String) throws -> String {
      guard let value = iterator.next() else { throw SoakError.setup("\(name) needs a value") }
      return value
    }
    func range(_ text: String) -> ClosedRange<Double>? {
      let parts = text.components(separatedBy: "...").compactMap { Double($0) }
      if parts.count == 1 { return parts[0]...parts[0] }
      if parts.count == 2, parts[0] <= parts[1] { return parts[0]...parts[1] }
      return nil
    }
    while let argument = iterator.next() {
      switch argument {
      case "--duration": options.duration = Double(try value(argument)) ?? options.duration
      case "--inflight":
        guard let bounds = range(try value(argument)), bounds.lowerBound >= 1 else {
          throw SoakError.setup("--inflight wants N or A...B")
        }
        options.inflight = Int(bounds.lowerBound)...Int(bounds.upperBound)
      case "--timeout": options.timeout = Double(try value(argument)) ?? options.timeout
      case "--drain": options.drain = Double(try value(argument)) ?? options.drain
      case "--seed": options.seed = UInt64(try value(argument)) ?? options.seed
      case "--fault-gap":
        guard let bounds = range(try value(argument)) else {
          throw SoakError.setup("--fault-gap wants A...B")
        }
        options.faultGap = bounds
      case "--proxy-faults": options.proxyFaultRate = Double(try value(argument)) ?? options.proxyFaultRate
      case "--rss-interval": options.rssInterval = Double(try value(argument)) ?? options.rssInterval
      case "--rss-plot": options.rssPlot = try value(argument)
      case "--events": options.eventCount = Int(try value(argument)) ?? options.eventCount
      case "--no-faults": options.faults = false
      case "--httpbin": options.httpbin = try value(argument)
      case "--lab":
        guard let index = Int(try value(argument)), (0...63).contains(index) else {
          throw SoakError.setup("--lab wants 0...63")
        }
        options.lab = index
      default: throw SoakError.setup("unknown argument \(argument)")
      }
    }
    return options
  }
}

/// One run: set-up, workload, fault schedule, checks.
struct Run {
  let options: Options
  let lab: NetworkLab

  func run() throws -> [String] {
    let engine = FetcherEngine.default
    if let reason = engine.unavailableReason { throw SoakError.setup("engine \(engine): \(reason)") }
    say(
      "== network soak, \(engine) engine: \(Int(options.duration)) s of mixed workload, "
        + "\(options.inflight.lowerBound)...\(options.inflight.upperBound) in flight, timeout \(options.timeout) s, "
        + "faults \(options.faults ? "on" : "off")")
    let work = FileManager.default.temporaryDirectory.appendingPathComponent(
      "\(lab.prefix)\(getpid())")
    try? FileManager.default.removeItem(at: work)
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    removeOldWorkFolders()

    try lab.setUp()
    let nginx = NginxServer(
      root: work.appendingPathComponent("nginx"), lab: lab, eventCount: options.eventCount, eventInterval: 0.1
    )
    try nginx.writeConfiguration()
    let generated = Date()
    let (small, large, uploads) = try makeFiles(nginx: nginx, work: work)
    say(
      String(
        format: "files: %d small, %d large, %d upload sources (%.1f s)", small.count, large.count,
        uploads.count, Date().timeIntervalSince(generated)))
    try nginx.start()
    defer { nginx.stop() }
    let proxy = try FaultProxy(
      upstreamHost: lab.serverAddress, upstreamPort: UInt16(nginx.port),
      faultRate: options.faults ? options.proxyFaultRate : 0, stallDuration: options.timeout + 2)
    proxy.start()
    defer { proxy.stop() }
    say("fault proxy: 127.0.0.1:\(proxy.port) -> \(lab.serverAddress):\(nginx.port)")
    var httpbin: (server: HttpbinServer, proxy: FaultProxy)?
    if let gunicorn = options.httpbin {
      let server = HttpbinServer(
        gunicorn: gunicorn, lab: lab, log: work.appendingPathComponent("httpbin.log"))
      try server.start()
      let httpbinProxy = try FaultProxy(
        upstreamHost: lab.serverAddress, upstreamPort: UInt16(server.port),
        faultRate: options.faults ? options.proxyFaultRate : 0, stallDuration: options.timeout + 2)
      httpbinProxy.start()
      httpbin = (server, httpbinProxy)
      say(
        "httpbin: \(lab.serverAddress):\(server.port) (gunicorn), fault proxy 127.0.0.1:\(httpbinProxy.port)")
    } else {
      say("httpbin: off (no --httpbin GUNICORN)")
    }
    defer {
      httpbin?.proxy.stop()
      httpbin?.server.stop()
    }

    let service = FetcherService()
    service.isRetryEnabled = true
    service.minRetryInterval = 1
    service.maxRetryInterval = 8
    service.allowedInsecureSchemes = ["http"]
    service.allowLocalhostRequest = true
    service.maxRunningFetchersPerHost = 0
    let downloads = work.appendingPathComponent("downloads")
    try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
    let workload = Workload(
      service: service, timeout: options.timeout, directBase: "http://\(lab.serverAddress):\(nginx.port)",
      proxyBase: "http://127.0.0.1:\(proxy.port)",
      httpbinBases: httpbin.map {
        (direct: "http://\(lab.serverAddress):\($0.server.port)", proxy: "http://127.0.0.1:\($0.proxy.port)")
      }, nginx: nginx, smallFiles: small, largeFiles: large,
      uploadSources: uploads, downloads: downloads)

    let rssBefore = residentBytes()
    let started = Date()
    let samples = Guarded<[RSSPlot.Sample]>([RSSPlot.Sample(seconds: 0, bytes: rssBefore)])
    let stopSampling = Guarded(false)
    Thread.detachNewThread {
      var next = options.rssInterval
      while !stopSampling.with({ $0 }) {
        Thread.sleep(forTimeInterval: 0.2)
        let elapsed = Date().timeIntervalSince(started)
        if elapsed >= next {
          let bytes = residentBytes()
          samples.with { $0.append(RSSPlot.Sample(seconds: elapsed, bytes: bytes)) }
          next += options.rssInterval
        }
      }
    }

    let schedule = FaultSchedule(
      lab: lab, nginx: nginx, gap: options.faultGap, seed: options.seed ^ 0xFA17, timeout: options.timeout)
    if options.faults { schedule.start() }

    // The long event stream: one always running, beside the others.
    var generator = SplitMix64(seed: options.seed)
    let nextID = Guarded(0)
    let streaming = Guarded(true)
    @Sendable func beginEventStream() {
      guard streaming.with({ $0 }) else { return }
      let id = nextID.with { id -> Int in
        id += 1
        return id
      }
      var streamGenerator = SplitMix64(seed: UInt64(id))
      workload.begin(id: id, kind: .eventStream, using: &streamGenerator) { beginEventStream() }
    }
    beginEventStream()

    // Weights out of 100; without httpbin its share goes to small GETs.
    let httpbinShare = httpbin == nil ? 0 : 15
    let kinds: [(FetchKind, Int)] = [
      (.smallGet, 30 + 15 - httpbinShare), (.post, 15), (.download, 15), (.uploadFile, 13),
      (.uploadStream, 12),
      (.httpbin, httpbinShare),
    ]
    let end = started.addingTimeInterval(options.duration)
    var target = Int.random(in: options.inflight, using: &generator)
    var nextTargetChange = started.addingTimeInterval(30)
    var lastReport = started
    while Date() < end {
      if Date() >= nextTargetChange {
        target = Int.random(in: options.inflight, using: &generator)
        nextTargetChange = Date().addingTimeInterval(30)
      }
      if Date().timeIntervalSince(lastReport) >= 30 {
        lastReport = Date()
        let figures = workload.figures.with { $0 }
        say(
          String(
            format:
              "[%4.0f s] begun %d, correct %d, errors %d, wrong %d, in flight %d (target %d), checks waiting %d, "
              + "RSS %@, threads %d",
            Date().timeIntervalSince(started), figures.fetches.values.reduce(0, +), figures.correct,
            figures.finalErrors.values.reduce(0, +) + figures.unexplainedErrors.count, figures.wrong.count,
            workload.inFlight, target, workload.checksWaiting, megabytes(residentBytes()), threadCount())
        )
        workload.sweepReleased()
      }
      // The event stream runs beside the target. The checks (sha256 of every body and file) must keep
      // up: a backlog would hold bodies in memory and files on disk without bound.
      if workload.inFlight - 1 < target && workload.checksWaiting < 32 {
        var pick = Int.random(in: 0..<100, using: &generator)
        var kind = FetchKind.smallGet
        for (candidate, weight) in kinds {
          if pick < weight {
            kind = candidate
            break
          }
          pick -= weight
        }
        let id = nextID.with { id -> Int in
          id += 1
          return id
        }
        workload.begin(id: id, kind: kind, using: &generator)
      } else {
        Thread.sleep(forTimeInterval: 0.01)
      }
    }
    streaming.with { $0 = false }
    schedule.stop()
    say(
      String(
        format: "workload ended after %.0f s; waiting for the fetches in flight",
        Date().timeIntervalSince(started)))
    let drainDeadline = Date().addingTimeInterval(options.drain)
    while workload.unchecked > 0 && Date() < drainDeadline { Thread.sleep(forTimeInterval: 0.1) }
    let abandoned = workload.abandonUnfinished()
    // Late (duplicated) completions and notifications, if any, and the last checks.
    Thread.sleep(forTimeInterval: 2)
    workload.stopObserving()
    var pending = workload.sweepReleased()
    let leakDeadline = Date().addingTimeInterval(15)
    while pending > 0 && Date() < leakDeadline {
      Thread.sleep(forTimeInterval: 0.1)
      pending = workload.sweepReleased()
    }
    workload.sweepReleased(force: true)
    let elapsed = Date().timeIntervalSince(started)
    let rssAfter = residentBytes()
    stopSampling.with { $0 = true }
    samples.with { $0.append(RSSPlot.Sample(seconds: elapsed, bytes: rssAfter)) }
    let leftovers = leftoverFiles(in: downloads)

    var figures = workload.figures.with { $0 }
    figures.missing = abandoned.count
    figures.partialFiles += leftovers
    figures.unbalanced += figures.strayNotifications
    var faultCounts = schedule.counts.with { $0 }
    for faultProxy in [proxy] + [httpbin?.proxy].compactMap({ $0 }) {
      for (kind, count) in faultProxy.counts.with({ $0 }) { faultCounts[kind.rawValue, default: 0] += count }
    }
    let faults = faultCounts.map { ($0.key, $0.value) }
    report(
      engine: engine, figures: figures, faults: faults.sorted { $0.0 < $1.0 }, rssBefore: rssBefore,
      rssAfter: rssAfter, elapsed: elapsed, abandoned: abandoned)
    let rssSamples = samples.with { $0 }
    if let path = options.rssPlot {
      let title = String(
        format: "SessionFetcher network soak, %@ engine: RSS over %.0f min (%d...%d in flight, faults on)",
        engine.description, elapsed / 60, options.inflight.lowerBound, options.inflight.upperBound)
      try RSSPlot.svg(samples: rssSamples, title: title).write(
        toFile: path, atomically: true, encoding: .utf8)
      say("RSS plot: \(path) (\(rssSamples.count) samples)")
    }
    let peak = rssSamples.map(\.bytes).max() ?? rssAfter
    say(
      "RSS samples:                   \(rssSamples.count) every \(Int(options.rssInterval)) s, peak \(megabytes(peak))"
    )

    var failures: [String] = []
    defer {
      if !failures.isEmpty,
        let log = try? String(
          contentsOf: nginx.root.appendingPathComponent("logs/error.log"), encoding: .utf8)
      {
        say("nginx error.log (end):")
        for line in log.split(separator: "\n").suffix(15) { say("  \(line)") }
      }
    }
    if !figures.wrong.isEmpty { failures.append("\(figures.wrong.count) wrong bodies or files") }
    if figures.duplicated > 0 { failures.append("\(figures.duplicated) duplicated completions") }
    if figures.missing > 0 { failures.append("\(figures.missing) missing completions") }
    if figures.unbalanced > 0 { failures.append("\(figures.unbalanced) unbalanced notifications") }
    if !figures.partialFiles.isEmpty { failures.append("\(figures.partialFiles.count) files left behind") }
    if figures.leaked > 0 { failures.append("\(figures.leaked) fetchers never deallocated") }
    if !figures.unexplainedErrors.isEmpty {
      failures.append("\(figures.unexplainedErrors.count) errors the retry rules do not call final")
    }
    if figures.longestPastTimeout > 1 {
      failures.append(
        String(format: "a fetch stayed alive %.2f s past its timeout", figures.longestPastTimeout))
    }
    return failures
  }

  private func report(
    engine: FetcherEngine, figures: Figures, faults: [(String, Int)], rssBefore: Int64, rssAfter: Int64,
    elapsed: TimeInterval, abandoned: [String]
  ) {
    let total = figures.fetches.values.reduce(0, +)
    let errors = figures.finalErrors.values.reduce(0, +) + figures.unexplainedErrors.count
    say("== figures, \(engine) engine")
    say("fetches:                       \(total) (\(figures.viaProxy) through the fault proxy)")
    for kind in FetchKind.allCases {
      say(
        "  \(kind.rawValue):".padding(toLength: 33, withPad: " ", startingAt: 0)
          + "\(figures.fetches[kind] ?? 0)")
    }
    say("faults:                        \(faults.reduce(0) { $0 + $1.1 })")
    for (kind, count) in faults {
      say("  \(kind):".padding(toLength: 33, withPad: " ", startingAt: 0) + "\(count)")
    }
    say("retries:                       \(figures.retries)")
    say(
      "fetches ending correct:        \(figures.correct) (sha256 of every body and file; httpbin JSON by content)"
    )
    say("wrong bodies or files:         \(figures.wrong.count)")
    say("ended with an error:           \(errors)")
    for (reason, count) in figures.finalErrors.sorted(by: { $0.value > $1.value }) {
      say("  \(count) × \(reason)")
    }
    for error in figures.unexplainedErrors.prefix(20) { say("  NOT FINAL: \(error)") }
    say("duplicated completions:        \(figures.duplicated)")
    say("missing completions:           \(figures.missing)")
    for name in abandoned.prefix(10) { say("  missing: \(name)") }
    say("unbalanced notifications:      \(figures.unbalanced)")
    say("partial files left behind:     \(figures.partialFiles.count)")
    for file in figures.partialFiles.prefix(10) { say("  left: \(file)") }
    say("fetchers leaked:               \(figures.leaked)")
    say("RSS before/after:              \(megabytes(rssBefore)) / \(megabytes(rssAfter))")
    if let heap = MallocFigures.current() {
      say(
        "malloc (glibc):                \(heap.arenas) arenas took \(megabytes(heap.fromSystem)), "
          + "\(megabytes(heap.freeKept)) of it free but kept; \(megabytes(heap.mapped)) in mmapped blocks")
    }
    // Leak or malloc's keeping: RSS once malloc's free pages went back, and the threads left.
    let trimStarted = Date()
    let trimmed = residentBytesAfterTrim()
    say(
      "RSS after malloc_trim:         \(megabytes(trimmed)) (threads: \(threadCount()); "
        + String(format: "the trim took %.1f ms)", Date().timeIntervalSince(trimStarted) * 1000))
    say(
      String(format: "longest past its timeout:      %.2f s", max(figures.longestPastTimeout, 0))
        + " (\(figures.longestPastTimeoutNote))")
    say(String(format: "elapsed:                       %.0f s", elapsed))
    for wrong in figures.wrong.prefix(10) { say("  WRONG: \(wrong)") }
  }

  private func makeFiles(nginx: NginxServer, work: URL) throws -> ([ServedFile], [ServedFile], [ServedFile]) {
    let fileManager = FileManager.default
    for folder in ["small", "large"] {
      try fileManager.createDirectory(
        at: nginx.www.appendingPathComponent(folder), withIntermediateDirectories: true)
    }
    let sources = work.appendingPathComponent("upload-sources")
    try fileManager.createDirectory(at: sources, withIntermediateDirectories: true)
    var small: [ServedFile] = []
    for index in 0..<16 {
      let length = 1024 << (index % 7)  // 1 KiB ... 64 KiB
      let path = "/small/s\(index).bin"
      let url = nginx.www.appendingPathComponent(String(path.dropFirst()))
      let digest = try writeRandomFile(url, count: length + index, seed: options.seed &+ UInt64(index))
      small.append(ServedFile(path: path, url: url, length: length + index, sha256: digest))
    }
    var large: [ServedFile] = []
    for (index, mebibytes) in [1, 2, 4, 8, 16, 32, 64].enumerated() {
      let path = "/large/l\(mebibytes)m.bin"
      let url = nginx.www.appendingPathComponent(String(path.dropFirst()))
      let length = mebibytes << 20
      let digest = try writeRandomFile(url, count: length, seed: options.seed &+ 100 &+ UInt64(index))
      large.append(ServedFile(path: path, url: url, length: length, sha256: digest))
    }
    var uploads: [ServedFile] = []
    for (index, kibibytes) in [64, 1024, 4096, 16_384, 32_768].enumerated() {
      let url = sources.appendingPathComponent("u\(kibibytes)k.bin")
      let length = kibibytes << 10
      let digest = try writeRandomFile(url, count: length, seed: options.seed &+ 200 &+ UInt64(index))
      uploads.append(ServedFile(path: url.lastPathComponent, url: url, length: length, sha256: digest))
    }
    return (small, large, uploads)
  }

  private func leftoverFiles(in folder: URL) -> [String] {
    let enumerator = FileManager.default.enumerator(
      at: folder, includingPropertiesForKeys: [.isRegularFileKey])
    var files: [String] = []
    while let url = enumerator?.nextObject() as? URL {
      if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
        files.append(url.path.replacingOccurrences(of: folder.path + "/", with: ""))
      }
    }
    return files
  }

  /// Work folders of earlier runs whose process is gone.
  private func removeOldWorkFolders() {
    let temporary = FileManager.default.temporaryDirectory
    let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
    for name in names where name.hasPrefix(lab.prefix) {
      guard let pid = Int32(name.dropFirst(lab.prefix.count)), pid != getpid(), kill(pid, 0) != 0
      else {
        continue
      }
      try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
    }
  }
}
