import FetcherTesting
import Foundation
import TestTraits
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The log writer gathers finished fetches for a few milliseconds before it writes them; a program
/// that ends in that moment (a command-line tool's last fetch) must still find them in its files.
/// The fetch runs in a child process, `logging-exit-probe` (built beside the tests), which ends right
/// after its completion handler: by `exit(0)` in the handler, or by returning from `main`.
@Suite(
  "HTTPLogging flushes at the end of the process",
  .linuxOnly("needs Linux: the fetch runs in logging-exit-probe, a child process"))
struct LoggingExitTests {
  @Test("a fetch logged just before the process ends is in its files", arguments: ["exit", "return"])
  func lastFetchReachesTheFiles(ending: String) async throws {
    let server = try TestServer()
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = server.url("/bytes/1000")

    let output = try await Self.run(arguments: [folder.path, url.absoluteString, ending])
    #expect(output.status == 0, "\(output)")
    #expect(output.text.contains("status 200, 1000 bytes, error: none"), "\(output)")

    let run = try #require(try runFolders(in: folder).first, "no run folder: \(output)")
    let har = try Data(contentsOf: run.appendingPathComponent("log.har"))
    let root = try #require(try JSONSerialization.jsonObject(with: har) as? [String: Any])
    let entries = try #require((root["log"] as? [String: Any])?["entries"] as? [[String: Any]])
    #expect(entries.compactMap { harRequest($0)["url"] as? String } == [url.absoluteString])
    #expect(entries.compactMap { harResponse($0)["status"] as? Int } == [200])
    let page = try String(contentsOf: run.appendingPathComponent("index.html"), encoding: .utf8)
    #expect(try pageEntries(html: page).count == 1)
    // The 1,000-byte body has a file of its own, written whole.
    let bodyFile = try #require(fileNames(in: entries).first)
    let body = try Data(contentsOf: run.appendingPathComponent(bodyFile))
    #expect(body.count == 1000)
    #expect(FileManager.default.fileExists(atPath: run.appendingPathComponent("fetch_1.txt").path))
  }

  /// Runs `logging-exit-probe` without the proxy variables of this environment (its fetch goes to
  /// loopback), for at most 60 s.
  static func run(arguments: [String]) async throws -> (status: Int32, text: String) {
    let proxyNames: Set = [
      "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
    ]
    var environment = ProcessInfo.processInfo.environment.filter { !proxyNames.contains($0.key) }
    var suppressions: URL?
    defer { suppressions.map { try? FileManager.default.removeItem(at: $0) } }
    if arguments.last == "exit" {
      let leakOptions = try exitLeakOptions(environment["LSAN_OPTIONS"])
      environment["LSAN_OPTIONS"] = leakOptions.options
      suppressions = leakOptions.file
    }
    #if os(Linux)
      let (exit, lines) = try await ChildProcess.runProbe(
        named: "logging-exit-probe", arguments: arguments, environment: environment, timeout: 60)
      return (exit.exitCode ?? 128 + (exit.signal ?? 0), lines.joined(separator: "\n"))
    #else
      throw LinuxOnly(needs: "runs logging-exit-probe as a child process")
    #endif
  }

  /// LeakSanitizer's options for the child that calls `exit(0)` from inside the completion (they
  /// matter only under `--sanitize=address`): those given, and one suppression more, for the body
  /// of the fetch. That body is alive when `exit` runs (the completion's `data` and the fetcher's
  /// result hold it), but only through `Data` values, whose pointer to their storage carries the
  /// enum's tag in its spare bits (`0x4000…` on x86_64): LeakSanitizer's scan does not take that
  /// for a pointer, and reports the body as a direct leak, allocated by `HopState.chunkReceived`.
  /// It is not one: the "return" case runs the same fetch to a normal end, without this line, and
  /// LeakSanitizer reports nothing. (The same report is hidden by `.ci/lsan.supp`'s libcurl.so or
  /// FoundationNetworking line when the body is handed over from inside the engine's callback.)
  /// Only that allocation is suppressed, in this child only; the rest of what it allocates is
  /// checked. Returns the options and the suppressions file made for them, to delete.
  static func exitLeakOptions(_ given: String?) throws -> (options: String, file: URL) {
    var options = (given ?? "").split(separator: ":").map(String.init)
    var lines = ""
    if let index = options.firstIndex(where: { $0.hasPrefix("suppressions=") }) {
      let path = options.remove(at: index).dropFirst("suppressions=".count)
      lines = try String(contentsOfFile: String(path), encoding: .utf8) + "\n"
    }
    // The mangled name of `HopState.chunkReceived(_:at:inMemoryLimit:)`: renaming either changes it.
    lines += "leak:14SessionFetcher8HopStateC13chunkReceived_2at13inMemoryLimit\n"
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "logging-exit-lsan-\(UUID().uuidString).supp")
    try lines.write(to: file, atomically: true, encoding: .utf8)
    return ((options + ["suppressions=\(file.path)"]).joined(separator: ":"), file)
  }
}
