import FetcherTesting
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The log writer gathers finished fetches for a few milliseconds before it writes them; a program
/// that ends in that moment (a command-line tool's last fetch) must still find them in its files.
/// The fetch runs in a child process, `logging-exit-probe` (built beside the tests), which ends right
/// after its completion handler: by `exit(0)` in the handler, or by returning from `main`.
@Suite("HTTPLogging flushes at the end of the process")
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
    let environment = ProcessInfo.processInfo.environment.filter { !proxyNames.contains($0.key) }
    let (exit, lines) = try await ChildProcess.runProbe(
      named: "logging-exit-probe", arguments: arguments, environment: environment, timeout: 60)
    return (exit.exitCode ?? 128 + (exit.signal ?? 0), lines.joined(separator: "\n"))
  }
}
