import FetcherTesting
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `kill(2)`, named apart from the fixtures' own `kill` methods.
private func signalProcess(_ pid: pid_t, _ signal: Int32) -> Int32 {
  kill(pid, signal)
}

/// Certificates made with the `openssl` command when a test needs them (nothing secret is
/// committed), and `openssl s_server` processes that serve them on 127.0.0.1.
///
/// - `ca.pem`: the private CA of `server`, `expired` and `wronghost`;
/// - `ca2.pem`: the CA of the client certificate `client.pem` (`client.key`, and
///   `client-encrypted.key` under the password ``clientKeyPassword``);
/// - `other-ca.pem`: a CA of its own for `foreign`, a certificate no test trusts by default;
/// - `server.pin`: the `sha256//` pin of `server`'s key.
final class TLSFixtures: Sendable {
  /// The script's default password of `client-encrypted.key`.
  static let clientKeyPassword = "open-sesame"
  let folder: URL

  /// Whether `openssl` can be run here (it ships with every Debian-based Swift image) and the
  /// script is beside the sources.
  static var isAvailable: Bool {
    FileManager.default.isExecutableFile(atPath: opensslPath)
      && FileManager.default.fileExists(atPath: script.path)
  }
  static let opensslPath = "/usr/bin/openssl"

  init() throws {
    folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "tls-fixtures-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let status = try Self.run(["/bin/sh", Self.script.path, folder.path])
    guard status == 0 else { throw FixtureError("making the certificates failed (status \(status))") }
  }

  deinit {
    try? FileManager.default.removeItem(at: folder)
  }

  /// New certificates, made on a thread of their own: `openssl` takes seconds on a busy machine,
  /// and on 2 cores two threads of the cooperative pool blocked in `waitpid` halt every other test.
  static func make() async throws -> TLSFixtures {
    try await offPool { try TLSFixtures() }
  }

  /// Runs `body` on a thread of its own and returns what it returns or throws.
  static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await offThePool { Result { try body() } }.get()
  }

  func file(_ name: String) -> URL { folder.appendingPathComponent(name) }

  /// `sha256//<base64>` of `server`'s public key.
  var serverPin: String {
    let text = (try? String(contentsOf: file("server.pin"), encoding: .utf8)) ?? ""
    return "sha256//" + text.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  struct FixtureError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
  }

  /// Starts `arguments` (absolute paths: it runs in the test's folder) with no input or output;
  /// returns its pid.
  ///
  /// `posix_spawn` and `waitpid` on that pid, not `Process`: `openssl s_server` ignores SIGTERM
  /// (`Process.terminate()`), and a blocked `waitUntilExit()` would hold a thread of the test pool.
  static func spawn(_ arguments: [String]) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for descriptor in Int32(0)...2 {
      posix_spawn_file_actions_addopen(
        &actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
    }
    var pid: pid_t = 0
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    let status = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
    guard status == 0 else { throw FixtureError("\(arguments[0]) could not start: \(status)") }
    return pid
  }

  static func run(_ arguments: [String]) throws -> Int32 {
    let pid = try spawn(arguments)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (status >> 8) & 0xFF
  }

  /// An `openssl s_server -www` on 127.0.0.1 serving `certificate`: it answers every GET with a
  /// 200 status page, one connection at a time.
  final class Server: @unchecked Sendable {
    // `@unchecked Sendable`: `port` and `pid` are set in init and never changed; `stopped` only in
    // `stop()`, which the test calls once (or deinit does).
    let port: UInt16
    private let pid: pid_t
    private var stopped = false

    /// - Parameters:
    ///   - extraArguments: for example `["-Verify", "1", "-CAfile", ca2]` to require a client
    ///     certificate, or `["-tls1_2"]` for a TLS 1.2-only server.
    ///   - servesFiles: answer `GET /name` with the fixtures folder's file `name` (`-WWW`, an
    ///     HTTP/1.0 response ended by closing the connection) instead of the status page.
    init(
      _ fixtures: TLSFixtures, certificate: String, extraArguments: [String] = [], servesFiles: Bool = false
    ) throws {
      var lastError: (any Error)?
      for _ in 0..<5 {
        let port = try Self.freePort()
        let server =
          [
            TLSFixtures.opensslPath, "s_server", "-accept", "127.0.0.1:\(port)", "-cert",
            fixtures.file("\(certificate).pem").path, "-key", fixtures.file("\(certificate).key").path,
            servesFiles ? "-WWW" : "-www",
            "-quiet",
          ] + extraArguments
        // `-WWW` serves files relative to its working folder: the shell enters the fixtures' folder
        // and becomes the server (same pid).
        let pid = try TLSFixtures.spawn(
          servesFiles
            ? ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", fixtures.folder.path] + server : server)
        if Self.waitUntilListening(port: port, pid: pid) {
          self.port = port
          self.pid = pid
          return
        }
        Self.kill(pid)
        lastError = FixtureError("openssl s_server did not start on port \(port)")
      }
      throw lastError ?? FixtureError("openssl s_server did not start")
    }

    deinit { stop() }

    /// A server started on a thread of its own (see ``TLSFixtures/make()``): it polls for the port
    /// for up to 10 s.
    static func start(
      _ fixtures: TLSFixtures, certificate: String, extraArguments: [String] = [], servesFiles: Bool = false
    ) async throws -> Server {
      try await TLSFixtures.offPool {
        try Server(
          fixtures, certificate: certificate, extraArguments: extraArguments, servesFiles: servesFiles)
      }
    }

    func url(_ path: String = "/") -> URL { URL(string: "https://127.0.0.1:\(port)\(path)")! }

    /// Stops the server process (SIGSTOP): the kernel still accepts connections and takes the
    /// client's bytes, but no handshake answer comes. ``stop()`` kills it all the same.
    func freeze() {
      _ = signalProcess(pid, SIGSTOP)
    }

    func stop() {
      guard !stopped else { return }
      stopped = true
      Self.kill(pid)
    }

    /// SIGKILL (s_server ignores SIGTERM), then reaps it.
    private static func kill(_ pid: pid_t) {
      _ = signalProcess(pid, SIGKILL)
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// A port nothing listens on now (bound to port 0, read, closed).
    private static func freePort() throws -> UInt16 {
      let (descriptor, port) = try bindLoopbackSocket()
      close(descriptor)
      return port
    }

    /// Polls for the port to accept a connection, for at most 10 s.
    private static func waitUntilListening(port: UInt16, pid: pid_t) -> Bool {
      for _ in 0..<200 {
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { return false }
        #if canImport(Glibc)
          let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
          let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
          pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
          }
        }
        close(descriptor)
        if connected { return true }
        usleep(50_000)
      }
      return false
    }
  }

  /// `scripts/make-test-certs.sh` of this repository, which `.ci/servers.sh` uses too.
  static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../../scripts/make-test-certs.sh").standardizedFileURL
}
