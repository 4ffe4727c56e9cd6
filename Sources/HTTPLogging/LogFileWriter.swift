import Foundation
import SessionFetcher

/// Writes the files of the current run on a serial queue, off the fetcher's path.
///
/// The queue wakes up ``coalescingDelay`` after the first fetch that finds it idle ends, and writes
/// every fetch that ended meanwhile together: one wake-up of the queue, and one write each to
/// `index.html` and `log.har` for all of them (with many fetches in flight, a queued block, a
/// wake-up and three system calls per fetch were a large part of logging's cost). ``flush()`` writes
/// what is waiting at once, and so does the end of the process (`exit`, or `main` returning).
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
  /// The run ``openRun(settings:)`` last opened (or found failed), read without the queue.
  private let openedKey = Locked<RunKey?>(nil)
  /// Records waiting for the queue; a drain is queued when the first one arrives.
  private let pending = Locked<[PendingRecord]>([])

  /// How long the queue waits after the first fetch that finds it idle, gathering others.
  static let coalescingDelay = DispatchTimeInterval.milliseconds(5)

  struct RunKey: Equatable {
    var directory: URL
    var processName: String
    var generation: Int
    /// The run's folder exactly, when the caller chose it.
    var runDirectory: URL?
    /// The stamp in the run folder's name, when the caller chose it.
    var dateStamp: String?

    /// The run `settings` write to.
    init(_ settings: LoggingSettings) {
      directory = settings.effectiveDirectory
      processName = settings.effectiveProcessName
      generation = settings.runGeneration
      runDirectory = settings.runDirectory
      dateStamp = settings.dateStamp
    }
  }

  /// A finished fetch waiting for the queue, with its text log when it was already formatted.
  private struct PendingRecord {
    var prepared: PreparedRecord
    var key: RunKey
    var text: String?
  }

  /// An open run: its folder, and descriptors of the folder (files are created relative to it)
  /// and of the two files that grow.
  final class LogRun {
    let key: RunKey
    let folder: URL
    let folderDescriptor: Int32
    let harDescriptor: Int32
    let htmlDescriptor: Int32
    var fetchCount = 0
    var harEntryCount = 0
    /// Where the HAR file's closing brackets begin.
    var harTail: Int64 = 0

    init(key: RunKey, folder: URL, folderDescriptor: Int32, harDescriptor: Int32, htmlDescriptor: Int32) {
      self.key = key
      self.folder = folder
      self.folderDescriptor = folderDescriptor
      self.harDescriptor = harDescriptor
      self.htmlDescriptor = htmlDescriptor
    }

    deinit {
      close(folderDescriptor)
      close(harDescriptor)
      close(htmlDescriptor)
    }
  }

  /// The mode of every log file (owner read and write): logs hold URLs, headers and bodies.
  static let filePermissions: mode_t = 0o600
  /// The mode of every run folder, and of a logging directory the writer creates (owner only).
  static let folderPermissions: mode_t = 0o700

  static let indexFileName = "index.html"
  static let harFileName = "log.har"

  /// Queues the files of one fetch. `text` is its text log when no body of it gets a file of its
  /// own (the log then names no file, so the one made for ``SessionFetcher/log`` is the same).
  func write(_ prepared: PreparedRecord, text: String? = nil, settings: LoggingSettings) {
    let key = RunKey(settings)
    let isFirst = pending.withLock { records -> Bool in
      records.append(PendingRecord(prepared: prepared, key: key, text: text))
      return records.count == 1
    }
    if isFirst {
      Self.flushAtExit()
      queue.asyncAfter(deadline: .now() + Self.coalescingDelay) { self.drain() }
    }
  }

  /// Opens the run `settings` name, when it is not open yet: its folder, and the notice that names
  /// it, then come before the run's first fetch sends anything, not when that fetch ends, in the
  /// middle of whatever the program prints meanwhile (a progress line). Once per run: later calls
  /// only compare a key.
  func openRun(settings: LoggingSettings) {
    let key = RunKey(settings)
    guard openedKey.withLock({ $0 != key }) else { return }
    queue.sync {
      // What earlier fetches left waiting goes to their own run before this one replaces it.
      drain()
      guard failedKey != key else { return }
      do { _ = try currentRun(for: key) } catch { fail(key, error) }
    }
    openedKey.withLock { $0 = key }
  }

  /// Waits until every queued write is done.
  func flush() {
    queue.sync { drain() }
  }

  /// Registers, once per process, a flush of the process's writer when the process ends normally.
  private static func flushAtExit() {
    _ = exitHandlerRegistration
  }

  private static let exitHandlerRegistration: Void = {
    atexit { LoggingMonitor.shared.writer.flush() }
  }()

  /// Writes every waiting record: each fetch's own files, then the page's and the HAR file's
  /// additions of each run at once.
  private func drain() {
    let records = pending.withLock { records -> [PendingRecord] in
      defer { records = [] }
      return records
    }
    var batch: Batch?
    for record in records {
      guard let (run, entries) = writeFetchFiles(record) else { continue }
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
      try Self.writeAll(batch.page, to: batch.run.htmlDescriptor, at: nil) {
        batch.run.folder.appendingPathComponent(Self.indexFileName, isDirectory: false)
      }
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
  /// Writes what is waiting first (the folder of a run begins with its first write).
  var currentRunFolder: URL? {
    queue.sync {
      drain()
      return run?.folder
    }
  }

  /// Writes the fetch's text log and body files; returns its run and HAR entries.
  private func writeFetchFiles(_ record: PendingRecord) -> (LogRun, [Data])? {
    if failedKey == record.key { return nil }
    let prepared = record.prepared
    do {
      let run = try currentRun(for: record.key)
      run.fetchCount += 1
      let number = run.fetchCount
      let files = BodyFileNames.make(number: number, prepared: prepared)
      try writeBodies(prepared, files: files, in: run)
      let textFile = "fetch_\(number).txt"
      let text =
        (files.isEmpty ? record.text : nil) ?? TextLogFormatter.format(prepared, files: files)
      try Self.writeFile(Data((text + Self.textLogEnd).utf8), named: textFile, in: run)
      let entries = HARFormatter.entries(
        prepared, files: files, place: HARFormatter.RunPlace(number: number, textLog: textFile))
      return (run, entries)
    } catch {
      fail(record.key, error)
      return nil
    }
  }

  /// The line that ends each text log file.
  private static let textLogEnd = String(repeating: "-", count: 72) + "\n"

  private func currentRun(for key: RunKey) throws -> LogRun {
    if let run, run.key == key { return run }
    run = nil
    let folder = try Self.claimRunFolder(for: key)
    let htmlURL = folder.appendingPathComponent(Self.indexFileName)
    let harURL = folder.appendingPathComponent(Self.harFileName)
    let folderDescriptor = try Self.open(folder, O_RDONLY | O_DIRECTORY)
    let htmlDescriptor: Int32
    let harDescriptor: Int32
    do {
      htmlDescriptor = try Self.open(
        htmlURL, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, mode: Self.filePermissions)
    } catch {
      close(folderDescriptor)
      throw error
    }
    do {
      harDescriptor = try Self.open(harURL, O_WRONLY | O_CREAT | O_TRUNC, mode: Self.filePermissions)
    } catch {
      close(folderDescriptor)
      close(htmlDescriptor)
      throw error
    }
    let run = LogRun(
      key: key, folder: folder, folderDescriptor: folderDescriptor, harDescriptor: harDescriptor,
      htmlDescriptor: htmlDescriptor)
    let head = ViewerPage.head(processName: key.processName, runName: folder.lastPathComponent)
    try Self.writeAll(Data(head.utf8), to: htmlDescriptor, at: nil) { htmlURL }
    try Self.writeAll(Data((HARFormatter.prefix + HARFormatter.suffix).utf8), to: harDescriptor, at: 0) {
      harURL
    }
    run.harTail = Int64(HARFormatter.prefix.utf8.count)
    if key.runDirectory == nil { linkNewest(to: folder, key: key) }
    printLoggingNotice("logging fetches to \(folder.path)")
    self.run = run
    return run
  }

  /// The folder of a new run: the one the caller chose (created 0700 with its parents when
  /// missing, used as it is when it exists), else a new `<process>_log_<stamp>` folder in the
  /// logging directory.
  private static func claimRunFolder(for key: RunKey) throws -> URL {
    if let chosen = key.runDirectory {
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: chosen.path, isDirectory: &isDirectory) {
        guard isDirectory.boolValue else { throw writeError(chosen, errno: ENOTDIR) }
        return chosen
      }
      try FileManager.default.createDirectory(
        at: chosen.deletingLastPathComponent(), withIntermediateDirectories: true,
        attributes: [.posixPermissions: NSNumber(value: folderPermissions)])
      guard makeDirectory(chosen) || errno == EEXIST else { throw writeError(chosen, errno: errno) }
      return chosen
    }
    // A logging directory this creates is the owner's only; one that exists is left as it is.
    try FileManager.default.createDirectory(
      at: key.directory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: NSNumber(value: folderPermissions)])
    let base = "\(key.processName)_log_\(key.dateStamp ?? LogDates.runStamp(Date()))"
    var folder = key.directory.appendingPathComponent(base, isDirectory: true)
    var suffix = 1
    // `mkdir` fails when the name exists: claiming the folder is atomic, also across processes. It
    // is created 0700 at once (`FileManager` creates it 0777 less the umask, then changes it).
    while !makeDirectory(folder) {
      let code = errno
      suffix += 1
      guard code == EEXIST, suffix < 10_000 else { throw writeError(folder, errno: code) }
      folder = key.directory.appendingPathComponent("\(base)_\(suffix)", isDirectory: true)
    }
    return folder
  }

  /// Points `<process>_log_newest.html` at the run's index (best effort).
  private func linkNewest(to folder: URL, key: RunKey) {
    let link = key.directory.appendingPathComponent("\(key.processName)_log_newest.html")
    let manager = FileManager.default
    try? manager.removeItem(at: link)
    try? manager.createSymbolicLink(
      atPath: link.path, withDestinationPath: folder.lastPathComponent + "/" + Self.indexFileName)
  }

  private func writeBodies(_ prepared: PreparedRecord, files: BodyFileNames, in run: LogRun) throws {
    for (index, exchange) in prepared.record.exchanges.enumerated() {
      if let name = files.request[index], let body = exchange.requestBody {
        try Self.writeFile(bodyFileData(body), named: name, in: run)
      }
      if let name = files.response[index] {
        try Self.writeFile(bodyFileData(exchange.responseBody), named: name, in: run)
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
    let descriptor = try open(url, O_WRONLY | O_CREAT | O_TRUNC, mode: filePermissions)
    defer { close(descriptor) }
    try writeAll(data, to: descriptor, at: nil) { url }
  }

  /// ``writeFile(_:to:)`` for a file of the run's folder, created relative to the folder's
  /// descriptor (the kernel resolves one name instead of the whole path).
  private static func writeFile(_ data: Data, named name: String, in run: LogRun) throws {
    let descriptor = openat(
      run.folderDescriptor, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, filePermissions)
    guard descriptor >= 0 else {
      throw writeError(run.folder.appendingPathComponent(name, isDirectory: false))
    }
    defer { close(descriptor) }
    try writeAll(data, to: descriptor, at: nil) {
      run.folder.appendingPathComponent(name, isDirectory: false)
    }
  }

  /// Creates the folder at `url` with ``folderPermissions``; false with `errno` set when it cannot.
  private static func makeDirectory(_ url: URL) -> Bool {
    url.withUnsafeFileSystemRepresentation { path in
      guard let path else {
        errno = EINVAL
        return false
      }
      return mkdir(path, folderPermissions) == 0
    }
  }

  /// Opens `url` with `flags` (and `O_CLOEXEC`).
  private static func open(_ url: URL, _ flags: Int32, mode: mode_t = 0) throws -> Int32 {
    let descriptor = url.withUnsafeFileSystemRepresentation { path -> Int32 in
      guard let path else { return -1 }
      return posixOpen(path, flags | O_CLOEXEC, mode)
    }
    guard descriptor >= 0 else { throw writeError(url) }
    return descriptor
  }

  /// Writes all of `data` to `descriptor`, at its position (`offset` nil) or at `offset`.
  private static func writeAll(
    _ data: Data, to descriptor: Int32, at offset: Int64?, url: () -> URL
  ) throws {
    try data.withUnsafeBytes { buffer in
      var done = 0
      while done < buffer.count {
        let bytes = buffer.baseAddress! + done
        let count = buffer.count - done
        let written =
          if let offset { pwrite(descriptor, bytes, count, off_t(offset) + off_t(done)) } else {
            posixWrite(descriptor, bytes, count)
          }
        if written < 0 {
          let code = errno
          if code == EINTR { continue }
          throw writeError(url(), errno: code)
        }
        done += written
      }
    }
  }

  /// A capped body gets a note after its bytes (text) or in a companion line (binary: none, the
  /// size is in the logs).
  private func bodyFileData(_ body: LoggedBody) -> Data {
    guard body.isTruncated, String(data: body.data, encoding: .utf8) != nil else { return body.data }
    return body.data + Data("\n\n[truncated: \(body.data.count) of \(body.length) bytes logged]\n".utf8)
  }

  /// Writes the new entries over the HAR file's closing brackets, then the brackets again, so the
  /// file is valid JSON after every drain.
  private func appendHAREntries(_ entries: [Data], to run: LogRun) throws {
    guard !entries.isEmpty else { return }
    var chunk = Data()
    for entry in entries {
      if run.harEntryCount > 0 { chunk.append(contentsOf: ",\n".utf8) }
      chunk.append(contentsOf: "      ".utf8)
      chunk.append(entry)
      run.harEntryCount += 1
    }
    let tail = run.harTail + Int64(chunk.count)
    chunk.append(contentsOf: HARFormatter.suffix.utf8)
    try Self.writeAll(chunk, to: run.harDescriptor, at: run.harTail) {
      run.folder.appendingPathComponent(Self.harFileName, isDirectory: false)
    }
    run.harTail = tail
  }
}

/// `write(2)` under a name that ``LogFileWriter``'s own `write` does not shadow.
private func posixWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
  write(descriptor, bytes, count)
}

/// `open(2)` under a name that ``LogFileWriter``'s own `open` does not shadow.
private func posixOpen(_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32 {
  open(path, flags, mode)
}

/// The error of a failed write of `url`, with `errno` as the underlying error.
private func writeError(_ url: URL, errno code: Int32 = errno) -> CocoaError {
  let code = POSIXErrorCode(rawValue: code) ?? .EIO
  return CocoaError(
    .fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSUnderlyingErrorKey: POSIXError(code)])
}
