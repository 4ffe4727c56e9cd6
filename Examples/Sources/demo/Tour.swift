import FetcherTesting
import Foundation
import HTTPLogging
import SessionFetcher

/// The guided tour: an in-process ``TestServer`` on 127.0.0.1 and one short section per feature.
///
/// Every fetcher calls back on ``callbackQueue``, a private serial queue, so nothing waits for the
/// main run loop (which an `async` main never runs).
final class Tour: Sendable {
  let server: TestServer
  let callbackQueue = DispatchQueue(label: "SessionFetcherDemo.callbacks")
  /// Downloads and logs of this run; emptied when the next run starts.
  let workFolder: URL
  private let outcomes = LockedOutcomes()

  /// The longest the whole tour may take before it is declared stuck.
  static let deadline: TimeInterval = 60

  init() throws {
    server = try TestServer()
    workFolder = FileManager.default.temporaryDirectory.appendingPathComponent("SessionFetcherDemo")
    try? FileManager.default.removeItem(at: workFolder)
    try FileManager.default.createDirectory(at: workFolder, withIntermediateDirectories: true)
  }

  /// Runs every section in order; throws the first unexpected failure.
  static func run() async throws {
    DispatchQueue.global().asyncAfter(deadline: .now() + deadline) {
      Console.writeError("demo: error: the tour did not finish within \(Int(deadline)) s\n")
      exit(1)
    }
    let tour = try Tour()
    defer { tour.server.stop() }
    let start = Date()
    Console.say("SessionFetcher tour — test server at \(tour.server.baseURL.absoluteString) (loopback only)")
    Console.say("Work folder: \(tour.workFolder.path)")
    tour.startLogging()

    try await tour.section(1, "Retries with backoff") { try await tour.showRetries() }
    try await tour.section(2, "Throttled burst (FetcherService)") { try await tour.showThrottledBurst() }
    try await tour.section(3, "ETag-cached refetch (FetcherService)") { try await tour.showETagCache() }
    try await tour.section(4, "Multipart upload (MIMEDocument)") { try await tour.showMultipartUpload() }
    try await tour.section(5, "Download to a file with progress") { try await tour.showDownload() }
    try await tour.section(6, "Cancelling a fetch") { try await tour.showCancellation() }
    try await tour.section(7, "HTTP logs (HTTPLogging)") { try await tour.showLogs() }

    let (shown, skipped) = tour.outcomes.summary()
    Console.say()
    Console.say(
      "Tour finished in \(Format.seconds(Date().timeIntervalSince(start))): \(shown.count) sections shown"
        + (skipped.isEmpty
          ? "." : ", \(skipped.count) skipped (\(skipped.map(String.init).joined(separator: ", "))).")
    )
  }

  /// Prints the heading, runs `body`, and records whether the section ran or was skipped.
  private func section(
    _ number: Int, _ title: String, _ body: () async throws -> SectionOutcome
  ) async throws {
    Console.heading(number, title)
    do {
      switch try await body() {
      case .shown:
        outcomes.record(number, shown: true)
      case .skipped(let reason):
        Console.detail("skipped: \(reason)")
        outcomes.record(number, shown: false)
      }
    } catch {
      let message = (error as? DemoFailure)?.description ?? Format.error(error)
      throw DemoFailure("section \(number) (\(title)) failed: \(message)")
    }
  }

  /// A fetcher for `pathAndQuery` on the test server, calling back on the tour's queue.
  func makeFetcher(_ pathAndQuery: String) -> SessionFetcher {
    let fetcher = SessionFetcher.fetcher(url: server.url(pathAndQuery))
    configure(fetcher)
    return fetcher
  }

  /// What every fetcher of the tour needs: plain http is allowed to loopback only, and callbacks
  /// run on the private serial queue.
  func configure(_ fetcher: SessionFetcher) {
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = callbackQueue
  }
}

/// Whether a section ran, or why it was skipped.
enum SectionOutcome {
  case shown
  case skipped(String)
}

/// The sections shown and skipped so far.
///
/// `@unchecked Sendable`: `shown` and `skipped` are only touched under `lock`.
private final class LockedOutcomes: @unchecked Sendable {
  private let lock = NSLock()
  private var shown: [Int] = []
  private var skipped: [Int] = []

  func record(_ number: Int, shown wasShown: Bool) {
    lock.withLock {
      if wasShown { shown.append(number) } else { skipped.append(number) }
    }
  }

  func summary() -> (shown: [Int], skipped: [Int]) {
    lock.withLock { (shown, skipped) }
  }
}
