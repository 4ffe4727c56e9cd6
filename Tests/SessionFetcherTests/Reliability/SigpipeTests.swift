import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

#if os(Linux)
  import Glibc

  /// No fetch can kill its process with SIGPIPE. The test process itself ignores SIGPIPE (the test
  /// server does so, for the whole process), which would hide exactly this, so the fetches run in a
  /// child process, `sigpipe-probe` (built beside the tests), whose SIGPIPE is at its default
  /// disposition, as in a user's program: uploads to servers that answer early and close, reset the
  /// connection mid-upload, or are proxies that close, over plain HTTP and over TLS, on each engine.
  @Suite("SIGPIPE cannot kill the process", .ownThreads)
  struct SigpipeTests {
    @Test(
      "Uploads to servers that close or reset under them end with an error, not SIGPIPE",
      arguments: ["urlSession", "libcurl"])
    func uploadsSurviveBrokenConnections(engine: String) async throws {
      if engine == "libcurl", let reason = FetcherEngine.libcurl.unavailableReason {
        Issue.record("libcurl engine unavailable: \(reason)")
        return
      }
      try #require(TLSFixtures.isAvailable, "openssl and scripts/make-test-certs.sh are needed")
      try #require(PythonTLSServer.isAvailable, "python3 is needed for the TLS servers")
      let fixtures = try await TLSFixtures.make()
      let tlsEarly = try PythonTLSServer(.answerEarly, fixtures)
      defer { tlsEarly.stop() }
      let tlsReset = try PythonTLSServer(.resetMidUpload, fixtures)
      defer { tlsReset.stop() }
      let tlsSilent = try PythonTLSServer(.readForever, fixtures)
      defer { tlsSilent.stop() }
      let early = try BreakingServer(.answerEarly)
      defer { early.stop() }
      let reset = try BreakingServer(.reset(afterBytes: 256 << 10))
      defer { reset.stop() }
      let proxy = try BreakingServer(.closingProxy(afterBytes: 256 << 10))
      defer { proxy.stop() }
      let ca = fixtures.file("ca.pem").path

      let direct = try await Self.runProbe(
        engine: engine, ca: ca,
        urls: [
          "http://127.0.0.1:\(early.port)/upload", "http://127.0.0.1:\(reset.port)/upload",
          "https://127.0.0.1:\(tlsEarly.port)/upload", "https://127.0.0.1:\(tlsReset.port)/upload",
        ],
        proxy: nil)
      let proxied = try await Self.runProbe(
        engine: engine, ca: ca,
        urls: ["http://127.0.0.1:\(early.port)/upload", "https://127.0.0.1:\(tlsSilent.port)/upload"],
        proxy: "http://127.0.0.1:\(proxy.port)")
      print("sigpipe-probe [\(engine)] direct: \(direct.output)")
      print("sigpipe-probe [\(engine)] through a proxy that closes: \(proxied.output)")
      // The control: in the same child set-up, a plain write to a closed socket is killed by SIGPIPE,
      // so a SIGPIPE raised by a fetch would show.
      let control = try await Self.runProbe(arguments: ["control"], proxy: nil)
      #expect(control.signal == SIGPIPE, "the control was not killed by SIGPIPE: \(control)")
      for run in [direct, proxied] {
        #expect(run.output.first == "SIGPIPE disposition: default, blocked: false", "\(run.output)")
        #expect(run.signal == nil, "the probe was killed by signal \(run.signal ?? 0): \(run.output)")
        #expect(run.exitCode == 0, "\(run.output)")
        #expect(run.output.last == "survived", "\(run.output)")
      }
      if engine == "libcurl" {
        #expect(direct.output.contains("libcurl loop thread blocks SIGPIPE: true"), "\(direct.output)")
      }
      // Every fetch completed (an error or a status), none timed out.
      let extra = engine == "libcurl" ? 1 : 0
      #expect(direct.output.count == 6 + extra && proxied.output.count == 4 + extra)
      #expect(
        !(direct.output + proxied.output).contains {
          $0.hasSuffix("timed out") || $0.hasSuffix("no completion")
        })
    }

    struct ProbeRun {
      var output: [String]
      var exitCode: Int32?
      var signal: Int32?
    }

    /// Runs the probe with the proxy variables of its environment replaced by `proxy`, for at most
    /// 180 s (then SIGKILL).
    static func runProbe(engine: String, ca: String, urls: [String], proxy: String?) async throws -> ProbeRun
    {
      try await runProbe(arguments: [engine, ca] + urls, proxy: proxy)
    }

    static func runProbe(arguments: [String], proxy: String?) async throws -> ProbeRun {
      let proxyNames: Set = [
        "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy",
        "NO_PROXY",
      ]
      var environment = ProcessInfo.processInfo.environment.filter { !proxyNames.contains($0.key) }
      if let proxy {
        environment["http_proxy"] = proxy
        environment["https_proxy"] = proxy
      }
      let (exit, lines) = try await ChildProcess.runProbe(
        named: "sigpipe-probe", arguments: arguments, environment: environment, timeout: 180)
      return ProbeRun(output: lines, exitCode: exit.exitCode, signal: exit.signal)
    }
  }

  /// A TLS server in a `python3` child process (its `ssl` module), for what `openssl s_server`
  /// cannot do: answer a request head early and close, reset the connection mid-upload (SO_LINGER
  /// 0 after 256 KiB), or read forever without answering.
  final class PythonTLSServer: @unchecked Sendable {
    // `@unchecked Sendable`: every property is set in init; `stop()` runs once.
    enum Behavior: String {
      case answerEarly = "early"
      case resetMidUpload = "reset"
      case readForever = "silent"
    }

    static let python = "/usr/bin/python3"
    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: python) }

    static let script = """
      import socket, ssl, struct, sys, threading
      mode, cert, key = sys.argv[1:4]
      context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
      context.load_cert_chain(cert, key)
      listener = socket.socket()
      listener.bind(("127.0.0.1", 0))
      listener.listen(16)
      print(listener.getsockname()[1], flush=True)
      def serve(raw):
          try:
              tls = context.wrap_socket(raw, server_side=True)
              received = b""
              while b"\\r\\n\\r\\n" not in received:
                  data = tls.recv(65536)
                  if not data:
                      return
                  received += data
              if mode == "early":
                  tls.sendall(b"HTTP/1.1 413 Payload Too Large\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n")
                  tls.close()
                  return
              count = len(received)
              while mode == "silent" or count < 262144:
                  data = tls.recv(65536)
                  if not data:
                      break
                  count += len(data)
              raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
              tls.close()
          except Exception:
              pass
          finally:
              raw.close()
      while True:
          connection, _ = listener.accept()
          threading.Thread(target=serve, args=(connection,), daemon=True).start()
      """

    let port: UInt16
    private let pid: pid_t

    init(_ behavior: Behavior, _ fixtures: TLSFixtures) throws {
      let portFile = fixtures.file("python-\(behavior.rawValue).port")
      pid = try ChildProcess.spawn(
        [
          Self.python, "-c", Self.script, behavior.rawValue, fixtures.file("server.pem").path,
          fixtures.file("server.key").path,
        ],
        environment: ProcessInfo.processInfo.environment, output: portFile)
      var port: UInt16?
      for _ in 0..<200 where port == nil {
        let text = ChildProcess.readGrowingFile(portFile)
        port = UInt16(text.trimmingCharacters(in: .whitespacesAndNewlines))
        if port == nil { usleep(50_000) }
      }
      guard let port else {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        throw TLSFixtures.FixtureError("python3 TLS server (\(behavior.rawValue)) did not start")
      }
      self.port = port
    }

    func stop() {
      kill(pid, SIGKILL)
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
  }

  /// A TCP server on 127.0.0.1 that breaks connections under an upload, one thread per connection.
  /// Its own writes use MSG_NOSIGNAL.
  final class BreakingServer: @unchecked Sendable {
    // `@unchecked Sendable`: every property is set in init and never changed.
    enum Behavior: Sendable {
      /// Reads the request head, answers 413 with `Connection: close`, and closes while the body
      /// is still coming (the unread bytes make the close a reset).
      case answerEarly
      /// Reads the request and `afterBytes` of it in all, without answering, then resets the
      /// connection (SO_LINGER 0).
      case reset(afterBytes: Int)
      /// A forward proxy that closes the client's connection after `afterBytes`: a CONNECT is
      /// tunnelled to its target until then, an absolute-form request just read.
      case closingProxy(afterBytes: Int)
    }

    let port: UInt16
    private let listener: Int32
    private let behavior: Behavior

    init(_ behavior: Behavior) throws {
      self.behavior = behavior
      (listener, port) = try bindLoopbackSocket(backlog: 16)
      let thread = Thread { [self] in acceptLoop() }
      thread.start()
    }

    /// Stops accepting (connections already taken end by themselves).
    func stop() {
      shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
      while true {
        let client = accept(listener, nil, nil)
        if client < 0 {
          if errno == EINTR { continue }
          close(listener)
          return
        }
        let thread = Thread { [self] in serve(client) }
        thread.start()
      }
    }

    private func serve(_ client: Int32) {
      switch behavior {
      case .answerEarly:
        _ = Self.readHead(client)
        Self.send(
          client,
          Data("HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
        close(client)
      case .reset(let afterBytes):
        Self.relay(client, nil, until: afterBytes, alreadyRead: 0)
        Self.resetAndClose(client)
      case .closingProxy(let afterBytes):
        guard let (head, rest) = Self.readHead(client) else {
          close(client)
          return
        }
        if head.hasPrefix("CONNECT "),
          let port = head.split(separator: " ").dropFirst().first?
            .split(separator: ":").last.flatMap({ UInt16($0) }), let upstream = Self.connectTo(port: port)
        {
          Self.send(client, Data("HTTP/1.1 200 Connection established\r\n\r\n".utf8))
          Self.relay(client, upstream, until: afterBytes, alreadyRead: 0)
        } else {
          Self.relay(client, nil, until: afterBytes, alreadyRead: head.utf8.count + rest)
        }
        close(client)
      }
    }

    /// Reads until the end of a request head; the head and how many bytes came after it.
    private static func readHead(_ fd: Int32) -> (String, Int)? {
      var received = Data()
      var buffer = [UInt8](repeating: 0, count: 16_384)
      while true {
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        received.append(contentsOf: buffer[0..<count])
        if let end = received.range(of: Data("\r\n\r\n".utf8)) {
          return (
            String(decoding: received[..<end.upperBound], as: UTF8.self), received.count - end.upperBound
          )
        }
      }
    }

    /// Copies the client's bytes to `upstream` (or drops them) until `limit` in all, and
    /// `upstream`'s to the client meanwhile; then ends the copying back and closes `upstream`.
    private static func relay(_ client: Int32, _ upstream: Int32?, until limit: Int, alreadyRead: Int) {
      let back = DispatchSemaphore(value: 0)
      if let upstream {
        let thread = Thread {
          var buffer = [UInt8](repeating: 0, count: 16_384)
          while true {
            let count = read(upstream, &buffer, buffer.count)
            guard count > 0, sendAll(client, buffer, count) else { break }
          }
          back.signal()
        }
        thread.start()
      }
      var total = alreadyRead
      var buffer = [UInt8](repeating: 0, count: 16_384)
      while total < limit {
        let count = read(client, &buffer, buffer.count)
        guard count > 0 else { break }
        total += count
        if let upstream { _ = sendAll(upstream, buffer, count) }
      }
      if let upstream {
        shutdown(upstream, Int32(SHUT_RDWR))
        back.wait()
        close(upstream)
      }
    }

    private static func sendAll(_ fd: Int32, _ buffer: [UInt8], _ count: Int) -> Bool {
      var sent = 0
      while sent < count {
        let result = buffer.withUnsafeBytes {
          Glibc.send(fd, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL))
        }
        if result < 0, errno == EINTR { continue }
        guard result > 0 else { return false }
        sent += result
      }
      return true
    }

    private static func send(_ fd: Int32, _ data: Data) {
      _ = sendAll(fd, [UInt8](data), data.count)
    }

    private static func resetAndClose(_ fd: Int32) {
      var option = linger(l_onoff: 1, l_linger: 0)
      _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
      close(fd)
    }

    static func loopback(port: UInt16) -> sockaddr_in {
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = port.bigEndian
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      return address
    }

    static func connectTo(port: UInt16) -> Int32? {
      let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      guard fd >= 0 else { return nil }
      var address = loopback(port: port)
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
      }
      guard connected else {
        close(fd)
        return nil
      }
      return fd
    }
  }

#else
  /// SIGPIPE at its default disposition is checked in `sigpipe-probe`, a child process, with
  /// glibc's signal layout and `MSG_NOSIGNAL`: Linux only.
  @Suite("SIGPIPE cannot kill the process")
  struct SigpipeTests {
    @Test(.linuxOnly("needs Linux: runs sigpipe-probe as a child process"))
    func uploadsSurviveBrokenConnections() {}
  }
#endif
