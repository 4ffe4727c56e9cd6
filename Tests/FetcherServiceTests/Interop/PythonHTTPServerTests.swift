import FetcherService
import FetcherTesting
import Foundation
import MIMEDocument
import SessionFetcher
import TestTraits
import Testing

/// Python's `http.server`, the textbook server that reads a request body by its `Content-Length`
/// only: a chunked body reaches its handler empty. Skipped where `python3` is not installed.
@Suite(
  "Multipart bodies to Python's http.server",
  .linuxOnly("needs Linux: the server runs as a child process (ChildProcess)"),
  .enabled(if: PythonEchoServer.python != nil, "python3 is not installed"), .ownThreads)
struct PythonHTTPServerTests {
  @Test func aMultipartDocumentArrivesWhole() async throws {
    let server = try PythonEchoServer()
    defer { server.stop() }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("python-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let part = folder.appendingPathComponent("part.bin")
    try TestServer.patternBytes(count: 200_000).write(to: part)
    let document = MIMEDocument()
    document.appendFormField(name: "title", value: "python")
    document.appendFormFile(name: "file", filename: "part.bin", fileURL: part)
    let expected = try document.generateData().data

    let fetcher = makeService().fetcher(url: server.url)
    fetcher.request?.timeoutInterval = 20  // Sent chunked, the body would stall the server's reply.
    try fetcher.setBody(document)
    let result = try await fetcher.fetchResponse()
    #expect(result.data == expected)
    #expect(result.response?.value(forHTTPHeaderField: "X-Transfer-Encoding") == "-")
  }

  /// The control: a stream of unknown length goes chunked, and this server reads none of it.
  @Test func aChunkedStreamArrivesEmpty() async throws {
    let server = try PythonEchoServer()
    defer { server.stop() }
    let fetcher = makeService().fetcher(url: server.url)
    fetcher.bodyStreamProvider = { InputStream(data: Data(count: 1000)) }
    let result = try await fetcher.fetchResponse()
    #expect(result.data.isEmpty)
    #expect(result.response?.value(forHTTPHeaderField: "X-Transfer-Encoding") == "chunked")
  }
}

/// A `python3 -c` process running an `http.server` that answers a POST with the body it read (by
/// `Content-Length`) and the request's `Transfer-Encoding` in `X-Transfer-Encoding`.
final class PythonEchoServer {
  static let python: String? = ["/usr/bin/python3", "/usr/local/bin/python3"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }

  private static let script = """
    import http.server, sys
    class Echo(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Transfer-Encoding", self.headers.get("Transfer-Encoding") or "-")
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *args):
            pass
    server = http.server.HTTPServer(("127.0.0.1", 0), Echo)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """

  private let pid: pid_t
  private let output: URL
  let url: URL

  /// Starts the server and waits (at most 30 s) for the port it prints on its first line. A
  /// `posix_spawn`ed child (`ChildProcess`), not Foundation's `Process`, whose `run()` can crash
  /// reading /proc/self/fd while other threads open and close descriptors.
  init() throws {
    #if !os(Linux)
      throw PythonServerUnavailable(description: "the server runs as a child process, on Linux only")
    #else
      let output = FileManager.default.temporaryDirectory.appendingPathComponent(
        "python-echo-\(UUID().uuidString).out")
      let pid = try ChildProcess.spawn(
        [Self.python ?? "/usr/bin/python3", "-c", Self.script],
        environment: ProcessInfo.processInfo.environment, output: output)
      guard let port = ChildProcess.firstLine(of: pid, output: output, timeout: 30).flatMap(Int.init) else {
        _ = ChildProcess.wait(pid, timeout: 0)
        try? FileManager.default.removeItem(at: output)
        throw PythonServerUnavailable(description: "python3 printed no port")
      }
      self.pid = pid
      self.output = output
      url = URL(string: "http://127.0.0.1:\(port)/upload")!
    #endif
  }

  /// Kills the server: SIGKILL, since the test process may hand its children a mask that blocks
  /// SIGTERM.
  func stop() {
    kill(pid, SIGKILL)
    #if os(Linux)
      _ = ChildProcess.wait(pid, timeout: 10)
    #endif
    try? FileManager.default.removeItem(at: output)
  }
}

struct PythonServerUnavailable: Error, CustomStringConvertible {
  var description: String
}
