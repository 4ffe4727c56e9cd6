import Foundation
import HTTPLogging
import SessionFetcher

/// `--log-dir DIR`: HTTPLogging's files (HTML index, per-fetch text logs, HAR) for this run.
enum FetchLogging {
  /// Turns logging on into `directory`, before the fetcher is made.
  static func start(in directory: String) {
    SessionFetcher.loggingDirectory = URL(fileURLWithPath: directory, isDirectory: true)
    // A command-line flag is an explicit opt-in, so release builds of fetch log as well.
    SessionFetcher.isLoggingAllowedInReleaseBuilds = true
    SessionFetcher.isLoggingEnabled = true
  }

  /// Waits for the log files to be written and names them on stderr.
  static func finish() {
    SessionFetcher.flushLogs()
    guard let runFolder = SessionFetcher.loggingRunDirectory else {
      FileHandle.standardError.write(Data("fetch: nothing was logged to files\n".utf8))
      return
    }
    let index = runFolder.appendingPathComponent("index.html").path
    let har = runFolder.appendingPathComponent("log.har").path
    FileHandle.standardError.write(Data("fetch: HTTP log \(index), HAR \(har)\n".utf8))
  }
}
