import Foundation
import SessionFetcher

/// Writes the files of the current run on a serial queue, off the fetcher's path.
///
/// Fetches that end while the queue is busy are written together: one wake-up of the queue, and
/// one write each to `index.html` and `log.har` for all of them (with many fetches in flight, a
/// queued block, a wake-up and three system calls per fetch were a large part of logging's cost).
///
/// A run begins at the first fetch logged to files (or after the directory or process name
/// changed): a new folder `<process>_log_<yyyy-MM-dd_HH-mm-ss>` (with `_2`, `_3`… when that name is
/// taken), `index.html` and `log.har` in it, and the `<process>_log_newest.html` symlink beside it.
/// A write failure prints once and turns file output off until the next run; the fetch is never
/// affected.
final class LogFileWriter: @unchecked Sendable {
  // `@unchecked Sendable`: `run` and `failedKey` are only touched on `queue`.
  private let queue = DispatchQueue(label: "SessionFetcher.HTTPLogging.writer")
  private var run: LogRun?
  private var failedKey: RunKey?
  /// Records waiting for the queue; a drain is queued when the first one arrives.
  private let pending = Locked<[(PreparedRecord, RunKey)]>([])

  struct RunKey: Equatable {
    var directory: URL
    var processName: String
    var generation: Int
  }

  final class LogRun {
    let key: RunKey
    let folder: URL
    let harHandle: FileHandle
    let htmlHandle: FileHandle
    var fetchCount = 0
    var harEntryCount = 0
    /// Where the HAR file's closing brackets begin.
    var harTail: UInt64 = 0

    init(key: RunKey, folder: URL, harHandle: FileHandle, htmlHandle: FileHandle) {
      self.key = key
      self.folder = folder
      self.harHandle = harHandle
      self.htmlHandle = htmlHandle
    }

    deinit {
      try? harHandle.close()
      try? htmlHandle.close()
    }
  }

  static let indexFileName = "index.html"
  static let harFileName = "log.har"

  /// Queues the files of one fetch.
  func write(_ prepared: PreparedRecord, settings: LoggingSettings) {
    let key = RunKey(
      directory: settings.effectiveDirectory, processName: settings.effectiveProcessName,
      generation: settings.runGeneration)
    let isFirst = pending.withLock { records -> Bool in
      records.append((prepared, key))
      return records.count == 1
    }
    if isFirst { queue.async { self.drain() } }
  }

  /// Waits until every queued write is done.
  func flush() {
    queue.sync { drain() }
  }

  /// Writes every waiting record: each fetch's own files, then the page's and the HAR file's
  /// additions of each run at once.
  private func drain() {
    let records = pending.withLock { records -> [(PreparedRecord, RunKey)] in
      defer { records = [] }
      return records
    }
    var batch: Batch?
    for (prepared, key) in records {
      guard let (run, entries) = writeFetchFiles(prepared, key: key) else { continue }
      if let current = batch, current.run !== run {
        // A new run began (the directory or process name changed): the last one's part first.
        append(current)
        batch = nil
      }
      if batch == nil { batch = Batch(run: run) }
      batch?.page.append(ViewerPage.dataElement(entries))
      batch?.entries += entries
    }
    if let batch { append(batch) }
  }

  /// What a drain adds to one run's page and HAR file.
  private struct Batch {
    let run: LogRun
    var page = Data()
    var entries: [Data] = []
  }

  private func append(_ batch: Batch) {
    do {
      // The page gets the same entries as the HAR file, appended: the page is never rewritten.
      try batch.run.htmlHandle.write(contentsOf: batch.page)
      try appendHAREntries(batch.entries, to: batch.run)
    } catch {
      fail(batch.run.key, error)
    }
  }

  private func fail(_ key: RunKey, _ error: any Error) {
    failedKey = key
    run = nil
    printLoggingNotice(
      "cannot write logs in \(key.directory.path) (\(error)); file logging is off until the logging "
        + "directory changes. The fetches are not affected.")
  }

  /// The current run's folder, once a fetch was logged to files.
  var currentRunFolder: URL? {
    queue.sync { run?.folder }
  }

  /// Ends the current run; the next fetch logged to files begins a new one.
  func endRun() {
    queue.sync {
      run = nil
      failedKey = nil
    }
  }

  /// Writes the fetch's text log and body files; returns its run and HAR entries.
  private func writeFetchFiles(_ prepared: PreparedRecord, key: RunKey) -> (LogRun, [Data])? {
    if failedKey == key { return nil }
    do {
      let run = try currentRun(for: key)
      run.fetchCount += 1
      let number = run.fetchCount
      let files = BodyFileNames.make(number: number, prepared: prepared)
      try writeBodies(prepared, files: files, in: run.folder)
      let textFile = "fetch_\(number).txt"
      let text = TextLogFormatter.format(prepared, files: files) + String(repeating: "-", count: 72) + "\n"
      try Self.writeFile(Data(text.utf8), to: run.folder.appendingPathComponent(textFile, isDirectory: false))
      let entries = HARFormatter.entries(
        prepared, files: files, place: HARFormatter.RunPlace(number: number, textLog: textFile))
      return (run, entries)
    } catch {
      fail(key, error)
      return nil
    }
  }

  private func currentRun(for key: RunKey) throws -> LogRun {
    if let run, run.key == key { return run }
    run = nil
    let manager = FileManager.default
    try manager.createDirectory(at: key.directory, withIntermediateDirectories: true)
    let base = "\(key.processName)_log_\(LogDates.runStamp(Date()))"
    var folder = key.directory.appendingPathComponent(base, isDirectory: true)
    var suffix = 1
    while true {
      do {
        // Creation fails when the name exists: claiming the folder is atomic, also across processes.
        try manager.createDirectory(at: folder, withIntermediateDirectories: false)
        break
      } catch {
        suffix += 1
        guard manager.fileExists(atPath: folder.path), suffix < 10_000 else { throw error }
        folder = key.directory.appendingPathComponent("\(base)_\(suffix)", isDirectory: true)
      }
    }
    let htmlURL = folder.appendingPathComponent(Self.indexFileName)
    let head = ViewerPage.head(processName: key.processName, runName: folder.lastPathComponent)
    try Self.writeFile(Data(head.utf8), to: htmlURL)
    let harURL = folder.appendingPathComponent(Self.harFileName)
    try Self.writeFile(Data((HARFormatter.prefix + HARFormatter.suffix).utf8), to: harURL)
    let run = LogRun(
      key: key, folder: folder, harHandle: try FileHandle(forUpdating: harURL),
      htmlHandle: try FileHandle(forWritingTo: htmlURL))
    try run.htmlHandle.seekToEnd()
    run.harTail = UInt64(HARFormatter.prefix.utf8.count)
    linkNewest(to: folder, key: key)
    printLoggingNotice("logging fetches to \(folder.path)")
    self.run = run
    return run
  }

  /// Points `<process>_log_newest.html` at the run's index (best effort).
  private func linkNewest(to folder: URL, key: RunKey) {
    let link = key.directory.appendingPathComponent("\(key.processName)_log_newest.html")
    let manager = FileManager.default
    try? manager.removeItem(at: link)
    try? manager.createSymbolicLink(
      atPath: link.path, withDestinationPath: folder.lastPathComponent + "/" + Self.indexFileName)
  }

  private func writeBodies(_ prepared: PreparedRecord, files: BodyFileNames, in folder: URL) throws {
    for (index, exchange) in prepared.record.exchanges.enumerated() {
      if let name = files.request[index], let body = exchange.requestBody {
        try Self.writeFile(bodyFileData(body), to: folder.appendingPathComponent(name, isDirectory: false))
      }
      if let name = files.response[index] {
        try Self.writeFile(
          bodyFileData(exchange.responseBody), to: folder.appendingPathComponent(name, isDirectory: false))
      }
    }
  }

  /// Creates (or truncates) the file at `url` and writes `data` to it, without `fsync`.
  ///
  /// Every log file is new, with a name of its own in the run's folder, and a debug log needs no
  /// durability. `Data.write(to:)` syncs each file to disk, with or without `.atomic` (which adds a
  /// temporary file and a rename): two `fsync` calls per logged fetch, which on a laptop's disk
  /// can cost more than the fetch.
  static func writeFile(_ data: Data, to url: URL) throws {
    let descriptor = url.withUnsafeFileSystemRepresentation { path -> Int32 in
      guard let path else { return -1 }
      return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    }
    guard descriptor >= 0 else { throw writeError(url) }
    defer { close(descriptor) }
    try data.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let written = posixWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          throw writeError(url)
        }
        offset += written
      }
    }
  }

  /// A capped body gets a note after its bytes (text) or in a companion line (binary: none, the
  /// size is in the logs).
  private func bodyFileData(_ body: LoggedBody) -> Data {
    guard body.isTruncated, String(data: body.data, encoding: .utf8) != nil else { return body.data }
    return body.data + Data("\n\n[truncated: \(body.data.count) of \(body.length) bytes logged]\n".utf8)
  }

  /// Rewrites the tail of the HAR file: the new entries, then the closing brackets again, so the
  /// file is valid JSON after every fetch.
  private func appendHAREntries(_ entries: [Data], to run: LogRun) throws {
    guard !entries.isEmpty else { return }
    var chunk = Data()
    for entry in entries {
      if run.harEntryCount > 0 { chunk.append(Data(",\n".utf8)) }
      chunk.append(Data("      ".utf8))
      chunk.append(entry)
      run.harEntryCount += 1
    }
    let tail = run.harTail + UInt64(chunk.count)
    chunk.append(Data(HARFormatter.suffix.utf8))
    try run.harHandle.seek(toOffset: run.harTail)
    try run.harHandle.write(contentsOf: chunk)
    run.harTail = tail
  }
}

/// `write(2)` under a name that ``LogFileWriter``'s own `write` does not shadow.
private func posixWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
  write(descriptor, bytes, count)
}

/// The error of a failed write of `url`, with `errno` as the underlying error.
private func writeError(_ url: URL) -> CocoaError {
  let code = POSIXErrorCode(rawValue: errno) ?? .EIO
  return CocoaError(
    .fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSUnderlyingErrorKey: POSIXError(code)])
}
