import FetcherTesting
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Crash and resume: a child process downloading (or uploading) is killed with SIGKILL at a random
/// byte, and a new process continues from what the first one saved, until the result is
/// sha256-identical to the source. Prints its figures and exits non-zero unless every run passed.
///
///     crash-resume [--runs N] [--download-mib N] [--upload-mib N] [--chunk-mib N] [--only download|upload]
///                  [--port N] [--time-limit SECONDS]
///
/// The engine is the library's default (`SESSIONFETCHER_ENGINE=urlSession|libcurl`), inherited by
/// the children. Downloads come from an nginx of its own (`nginx` on the PATH) serving a random
/// file; uploads go to a `FetcherTesting` server in this process, which speaks the resumable upload
/// protocol and keeps what it received across the child processes.
@main
enum CrashResume {
  static func main() {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if let mode = arguments.first, let status = runChild(mode, Array(arguments.dropFirst())) {
      exit(status)
    }
    var options = Options()
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      let value = iterator.next() ?? ""
      switch argument {
      case "--runs": options.runs = Int(value) ?? options.runs
      case "--download-mib": options.downloadBytes = (Int64(value) ?? 0) << 20
      case "--upload-mib": options.uploadBytes = (Int64(value) ?? 0) << 20
      case "--chunk-mib": options.chunkBytes = max(1, Int64(value) ?? 4) << 20
      case "--only": options.only = value
      case "--port": options.port = UInt16(value) ?? options.port
      case "--time-limit": options.timeLimit = TimeInterval(value) ?? options.timeLimit
      default:
        print(
          "usage: crash-resume [--runs N] [--download-mib N] [--upload-mib N] [--chunk-mib N]"
            + " [--only download|upload] [--port N] [--time-limit SECONDS]")
        exit(2)
      }
    }
    do {
      exit(try Parent(options: options).run() ? 0 : 1)
    } catch {
      print("crash-resume: FAIL: \(error)")
      exit(1)
    }
  }

  /// Runs a child mode (see ``Child``); nil when `mode` is not one.
  static func runChild(_ mode: String, _ arguments: [String]) -> Int32? {
    let urls = arguments.map { URL(fileURLWithPath: $0) }
    switch (mode, arguments.count) {
    case ("download", 3):
      guard let url = URL(string: arguments[0]) else { return 2 }
      return Child.download(url: url, destination: urls[1], tokenFile: urls[2])
    case ("download-resume", 1):
      return Child.resumeDownload(tokenFile: urls[0])
    case ("upload", 4):
      guard let url = URL(string: arguments[0]), let chunk = Int64(arguments[3]) else { return 2 }
      return Child.upload(start: url, file: urls[1], locationFile: urls[2], chunkSize: chunk)
    case ("upload-resume", 3):
      guard let chunk = Int64(arguments[2]) else { return 2 }
      return Child.resumeUpload(locationFile: urls[0], file: urls[1], chunkSize: chunk)
    default:
      return nil
    }
  }
}

struct Options {
  var runs = 20
  var downloadBytes: Int64 = 256 << 20
  /// Smaller than the download by default: the in-process server takes uploads at about a third
  /// of nginx's download speed, and 20 runs of each must fit CI's few minutes per engine.
  var uploadBytes: Int64 = 64 << 20
  var chunkBytes: Int64 = 4 << 20
  var only: String?
  var port: UInt16 = 27_591
  /// Per kind: runs not started by then are reported as not run (a failure).
  var timeLimit: TimeInterval = 110
}

/// What one kind of transfer (download or upload) gave over its runs.
struct Figures {
  var kind: String
  var runs = 0
  /// The random byte counts at which each kill was meant to land.
  var killTargets: [Int64] = []
  /// Where each kill landed: bytes in the part file (downloads) or reported sent (uploads).
  var killPoints: [Int64] = []
  var resumedFrom: [Int64] = []
  var sha256Equal = 0
  var partialAtDestination = 0
  /// Runs done again because the child finished before the kill point was reached.
  var childFinishedFirst = 0
  var failures: [String] = []
  var seconds: TimeInterval = 0

  func summary(engine: String, planned: Int) -> String {
    let mib = { (bytes: Int64) in String(format: "%.1f", Double(bytes) / 1_048_576) }
    return """
      \(kind) [\(engine)]: runs \(runs)/\(planned), sha256 equal \(sha256Equal)/\(planned), \
      partial at destination \(partialAtDestination), child finished before its kill \(childFinishedFirst), \
      failures \(failures.count), \(String(format: "%.1f", seconds)) s
        kill targets (MiB):  \(killTargets.map(mib).joined(separator: " "))
        killed at (MiB):     \(killPoints.map(mib).joined(separator: " "))
        resumed from (MiB):  \(resumedFrom.map(mib).joined(separator: " "))
      """
  }
}

/// The parent: servers, the runs, the checks.
struct Parent {
  var options: Options
  let engine = ProcessInfo.processInfo.environment["SESSIONFETCHER_ENGINE"] ?? "urlSession"
  let executable: String
  let work: URL

  init(options: Options) throws {
    self.options = options
    guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
      throw CrashResumeError("cannot read /proc/self/exe")
    }
    executable = path
    work = FileManager.default.temporaryDirectory.appendingPathComponent("crash-resume-\(getpid())")
  }

  func run() throws -> Bool {
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    // nginx's worker may run as another user: it must reach the served file.
    chmod(work.path, 0o755)
    defer { try? FileManager.default.removeItem(at: work) }
    print(
      "crash-resume: engine \(engine), \(options.runs) runs each, download \(options.downloadBytes >> 20) MiB,"
        + " upload \(options.uploadBytes >> 20) MiB in \(options.chunkBytes >> 20) MiB chunks")
    var all: [Figures] = []
    if options.only == nil || options.only == "download" { all.append(try downloads()) }
    if options.only == nil || options.only == "upload" { all.append(try uploads()) }
    var passed = true
    for figures in all {
      print(figures.summary(engine: engine, planned: options.runs))
      for failure in figures.failures { print("    - \(failure)") }
      passed =
        passed && figures.failures.isEmpty && figures.sha256Equal == options.runs
        && figures.partialAtDestination == 0
    }
    print("crash-resume [\(engine)]: \(passed ? "PASS" : "FAIL")")
    return passed
  }

  /// A kill point: uniformly between 1 % and 95 % of `total`, so that the child is still
  /// transferring when the parent sees it.
  func killPoint(_ total: Int64) -> Int64 {
    Int64.random(in: max(1, total / 100)...max(1, total * 95 / 100))
  }

  // MARK: - Downloads

  func downloads() throws -> Figures {
    var figures = Figures(kind: "download")
    let served = work.appendingPathComponent("www")
    try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
    chmod(served.path, 0o755)
    let source = served.appendingPathComponent("source.bin")
    try makeRandomFile(source, count: options.downloadBytes)
    chmod(source.path, 0o644)
    let sourceDigest = try sha256(of: source)
    let nginx = try Nginx(root: served, folder: work, port: options.port)
    defer { nginx.stop() }
    let url = "http://127.0.0.1:\(options.port)/source.bin"
    try repeatRuns(&figures) { run, figures in
      try downloadRun(run, url: url, sourceDigest: sourceDigest, nginx: nginx, figures: &figures)
    }
    return figures
  }

  /// Makes `options.runs` runs of `body` (a run that asks to be made again does not count), within
  /// the time limit, and records how many and how long.
  func repeatRuns(_ figures: inout Figures, _ body: (Int, inout Figures) throws -> RunOutcome) rethrows {
    let started = Date()
    var run = 0
    while run < options.runs {
      if Date().timeIntervalSince(started) > options.timeLimit {
        figures.failures.append("time limit reached after \(run) runs")
        break
      }
      if try body(run, &figures) == .again { continue }
      run += 1
      figures.runs = run
    }
    figures.seconds = Date().timeIntervalSince(started)
  }

  enum RunOutcome { case done, again }

  func downloadRun(
    _ run: Int, url: String, sourceDigest: String, nginx: Nginx, figures: inout Figures
  ) throws -> RunOutcome {
    let folder = work.appendingPathComponent("download")
    try? FileManager.default.removeItem(at: folder)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let destination = folder.appendingPathComponent("file.bin")
    let tokenFile = work.appendingPathComponent("download.token")
    try? FileManager.default.removeItem(at: tokenFile)
    let total = options.downloadBytes
    let target = killPoint(total)
    func fail(_ text: String) { figures.failures.append("download run \(run + 1): \(text)") }
    let partFiles = { contents(of: folder).filter { $0.hasPrefix(".file.bin.") && $0.hasSuffix(".part") } }

    let child = try ChildProcess(
      executable: executable, arguments: ["download", url, destination.path, tokenFile.path])
    var partialSeen = 0
    let outcome = killWhenReached(child, what: "download", target: target) {
      if let size = fileSize(destination), size != total { partialSeen += 1 }
      guard fileSize(tokenFile) != nil, let part = partFiles().first else { return false }
      return (fileSize(folder.appendingPathComponent(part)) ?? 0) >= target
    }
    figures.partialAtDestination += partialSeen
    switch outcome {
    case .killed: break
    case .finishedFirst:
      figures.childFinishedFirst += 1
      return .again
    case .failed(let text):
      fail(text)
      return .done
    }

    // What the killed process left: no destination, one part file, the token.
    if fileSize(destination) != nil {
      figures.partialAtDestination += 1
      fail("the destination exists after the kill")
    }
    let parts = partFiles()
    guard parts.count == 1, let partSize = fileSize(folder.appendingPathComponent(parts[0])) else {
      fail("expected one part file beside the destination, found \(contents(of: folder))")
      return .done
    }
    guard fileSize(tokenFile) != nil else {
      fail("no resume token saved")
      return .done
    }
    figures.killTargets.append(target)
    figures.killPoints.append(partSize)
    figures.resumedFrom.append(partSize)

    let resumer = try ChildProcess(executable: executable, arguments: ["download-resume", tokenFile.path])
    var resumed: ChildExit?
    let resumeDeadline = Date().addingTimeInterval(300)
    while resumed == nil, Date() < resumeDeadline {
      if let size = fileSize(destination), size != total { figures.partialAtDestination += 1 }
      resumed = resumer.wait(timeout: 0)
      if resumed == nil { usleep(500) }
    }
    guard let resumed, resumed.exitCode == 0 else {
      resumer.kill()
      _ = resumer.wait(timeout: 10)
      fail("the resumer failed: \(resumed.map { "\($0)" } ?? "timed out")")
      return .done
    }
    if let last = nginx.accessLog.last, last.hasPrefix("206 \"bytes=\(partSize)-\"") {
    } else {
      fail(
        "the resumer did not ask for bytes=\(partSize)- (nginx logged \(nginx.accessLog.last ?? "nothing"))")
    }
    let left = contents(of: folder)
    if left != ["file.bin"] { fail("left in the folder: \(left)") }
    if try sha256(of: destination) == sourceDigest {
      figures.sha256Equal += 1
    } else {
      fail("sha256 differs")
    }
    return .done
  }

  // MARK: - Uploads

  /// How a child that was to be killed ended.
  enum KillOutcome {
    /// Killed by SIGKILL once its target was reached.
    case killed
    /// It finished by itself first (the run is made again).
    case finishedFirst
    case failed(String)
  }

  /// Kills `child` with SIGKILL once `reached()` (polled every 200 µs, for at most 120 s) and waits
  /// for it to end.
  func killWhenReached(_ child: ChildProcess, what: String, target: Int64, reached: () -> Bool) -> KillOutcome
  {
    let deadline = Date().addingTimeInterval(120)
    var killed = false
    while Date() < deadline {
      if reached() {
        child.kill()
        killed = true
        break
      }
      if let exit = child.wait(timeout: 0) {
        return exit.exitCode == 0 ? .finishedFirst : .failed("the first child ended by itself: \(exit)")
      }
      usleep(200)
    }
    guard killed else {
      child.kill()
      _ = child.wait(timeout: 10)
      return .failed("the \(what) did not reach \(target) bytes in 120 s")
    }
    let exit = child.wait(timeout: 10)
    guard exit?.signal == SIGKILL else {
      return .failed("the first child did not end by SIGKILL: \(exit.map { "\($0)" } ?? "still running")")
    }
    return .killed
  }

  func uploads() throws -> Figures {
    var figures = Figures(kind: "upload")
    let file = work.appendingPathComponent("upload.bin")
    try makeRandomFile(file, count: options.uploadBytes)
    let fileData = try Data(contentsOf: file)
    let fileDigest = try sha256(of: file)
    let server = try TestServer()
    defer { server.stop() }
    try repeatRuns(&figures) { run, figures in
      defer { server.resetRecords() }
      return try uploadRun(
        run, server: server, file: file, fileData: fileData, fileDigest: fileDigest, figures: &figures)
    }
    return figures
  }

  func uploadRun(
    _ run: Int, server: TestServer, file: URL, fileData: Data, fileDigest: String, figures: inout Figures
  ) throws -> RunOutcome {
    // One path for every run: a new start replaces the upload the server holds there.
    let uploadPath = "/crash.upload"
    let locationFile = work.appendingPathComponent("upload.location")
    try? FileManager.default.removeItem(at: locationFile)
    let total = options.uploadBytes
    let target = killPoint(total)
    func fail(_ text: String) { figures.failures.append("upload run \(run + 1): \(text)") }
    let chunk = String(options.chunkBytes)

    let child = try ChildProcess(
      executable: executable,
      arguments: [
        "upload", server.url("/crash.location").absoluteString, file.path, locationFile.path, chunk,
      ])
    switch killWhenReached(
      child, what: "upload", target: target,
      reached: {
        child.hasPrinted("ready") && child.progress >= target
      })
    {
    case .killed: break
    case .finishedFirst:
      figures.childFinishedFirst += 1
      return .again
    case .failed(let text):
      fail(text)
      return .done
    }
    let killPoint = child.progress
    // A chunk the child had sent whole may still be on its way into the server's store.
    var held = server.resumableUpload(path: uploadPath)?.body.count ?? -1
    for _ in 0..<20 {
      usleep(50_000)
      let now = server.resumableUpload(path: uploadPath)?.body.count ?? -1
      if now == held { break }
      held = now
    }
    guard let upload = server.resumableUpload(path: uploadPath), fileSize(locationFile) != nil else {
      fail("no upload started or no upload URL saved")
      return .done
    }
    if upload.status == .final {
      // Finalized before the kill landed: the child had finished.
      figures.childFinishedFirst += 1
      return .again
    }
    // The server holds only whole chunks, in order: a prefix of the file.
    if upload.body != fileData.prefix(upload.body.count) {
      figures.partialAtDestination += 1
      fail("the server holds bytes that are not the file's first \(upload.body.count)")
    }
    figures.killTargets.append(target)
    figures.killPoints.append(killPoint)
    figures.resumedFrom.append(Int64(upload.body.count))

    let resumer = try ChildProcess(
      executable: executable, arguments: ["upload-resume", locationFile.path, file.path, chunk])
    guard let resumed = resumer.wait(timeout: 300), resumed.exitCode == 0 else {
      resumer.kill()
      _ = resumer.wait(timeout: 10)
      fail("the resumer failed")
      return .done
    }
    guard let final = server.resumableUpload(path: uploadPath), final.status == .final else {
      fail("the upload is not final after the resumer")
      return .done
    }
    let received = work.appendingPathComponent("received.bin")
    try final.body.write(to: received)
    defer { try? FileManager.default.removeItem(at: received) }
    if try sha256(of: received) == fileDigest {
      figures.sha256Equal += 1
    } else {
      fail("sha256 differs (\(final.body.count) bytes received)")
    }
    return .done
  }
}
