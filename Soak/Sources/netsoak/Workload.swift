import FetcherService
import Foundation
import SessionFetcher
import SoakSupport

/// The kinds of fetch in the mixed workload. The httpbin kind is one of `/range/N` (a...z),
/// `/drip` (a slow body of `*`), a POST echo at `/anything`, `/redirect/2` and `/gzip`.
enum FetchKind: String, CaseIterable {
  case smallGet = "small GET"
  case post = "POST (echoed)"
  case download = "download to file (1-64 MiB)"
  case uploadFile = "PUT upload from file"
  case uploadStream = "PUT upload from stream"
  case eventStream = "event stream (chunked)"
  case httpbin = "httpbin (5 endpoints)"
}

/// What the soak knows about one fetch while it runs: the library's retry advice, the last sign of
/// life (an attempt starting, bytes moving, a retry delay ending) and how often it completed.
final class FetchRecord: @unchecked Sendable {
  // `@unchecked Sendable`: the mutable state is in `state`, under its lock.
  struct State {
    var lastActivity = Date()
    var lastActivityKind = "begin"
    var completions = 0
    var attempts = 0
    var started = 0
    var delays = 0
    var completionNotes = 0
    var lastAdvice: (willRetry: Bool, error: String)?
  }

  let id: Int
  let kind: FetchKind
  let method: String
  let viaProxy: Bool
  let began = Date()
  let state = Guarded(State())

  init(id: Int, kind: FetchKind, method: String, viaProxy: Bool) {
    self.id = id
    self.kind = kind
    self.method = method
    self.viaProxy = viaProxy
  }

  func touch(_ kind: String) {
    state.with {
      $0.lastActivity = Date()
      $0.lastActivityKind = kind
    }
  }
}

/// The totals printed at the end.
struct Figures {
  var fetches: [FetchKind: Int] = [:]
  var correct = 0
  var wrong: [String] = []
  var finalErrors: [String: Int] = [:]
  var unexplainedErrors: [String] = []
  var duplicated = 0
  var missing = 0
  var unbalanced = 0
  var strayNotifications = 0
  var partialFiles: [String] = []
  var leaked = 0
  var retries = 0
  var longestPastTimeout: TimeInterval = -.infinity
  var longestPastTimeoutNote = ""
  var viaProxy = 0
}

/// Starts fetches of the mixed workload with the public API and checks every ending.
final class Workload: @unchecked Sendable {
  // `@unchecked Sendable`: constants after `init`; the mutable state is in `Guarded` values.
  let service: FetcherService
  let timeout: TimeInterval
  let directBase: String
  let proxyBase: String
  /// httpbin's base URLs, directly and through its fault proxy, when it runs.
  let httpbinBases: (direct: String, proxy: String)?
  let nginx: NginxServer
  let smallFiles: [ServedFile]
  let largeFiles: [ServedFile]
  let uploadSources: [ServedFile]
  let downloads: URL
  let figures = Guarded(Figures())
  /// Fetches begun and not yet checked, by fetcher.
  private let active = Guarded<[ObjectIdentifier: (SessionFetcher, FetchRecord)]>([:])
  /// Fetchers whose checks are done: each must be deallocated soon after.
  private let released = Guarded<[(reference: () -> SessionFetcher?, deadline: Date)]>([])
  private let running = Guarded(0)
  /// Completed fetches whose check has not run yet (each may hold a body in memory, a download or an
  /// upload on disk): the soak begins no new fetch while too many wait.
  private let waitingChecks = Guarded(0)
  /// Checks (sha256 of up to 64 MiB) run here, one at a time, on a thread of their own: on the
  /// global queues they would hold libdispatch's few worker threads (2 on 2 cores) and delay the
  /// library's timeout timers, which run there, by seconds.
  private let verification = DispatchQueue(label: "netsoak.verify")
  private var observers: [any NSObjectProtocol] = []

  init(
    service: FetcherService, timeout: TimeInterval, directBase: String, proxyBase: String,
    httpbinBases: (direct: String, proxy: String)?, nginx: NginxServer, smallFiles: [ServedFile],
    largeFiles: [ServedFile], uploadSources: [ServedFile], downloads: URL
  ) {
    self.service = service
    self.timeout = timeout
    self.directBase = directBase
    self.proxyBase = proxyBase
    self.httpbinBases = httpbinBases
    self.nginx = nginx
    self.smallFiles = smallFiles
    self.largeFiles = largeFiles
    self.uploadSources = uploadSources
    self.downloads = downloads
    observeNotifications()
  }

  var inFlight: Int { running.with { $0 } }
  var checksWaiting: Int { waitingChecks.with { $0 } }
  var unchecked: Int { active.with { $0.count } }

  // MARK: - Notifications

  private func observeNotifications() {
    let changes: [(Notification.Name, @Sendable (inout FetchRecord.State) -> Void)] = [
      (
        .sessionFetcherStarted,
        {
          $0.attempts += 1
          $0.started += 1
          $0.lastActivity = Date()
          $0.lastActivityKind = "attempt started"
          $0.lastAdvice = nil
        }
      ),
      (.sessionFetcherStopped, { $0.attempts -= 1 }),
      (.sessionFetcherRetryDelayStarted, { $0.delays += 1 }),
      (
        .sessionFetcherRetryDelayStopped,
        {
          $0.delays -= 1
          $0.lastActivity = Date()
          $0.lastActivityKind = "retry delay ended"
        }
      ),
      (.sessionFetcherCompletionInvoked, { $0.completionNotes += 1 }),
    ]
    for (name, change) in changes {
      observers.append(
        NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) {
          [active, figures] note in
          guard let fetcher = note.object as? SessionFetcher else { return }
          if let record = active.with({ $0[ObjectIdentifier(fetcher)]?.1 }) {
            record.state.with { change(&$0) }
          } else {
            figures.with { $0.strayNotifications += 1 }
          }
        })
    }
  }

  func stopObserving() {
    for observer in observers { NotificationCenter.default.removeObserver(observer) }
    observers = []
  }

  // MARK: - Starting fetches

  /// Begins one fetch of `kind`; `done` runs once it was checked.
  func begin<G: RandomNumberGenerator>(
    id: Int, kind: FetchKind, using generator: inout G, done: (@Sendable () -> Void)? = nil
  ) {
    let viaProxy = Bool.random(using: &generator)
    var base = viaProxy ? proxyBase : directBase
    var expected: String?
    /// For bodies that are not known byte for byte (httpbin's JSON): what is wrong with one, or nil.
    var verify: (@Sendable (Data) -> String?)?
    var contentType: String?
    var uploadTarget: URL?
    var destination: URL?
    let path: String
    var method = "GET"
    var body: (Data?, ServedFile?, Bool) = (nil, nil, false)
    switch kind {
    case .smallGet:
      let file = smallFiles.randomElement(using: &generator)!
      path = file.path
      expected = file.sha256
    case .download:
      // Smaller files more often: 1, 2, 4 MiB twice as often as 32 and 64.
      let weights = [4, 4, 3, 3, 2, 1, 1]
      var pick = Int.random(in: 0..<weights.reduce(0, +), using: &generator)
      var index = 0
      while pick >= weights[index] {
        pick -= weights[index]
        index += 1
      }
      let file = largeFiles[min(index, largeFiles.count - 1)]
      path = file.path
      expected = file.sha256
      destination = downloads.appendingPathComponent("fetch-\(id)/\(file.url.lastPathComponent)")
    case .post:
      var bytes = SplitMix64(seed: UInt64(id) &* 7919)
      let data = bytes.bytes(Int.random(in: 1...65_536, using: &generator))
      path = "/echo"
      method = "POST"
      body.0 = data
      expected = SHA256.hex(of: data)
    case .uploadFile, .uploadStream:
      let source = uploadSources.randomElement(using: &generator)!
      path = "/upload/\(id).bin"
      method = "PUT"
      body.1 = source
      body.2 = kind == .uploadStream && Bool.random(using: &generator)  // announce the length or not
      expected = source.sha256
      uploadTarget = nginx.uploads.appendingPathComponent("\(id).bin")
    case .eventStream:
      path = "/events"
      expected = SHA256.hex(of: nginx.expectedEvents)
    case .httpbin:
      guard let bases = httpbinBases else { preconditionFailure("httpbin fetches without httpbin") }
      base = viaProxy ? bases.proxy : bases.direct
      switch Int.random(in: 0..<5, using: &generator) {
      case 0:
        // a...z repeated; httpbin serves at most 100 KiB.
        let count = Int.random(in: 1...102_400, using: &generator)
        path = "/range/\(count)"
        expected = SHA256.hex(of: Data((0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) }))
      case 1:
        // `*` bytes spread over up to 2 s: a slow body, well within the idle timeout.
        let count = Int.random(in: 1...4_000, using: &generator)
        let duration = Double(Int.random(in: 0...20, using: &generator)) / 10
        path = "/drip?numbytes=\(count)&duration=\(duration)&delay=0&code=200"
        expected = SHA256.hex(of: Data(repeating: UInt8(ascii: "*"), count: count))
      case 2:
        let text =
          "echo \(id) "
          + String(repeating: "0123456789abcdef", count: Int.random(in: 1...2_048, using: &generator))
        path = "/anything/\(id)"
        method = "POST"
        contentType = "text/plain; charset=utf-8"
        body.0 = Data(text.utf8)
        verify = { data in
          let echo = Self.jsonObject(data)
          if echo?["data"] as? String != text { return "the echoed body differs" }
          if echo?["method"] as? String != "POST" { return "the echoed method is not POST" }
          return nil
        }
      case 3:
        // Two relative redirects, then /get.
        path = "/redirect/2"
        verify = { data in
          (Self.jsonObject(data)?["url"] as? String)?.hasSuffix("/get") == true ? nil : "did not end at /get"
        }
      default:
        path = "/gzip"
        verify = { data in
          Self.jsonObject(data)?["gzipped"] as? Bool == true ? nil : "not a decoded gzip body"
        }
      }
    }

    var request = URLRequest(url: URL(string: base + path)!)
    request.httpMethod = method
    request.timeoutInterval = timeout
    if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
    let fetcher = service.fetcher(request: request)
    let record = FetchRecord(id: id, kind: kind, method: method, viaProxy: viaProxy)
    fetcher.callbackQueue = DispatchQueue(label: "netsoak.fetch")
    fetcher.comment = "\(kind.rawValue) #\(id)"
    if let data = body.0 { fetcher.bodyData = data }
    if let source = body.1 {
      if kind == .uploadFile {
        fetcher.bodyFileURL = source.url
        // Past 16 MiB the URLSession engine would send a Content-Length file body through
        // FoundationNetworking's file source, which can crash the process when the transfer is cut
        // (the library's `FileBodyInMemory`): the larger file goes chunked, on both engines.
        if source.length > 16 << 20 { fetcher.sendsBodyFileChunked = true }
      } else {
        let url = source.url
        fetcher.bodyStreamProvider = {
          guard let stream = InputStream(url: url) else { throw CocoaError(.fileReadNoSuchFile) }
          return stream
        }
        if body.2 { fetcher.bodyLength = Int64(source.length) }
      }
    }
    if let destination { fetcher.destinationFileURL = destination }
    let accumulated = Guarded(Data())
    if kind == .eventStream {
      fetcher.accumulateDataBlock = { chunk in
        record.touch("event chunk")
        accumulated.with { data in
          if let chunk { data.append(chunk) } else { data = Data() }
        }
      }
    }
    fetcher.eventMonitors = [ActivityMonitor(record: record)]
    fetcher.sendProgressBlock = { _, _, _ in record.touch("bytes sent") }
    fetcher.receivedProgressBlock = { _, _ in record.touch("bytes received") }
    fetcher.downloadProgressBlock = { _, _, _ in record.touch("bytes written") }
    fetcher.retryBlock = { suggested, error, respond in
      record.state.with { $0.lastAdvice = (suggested, Self.describe(error)) }
      respond(suggested)
    }

    active.with { $0[ObjectIdentifier(fetcher)] = (fetcher, record) }
    running.with { $0 += 1 }
    figures.with {
      $0.fetches[kind, default: 0] += 1
      if viaProxy { $0.viaProxy += 1 }
    }
    let timeout = self.timeout
    let checks = (expected: expected, verify: verify, destination: destination, uploadTarget: uploadTarget)
    fetcher.beginFetch { [self] data, error in
      let now = Date()
      let (completions, lastActivity, lastKind) = record.state.with { state -> (Int, Date, String) in
        state.completions += 1
        return (state.completions, state.lastActivity, state.lastActivityKind)
      }
      guard completions == 1 else {
        figures.with { $0.duplicated += 1 }
        return
      }
      running.with { $0 -= 1 }
      waitingChecks.with { $0 += 1 }
      // The idle timeout counts from the request's real start when the engine made it later
      // (FoundationNetworking's shared work queue can hold task creation for seconds).
      let requestStart = fetcher.timing.requestStartDate ?? lastActivity
      let (since, sinceKind) =
        requestStart > lastActivity
        ? (requestStart, "request started by the engine") : (lastActivity, lastKind)
      let past = now.timeIntervalSince(since) - timeout
      let events = accumulated.with { $0 }
      verification.async { [self] in
        check(
          fetcher: fetcher, record: record, data: kind == .eventStream ? events : data, error: error,
          expected: checks.expected, verify: checks.verify, destination: checks.destination,
          uploadTarget: checks.uploadTarget,
          pastTimeout: past, lastKind: sinceKind)
        waitingChecks.with { $0 -= 1 }
        done?()
      }
    }
  }

  // MARK: - Checking an ending

  private func check(
    fetcher: SessionFetcher, record: FetchRecord, data: Data?, error: (any Error)?, expected: String?,
    verify: (@Sendable (Data) -> String?)?, destination: URL?, uploadTarget: URL?, pastTimeout: TimeInterval,
    lastKind: String
  ) {
    let name = "\(record.kind.rawValue) #\(record.id)\(record.viaProxy ? " (proxy)" : "")"
    var wrong: String?
    var finalReason: String?
    var unexplained: String?
    var partial: String?
    if let error {
      if let reason = finalReasonFor(record: record, fetcher: fetcher, error: error) {
        finalReason = reason
      } else {
        unexplained =
          "\(name): \(Self.describe(error)) after \(fetcher.retryCount) retries: \(Self.message(of: error))"
      }
      if let destination, FileManager.default.fileExists(atPath: destination.path) {
        partial = "\(name): \(destination.lastPathComponent) exists after a failed fetch"
      }
    } else if let verify {
      if let problem = verify(data ?? Data()) { wrong = "\(name): \(problem)" }
    } else {
      var actual: String?
      switch record.kind {
      case .smallGet, .post, .eventStream, .httpbin: actual = data.map(SHA256.hex(of:))
      case .download: actual = destination.flatMap(SHA256.hex(ofFile:))
      case .uploadFile, .uploadStream: actual = uploadTarget.flatMap(SHA256.hex(ofFile:))
      }
      if actual != expected {
        wrong = "\(name): sha256 \(actual ?? "(nothing)") instead of \(expected ?? "?")"
      }
    }
    if let destination { try? FileManager.default.removeItem(at: destination.deletingLastPathComponent()) }
    if let uploadTarget { try? FileManager.default.removeItem(at: uploadTarget) }
    let retries = fetcher.retryCount
    figures.with { figures in
      figures.retries += retries
      if let wrong { figures.wrong.append(wrong) } else if error == nil { figures.correct += 1 }
      if let finalReason { figures.finalErrors[finalReason, default: 0] += 1 }
      if let unexplained { figures.unexplainedErrors.append(unexplained) }
      if let partial { figures.partialFiles.append(partial) }
      if pastTimeout > figures.longestPastTimeout {
        figures.longestPastTimeout = pastTimeout
        let age = String(format: "%.1f", Date().timeIntervalSince(record.began))
        figures.longestPastTimeoutNote =
          "\(name), \(error.map(Self.describe) ?? "correct"), \(retries) retries, \(age) s after it began; "
          + "last activity: \(lastKind)"
      }
    }
    // Late notifications (Stopped after the completion) have a second to arrive.
    verification.asyncAfter(deadline: .now() + 1) { [self] in
      let entry = active.with { $0.removeValue(forKey: ObjectIdentifier(fetcher)) }
      if let state = entry?.1.state.with({ $0 }) {
        if state.attempts != 0 || state.delays != 0 || state.completionNotes != 1 || state.started == 0 {
          figures.with { $0.unbalanced += 1 }
          say(
            "unbalanced notifications: \(name): attempts \(state.attempts), delays \(state.delays), "
              + "completions \(state.completionNotes), started \(state.started)")
        }
      }
      let reference = { [weak fetcher] in fetcher }
      released.with { $0.append((reference, Date().addingTimeInterval(10))) }
    }
  }

  /// Why an error is where the library's rules stop, or nil when they would have gone on (or the
  /// error is not one a fault explains, such as a 404).
  private func finalReasonFor(record: FetchRecord, fetcher: SessionFetcher, error: any Error) -> String? {
    let advice = record.state.with { $0.lastAdvice }
    let what = Self.describe(error)
    let urlError = error as? URLError
    let status = (error as? SessionFetcherError)?.statusCode
    let transient = urlError != nil || [502, 503, 504].contains(status ?? 0)
    guard transient else { return nil }
    if record.method == "POST", let urlError, urlError.code != .cannotConnectToHost,
      advice?.willRetry == false
    {
      return "POST after \(what): not retried (not idempotent, may have been processed)"
    }
    // The rules end retries without asking the retry block once the next delay would reach the cap
    // or three times the cap has passed since the first attempt.
    if advice == nil && (fetcher.retryCount > 0 || Date().timeIntervalSince(record.began) > 3 * 8) {
      return "\(what) after \(fetcher.retryCount) retries, the retry window closed"
    }
    return nil
  }

  /// A JSON object body (httpbin's echoes), or nil.
  static func jsonObject(_ data: Data) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
  }

  /// The text of an error (libcurl's message for FoundationNetworking's -1).
  static func message(of error: any Error) -> String {
    let nsError = error as NSError
    let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError
    let text = underlying?.localizedDescription ?? nsError.localizedDescription
    return String(text.prefix(160))
  }

  static func describe(_ error: (any Error)?) -> String {
    guard let error else { return "no error" }
    if let urlError = error as? URLError {
      switch urlError.code {
      case .timedOut: return "timed out"
      case .networkConnectionLost: return "connection lost"
      case .cannotConnectToHost: return "cannot connect"
      case .badServerResponse: return "empty or bad reply"
      case .unknown: return "transfer cut short"
      default: return "URLError \(urlError.code.rawValue)"
      }
    }
    if let status = (error as? SessionFetcherError)?.statusCode { return "HTTP \(status)" }
    return "\(error)"
  }

  // MARK: - Deallocation

  /// Counts fetchers still allocated past their deadline; returns how many are still pending.
  @discardableResult
  func sweepReleased(force: Bool = false) -> Int {
    let now = Date()
    let leaked = released.with { entries -> Int in
      var leaked = 0
      entries.removeAll { entry in
        if entry.reference() == nil { return true }
        if force || entry.deadline < now {
          leaked += 1
          return true
        }
        return false
      }
      return leaked
    }
    if leaked > 0 { figures.with { $0.leaked += leaked } }
    return released.with { $0.count }
  }

  /// Fetches that never completed: stopped, and counted as missing.
  func abandonUnfinished() -> [String] {
    let left = active.with { $0 }
    var names: [String] = []
    for (fetcher, record) in left.values where record.state.with({ $0.completions }) == 0 {
      names.append(
        "\(record.kind.rawValue) #\(record.id): \(fetcher.isFetching ? "still fetching" : "not fetching")")
      fetcher.stopFetching()
    }
    return names
  }
}

/// Marks a fetch alive at every event the library counts as activity for its idle timeout: a
/// request sent, a response head, body bytes.
final class ActivityMonitor: FetcherEventMonitor {
  let record: FetchRecord

  init(record: FetchRecord) { self.record = record }

  func fetcher(_ fetcher: SessionFetcher, willSendRequest request: URLRequest) {
    record.touch("request sent")
  }
  func fetcher(_ fetcher: SessionFetcher, didReceiveResponse response: URLResponse) {
    record.touch("response head")
  }
  func fetcher(_ fetcher: SessionFetcher, didReceiveData data: Data) { record.touch("data") }
}
