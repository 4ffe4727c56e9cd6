import Foundation
import HTTPLogging
import SessionFetcher

/// Logs one fetch to files and ends the process at once, before the log writer's coalescing delay
/// has passed: what the fetch left waiting must still reach the files, written by the flush the
/// writer registers for the end of the process. Run by `LoggingExitTests` in a child process.
///
///     logging-exit-probe DIRECTORY URL exit|return
///
/// `exit` calls `exit(0)` from the fetch's completion; `return` lets `main` return.
@main
enum LoggingExitProbe {
  static func main() {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard arguments.count == 3, let url = URL(string: arguments[1]),
      ["exit", "return"].contains(arguments[2])
    else {
      print("usage: logging-exit-probe DIRECTORY URL exit|return")
      exit(2)
    }
    SessionFetcher.isLoggingAllowedInReleaseBuilds = true
    SessionFetcher.isLoggingEnabled = true
    SessionFetcher.loggingDirectory = URL(fileURLWithPath: arguments[0])
    SessionFetcher.loggingProcessName = "ExitProbe"

    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.allowLocalhostRequest = true
    fetcher.allowedInsecureSchemes = ["http"]
    fetcher.callbackQueue = DispatchQueue(label: "logging-exit-probe")
    let done = DispatchSemaphore(value: 0)
    fetcher.beginFetch { data, error in
      print(
        "status \(fetcher.statusCode), \(data?.count ?? 0) bytes, error: \(error.map { "\($0)" } ?? "none")")
      if arguments[2] == "exit" { exit(0) }
      done.signal()
    }
    if done.wait(timeout: .now() + 30) == .timedOut {
      print("no completion")
      exit(3)
    }
  }
}
