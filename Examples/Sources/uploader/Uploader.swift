import ArgumentParser
import Foundation
import HTTPLogging
import SessionFetcher

/// `uploader`: sends a file with a multipart form, then describes it with a JSON `PUT`, to a photo
/// service that wants a bearer token and refreshes it on a 401.
@main
struct Uploader: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Upload a file to a photo service with SessionFetcher, then set its title and tags.",
    discussion: """
      POST SERVER/uploads (multipart/form-data: the fields and the file), then PUT SERVER/photos/ID \
      (JSON). Both carry 'Authorization: Bearer TOKEN'; on a 401 the token is refreshed once at \
      SERVER/oauth/token with the refresh token. Exit status: 0 done, 1 the server or the network \
      failed, 2 unusable arguments or file.
      """)

  @Argument(help: "The file to upload.")
  var file: String?

  @Option(help: "The service's base URL.")
  var server: String?

  @Option(help: "The photo's title.")
  var title: String?

  @Option(name: .customLong("field"), help: "Another form field, 'name=value' (repeatable).")
  var fields: [String] = []

  @Option(name: .customLong("tag"), help: "A tag for the photo (repeatable).")
  var tags: [String] = []

  @Option(help: "The access token (default: $UPLOADER_TOKEN).")
  var token: String?

  @Option(name: .customLong("refresh-token"), help: "The refresh token (default: $UPLOADER_REFRESH_TOKEN).")
  var refreshToken: String?

  @Option(help: "The engine: urlSession or libcurl (default: SESSIONFETCHER_ENGINE, else urlSession).")
  var engine: EngineChoice?

  @Flag(help: "Log every fetch with HTTPLogging and print the path of the run's index.html.")
  var log = false

  @Flag(
    name: .customLong("insecure-http"), help: "Allow a plain http server (always allowed on this machine).")
  var insecureHTTP = false

  @Flag(help: "Run the built-in checks against a local server and exit.")
  var selftest = false

  func validate() throws {
    guard !selftest else { return }
    guard file != nil, let server, URL(string: server)?.host != nil else {
      throw ValidationError("give the file and --server URL (or --selftest)")
    }
    for field in fields where !field.contains("=") {
      throw ValidationError("--field needs 'name=value', got '\(field)'")
    }
  }

  func run() async throws {
    if let engine, let reason = engine.engine.unavailableReason {
      Console.error("uploader: the \(engine.rawValue) engine is unavailable: \(reason)")
      throw ExitCode(2)
    }
    if log {
      // A command-line flag is an explicit opt-in, so a release build logs as well.
      SessionFetcher.isLoggingAllowedInReleaseBuilds = true
      SessionFetcher.isLoggingEnabled = true
    }
    let status = selftest ? await UploaderSelfTest.run(engine: engine?.engine) : await upload()
    if log { Self.printLogIndex() }
    if status != 0 { throw ExitCode(status) }
  }

  private func upload() async -> Int32 {
    let environment = ProcessInfo.processInfo.environment
    guard let server = server.flatMap(URL.init(string:)), let file else { return 2 }  // See validate().
    guard let token = token ?? environment["UPLOADER_TOKEN"], !token.isEmpty else {
      Console.error("uploader: give the access token with --token or UPLOADER_TOKEN")
      return 2
    }
    let fileURL = URL(fileURLWithPath: file)
    let request = UploadRequest(
      server: server, file: fileURL, title: title ?? fileURL.lastPathComponent,
      fields: fields.map { field in
        let parts = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        return (String(parts[0]), String(parts[1]))
      },
      tags: tags, token: token, refreshToken: refreshToken ?? environment["UPLOADER_REFRESH_TOKEN"],
      engine: engine?.engine, insecureHTTP: insecureHTTP)
    do {
      let photo = try await UploadRun(request, showsProgress: true).run()
      Console.out(
        "uploaded \(photo.id): \(photo.size) bytes, \"\(photo.title)\", tags \(photo.tags), version \(photo.version)"
      )
      return 0
    } catch let failure as UploadFailure {
      Console.error("uploader: \(failure)")
      return failure.exitStatus
    } catch {
      Console.error("uploader: \(error)")
      return 1
    }
  }

  /// The run's network panel, on a line of its own (HTTPLogging prints the folder when it starts).
  static func printLogIndex() {
    SessionFetcher.flushLogs()
    guard let folder = SessionFetcher.loggingRunDirectory else {
      Console.error("uploader: nothing was logged")
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

/// A value behind a lock, for the state callbacks share.
final class UploaderLock<Value>: @unchecked Sendable {
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
