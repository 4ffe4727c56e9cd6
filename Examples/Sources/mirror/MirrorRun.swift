import FetcherService
import Foundation
import SessionFetcher

/// What a run is asked to do.
struct MirrorOptions: Sendable {
  var listPath: String
  var folder: URL
  var perHost = 4
  var retries = 3
  /// The first retry's delay; nil keeps the library's (a random 1–2 s).
  var retryInterval: TimeInterval?
  var engine: FetcherEngine?
  var insecureHTTP = false
}

/// A list or a folder the run cannot use: one line, exit status 2.
struct MirrorSetupError: Error, CustomStringConvertible {
  let description: String
}

/// What a run did.
struct MirrorOutcome: Sendable {
  var downloaded = 0
  var alreadyThere = 0
  var bytes: Int64 = 0
  var failures: [(url: URL, reason: String)] = []
  var keptForResume: [String] = []
  var skippedLines: [Int] = []
  var interrupted = false

  var exitStatus: Int32 { interrupted ? 130 : failures.isEmpty && skippedLines.isEmpty ? 0 : 1 }

  func printSummary() {
    var parts = ["\(downloaded) downloaded (\(ProgressLine.size(bytes)))", "\(alreadyThere) already there"]
    if !failures.isEmpty { parts.append("\(failures.count) failed") }
    if !keptForResume.isEmpty { parts.append("\(keptForResume.count) kept to resume on the next run") }
    if !skippedLines.isEmpty { parts.append("\(skippedLines.count) list lines skipped") }
    Console.out((interrupted ? "mirror: interrupted: " : "mirror: ") + parts.joined(separator: ", "))
    for failure in failures { Console.out("  failed: \(failure.url.absoluteString): \(failure.reason)") }
  }
}

/// One run over the list: a `FetcherService` for every download (its per-host limit, retries and
/// callback queue), a resume token beside each unfinished file, and Ctrl-C stopping everything.
final class MirrorRun: Sendable {
  private enum FileResult {
    case downloaded(Int64)
    case alreadyThere
    case failed(String, kept: Bool)
    case stopped(kept: Bool)
  }

  let service = FetcherService()
  private let options: MirrorOptions
  private let progress: ProgressLine
  private let stopping = MirrorLock(false)

  init(options: MirrorOptions, showsProgress: Bool) {
    self.options = options
    progress = ProgressLine(isShown: showsProgress)
    service.callbackQueue = DispatchQueue(label: "mirror callbacks")
    service.maxRunningFetchersPerHost = options.perHost
    // Retries: 408, 429, 502–504 and dropped connections, waiting at least what `Retry-After` asks.
    service.isRetryEnabled = true
    service.maxRetryCount = options.retries
    if let interval = options.retryInterval { service.minRetryInterval = interval }
    service.allowLocalhostRequest = true
    if options.insecureHTTP { service.allowedInsecureSchemes = ["http"] }
    if let engine = options.engine { service.engine = engine }
  }

  func run() async throws -> MirrorOutcome {
    let list: URLList
    do {
      list = try URLList(contentsOf: options.listPath) { Console.error("mirror: \($0)") }
    } catch {
      throw MirrorSetupError(
        description: "cannot read the URL list \(options.listPath): \(Self.reason(error))")
    }
    try prepareFolder()
    var outcome = MirrorOutcome(skippedLines: list.skippedLines)
    progress.start(total: list.entries.count)
    defer { progress.finish() }

    let work = Task { [self] in
      await withTaskGroup(of: (MirrorEntry, FileResult).self) { group in
        for entry in list.entries {
          group.addTask { (entry, await self.download(entry)) }
        }
        var results: [(MirrorEntry, FileResult)] = []
        for await result in group { results.append(result) }
        return results
      }
    }
    Interrupts.setHandler { [self] in stop(cancelling: work) }
    let results = await work.value
    Interrupts.setHandler(nil)

    outcome.interrupted = stopping.withLock { $0 }
    for (entry, result) in results.sorted(by: { $0.0.line < $1.0.line }) {
      switch result {
      case .downloaded(let bytes):
        outcome.downloaded += 1
        outcome.bytes += bytes
      case .alreadyThere: outcome.alreadyThere += 1
      case .failed(let reason, let kept):
        outcome.failures.append((entry.url, reason))
        if kept { outcome.keptForResume.append(entry.name) }
      case .stopped(let kept):
        if kept { outcome.keptForResume.append(entry.name) }
      }
    }
    return outcome
  }

  /// Ctrl-C stops every download at once, keeping what each has on disk for the next run; a second
  /// Ctrl-C ends the process at once.
  private func stop(cancelling work: Task<[(MirrorEntry, FileResult)], Never>) {
    let first = stopping.withLock { wasStopping in
      defer { wasStopping = true }
      return !wasStopping
    }
    guard first else { exit(130) }
    progress.note("mirror: stopping; unfinished downloads are kept to resume (Ctrl-C again to quit now)")
    work.cancel()  // Downloads not begun yet never start.
    service.stopAllFetchers()
  }

  /// Creates the folder and checks that a file can be written there, before any download.
  private func prepareFolder() throws {
    let manager = FileManager.default
    let probe = options.folder.appendingPathComponent(".mirror-write-check-\(getpid())")
    do {
      try manager.createDirectory(at: options.folder, withIntermediateDirectories: true)
      try Data().write(to: probe)
      try manager.removeItem(at: probe)
    } catch {
      // Foundation says little when a parent is a file: name it.
      var parent = options.folder
      while !manager.fileExists(atPath: parent.path), parent.pathComponents.count > 1 {
        parent = parent.deletingLastPathComponent()
      }
      var isFolder: ObjCBool = false
      let why =
        manager.fileExists(atPath: parent.path, isDirectory: &isFolder) && !isFolder.boolValue
        ? "\(parent.path) is not a folder" : Self.reason(error)
      throw MirrorSetupError(description: "cannot write to \(options.folder.path): \(why)")
    }
  }

  private func download(_ entry: MirrorEntry) async -> FileResult {
    let destination = options.folder.appendingPathComponent(entry.name)
    let tokenFile = TokenFile(options.folder.appendingPathComponent(".\(entry.name).resume"))
    if FileManager.default.fileExists(atPath: destination.path) {
      tokenFile.remove()
      progress.fileEnded(failed: false)
      return .alreadyThere
    }
    let fetcher = makeFetcher(entry, destination: destination, tokenFile: tokenFile)
    do {
      _ = try await fetcher.beginFetch()
      tokenFile.remove()
      progress.fileEnded(failed: false)
      let size = (try? destination.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
      return .downloaded(Int64(size))
    } catch {
      // A stopped or failed download of a server that takes ranges leaves a part file and a token.
      let kept = fetcher.downloadResumeData.map { tokenFile.save($0) } ?? false
      if !kept { tokenFile.remove() }
      if stopping.withLock({ $0 }) { return .stopped(kept: kept) }
      progress.fileEnded(failed: true)
      progress.note("mirror: \(entry.url.absoluteString): \(Self.reason(error))")
      return .failed(Self.reason(error), kept: kept)
    }
  }

  /// A fetcher that goes on from the token an earlier run left, or a new one.
  private func makeFetcher(_ entry: MirrorEntry, destination: URL, tokenFile: TokenFile) -> SessionFetcher {
    let fetcher: SessionFetcher
    if let token = tokenFile.saved, let resumed = service.fetcher(resumeData: token),
      resumed.request?.url == entry.url, resumed.destinationFileURL == destination
    {
      fetcher = resumed
    } else {
      tokenFile.remove()
      fetcher = service.fetcher(url: entry.url)
      fetcher.destinationFileURL = destination
    }
    fetcher.keepsPartialDownloadForResume = true
    fetcher.downloadProgressBlock = { [weak fetcher, progress] written, _, _ in
      progress.add(bytes: written)
      // Saved while the download runs, so that even a killed process leaves a token for its part file.
      if let token = fetcher?.partFileResumeData { _ = tokenFile.save(token) }
    }
    return fetcher
  }

  /// A short reason for a failed file.
  static func reason(_ error: any Error) -> String {
    if let error = error as? SessionFetcherError { return "\(error)" }
    if let error = error as? URLError {
      switch error.code {
      case .networkConnectionLost: return "the connection was lost"
      case .timedOut: return "timed out"
      case .cannotConnectToHost: return "cannot connect to the host"
      case .cannotFindHost: return "unknown host"
      default: return "network error \(error.code.rawValue)"
      }
    }
    if let error = error as? CocoaError {
      switch error.code {
      case .fileReadNoSuchFile, .fileNoSuchFile: return "no such file"
      case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied"
      case .fileWriteOutOfSpace: return "the disk is full"
      case .fileWriteVolumeReadOnly: return "a read-only file system"
      default: break
      }
    }
    return error.localizedDescription
  }
}

/// The resume token of one file, `.NAME.resume` beside the part file, written only when it changes.
final class TokenFile: Sendable {
  let url: URL
  private let last = MirrorLock(Data?.none)

  init(_ url: URL) { self.url = url }

  var saved: Data? { try? Data(contentsOf: url) }

  /// Writes `token` unless it is the one written last; false when it could not be written.
  func save(_ token: Data) -> Bool {
    last.withLock { last in
      guard token != last else { return true }
      guard (try? token.write(to: url, options: .atomic)) != nil else { return false }
      last = token
      return true
    }
  }

  func remove() {
    last.withLock { $0 = nil }
    try? FileManager.default.removeItem(at: url)
  }
}

/// A value behind a lock, for the state callbacks share.
final class MirrorLock<Value>: @unchecked Sendable {
  // `@unchecked Sendable`: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
