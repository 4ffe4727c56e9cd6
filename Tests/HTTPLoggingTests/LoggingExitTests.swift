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
  func lastFetchReachesTheFiles(ending: String) throws {
    let probe = URL(
      fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    )
    .deletingLastPathComponent().appendingPathComponent("logging-exit-probe")
    try #require(FileManager.default.isExecutableFile(atPath: probe.path), "not built: \(probe.path)")
    let server = try TestServer()
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = server.url("/bytes/1000")

    let output = try Self.run(probe, arguments: [folder.path, url.absoluteString, ending])
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

  /// Runs `probe` (which clears the proxy variables it inherits: its fetch goes to loopback) with
  /// its output to a file, for at most 60 s. `posix_spawn`, not Foundation's `Process`, which keeps
  /// what it allocated (LeakSanitizer reports it).
  static func run(_ probe: URL, arguments: [String]) throws -> (status: Int32, text: String) {
    let outputURL = FileManager.default.temporaryDirectory.appendingPathComponent(
      "logging-exit-\(UUID().uuidString).out")
    defer { try? FileManager.default.removeItem(at: outputURL) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputURL.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv = ([probe.path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let started = posix_spawn(&pid, probe.path, &actions, nil, argv, environ)
    try #require(started == 0, "\(probe.path) could not start: \(started)")
    var status: Int32 = 0
    let deadline = Date().addingTimeInterval(60)
    while waitpid(pid, &status, WNOHANG) == 0 {
      if Date() > deadline {
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        break
      }
      usleep(10_000)
    }
    let text = (try? Data(contentsOf: outputURL)) ?? Data()
    // A normal exit gives its code; a signal gives 128 + its number.
    let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    return (code, String(decoding: text, as: UTF8.self))
  }
}
