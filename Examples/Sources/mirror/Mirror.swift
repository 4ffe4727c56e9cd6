import ArgumentParser
import Foundation
import HTTPLogging
import SessionFetcher

/// `mirror`: downloads every URL of a list into a folder, a few at a time per host, with retries,
/// a progress line, and downloads that an interruption leaves resumable for the next run.
@main
struct Mirror: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Download a list of URLs into a folder with SessionFetcher.",
    discussion: """
      LIST holds one URL per line (blank lines and lines starting with # are ignored). Files that \
      are already in the folder are skipped; a download that was interrupted (Ctrl-C, a dropped \
      connection) goes on where it stopped on the next run. Exit status: 0 all downloaded, 1 some \
      failed or a line was skipped, 2 unusable list or folder, 130 interrupted.
      """)

  @Argument(help: "The file of URLs, one per line.")
  var list: String?

  @Option(name: .shortAndLong, help: "The folder to download into (created if missing).")
  var output: String = "."

  @Option(name: .customLong("per-host"), help: "At most this many downloads from one host at once.")
  var perHost: Int = 4

  @Option(help: "Retry a 503, 429 or dropped connection up to this many times per file.")
  var retries: Int = 3

  @Option(help: "The engine: urlSession or libcurl (default: SESSIONFETCHER_ENGINE, else urlSession).")
  var engine: EngineChoice?

  @Flag(help: "Log every fetch with HTTPLogging and print the path of the run's index.html.")
  var log = false

  @Flag(name: .customLong("insecure-http"), help: "Allow plain http URLs (always allowed to this machine).")
  var insecureHTTP = false

  @Flag(help: "Run the built-in checks against a local server and exit.")
  var selftest = false

  func validate() throws {
    guard perHost >= 1 else { throw ValidationError("--per-host must be 1 or more") }
    guard retries >= 0 else { throw ValidationError("--retries must be 0 or more") }
    guard selftest || list != nil else { throw ValidationError("give the file of URLs (or --selftest)") }
  }

  func run() async throws {
    Interrupts.install()
    if let engine, let reason = engine.engine.unavailableReason {
      Console.error("mirror: the \(engine.rawValue) engine is unavailable: \(reason)")
      throw ExitCode(2)
    }
    if log {
      // A command-line flag is an explicit opt-in, so a release build logs as well.
      SessionFetcher.isLoggingAllowedInReleaseBuilds = true
      SessionFetcher.isLoggingEnabled = true
    }
    let status: Int32
    if selftest {
      status = await MirrorSelfTest.run(engine: engine?.engine)
    } else {
      let options = MirrorOptions(
        listPath: list ?? "", folder: URL(fileURLWithPath: output, isDirectory: true), perHost: perHost,
        retries: retries, engine: engine?.engine, insecureHTTP: insecureHTTP)
      status = await Self.mirror(options)
    }
    if log { Self.printLogIndex() }
    if status != 0 { throw ExitCode(status) }
  }

  /// One run from the command line: the summary on stdout, problems on stderr.
  static func mirror(_ options: MirrorOptions) async -> Int32 {
    do {
      let outcome = try await MirrorRun(options: options, showsProgress: true).run()
      outcome.printSummary()
      return outcome.exitStatus
    } catch {
      Console.error("mirror: \(error)")
      return 2
    }
  }

  /// The run's network panel, on a line of its own (HTTPLogging prints the folder when it starts).
  static func printLogIndex() {
    SessionFetcher.flushLogs()
    guard let folder = SessionFetcher.loggingRunDirectory else {
      Console.error("mirror: nothing was logged")
      return
    }
    Console.out(folder.appendingPathComponent("index.html").path)
  }
}

/// `--engine`.
enum EngineChoice: String, ExpressibleByArgument, CaseIterable {
  case urlSession, libcurl

  var engine: FetcherEngine { self == .libcurl ? .libcurl : .urlSession }
}

/// Unbuffered lines, so that stdout and stderr keep their order when both go to one place.
enum Console {
  static func out(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }

  static func error(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
  }
}
