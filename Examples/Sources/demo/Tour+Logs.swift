import Foundation
import HTTPLogging
import SessionFetcher

extension Tour {
  /// The folder that receives this run's HTTP logs.
  var loggingFolder: URL { workFolder.appendingPathComponent("logs", isDirectory: true) }

  /// Turns HTTP logging on for the whole tour, into ``loggingFolder``. Called before the first
  /// section, so every fetch of the tour is logged.
  func startLogging() {
    SessionFetcher.loggingDirectory = loggingFolder
    // `swift run` builds for debug, where logging needs no more; a release build of the demo opts
    // in explicitly, since showing the logs is the point of this section.
    SessionFetcher.isLoggingAllowedInReleaseBuilds = true
    SessionFetcher.isLoggingEnabled = true
  }

  /// Waits for the log files of every fetch so far, then prints where to open them.
  func showLogs() async throws -> SectionOutcome {
    SessionFetcher.flushLogs()
    guard let runFolder = SessionFetcher.loggingRunDirectory else {
      throw DemoFailure("no fetch was logged to files in \(loggingFolder.path)")
    }
    SessionFetcher.isLoggingEnabled = false
    let index = runFolder.appendingPathComponent("index.html")
    let har = runFolder.appendingPathComponent("log.har")
    let fileManager = FileManager.default
    try require(fileManager.fileExists(atPath: index.path), "the HTML index \(index.path) is missing")
    try require(fileManager.fileExists(atPath: har.path), "the HAR file \(har.path) is missing")

    let harJSON = try JSONSerialization.jsonObject(with: Data(contentsOf: har)) as? [String: Any]
    let entries = ((harJSON?["log"] as? [String: Any])?["entries"] as? [Any])?.count ?? 0
    let textLogs = try fileManager.contentsOfDirectory(atPath: runFolder.path).filter {
      $0.hasPrefix("fetch_") && $0.hasSuffix(".txt") && !$0.contains("_response") && !$0.contains("_request")
    }
    try require(entries > 0, "the HAR file has no entries")
    Console.detail("logging was on for the whole tour (SessionFetcher.isLoggingEnabled = true)")
    Console.detail("\(textLogs.count) fetches logged; the HAR file has \(entries) entries (one per attempt)")
    Console.detail("open in a browser:         \(index.path)")
    Console.detail("import in developer tools: \(har.path)")
    let newest = loggingFolder.appendingPathComponent("\(SessionFetcher.loggingProcessName)_log_newest.html")
    if fileManager.fileExists(atPath: newest.path) {
      Console.detail("newest run's index:        \(newest.path)")
    }
    return .shown
  }
}
