#if os(Linux)
  import Foundation
  import Glibc

  /// Child processes for the package's own tests: probes that need a process of their own (a
  /// signal at its default disposition, the end of the process) and helper servers. `posix_spawn`,
  /// not Foundation's `Process`, which keeps what it allocated (LeakSanitizer reports it) and cannot
  /// be waited for with a bound.
  package enum ChildProcess {
    /// How a child ended: its exit code, or the signal that ended it.
    package struct Exit: Sendable, CustomStringConvertible {
      package var exitCode: Int32?
      package var signal: Int32?

      package var description: String {
        if let signal { return "signal \(signal)" }
        return "exit code \(exitCode ?? -1)"
      }
    }

    package struct SpawnError: Error, CustomStringConvertible {
      package var description: String
    }

    /// Starts `arguments` with `environment`, standard input from /dev/null and standard output and
    /// error to the file `output`. SIGPIPE is at its default disposition and no signal is blocked,
    /// as in a program started from a shell (an ignored signal stays ignored across exec, and a
    /// test process may ignore SIGPIPE).
    package static func spawn(_ arguments: [String], environment: [String: String], output: URL) throws
      -> pid_t
    {
      var actions = posix_spawn_file_actions_t()
      posix_spawn_file_actions_init(&actions)
      defer { posix_spawn_file_actions_destroy(&actions) }
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
      posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
      posix_spawn_file_actions_adddup2(&actions, 1, 2)
      let argv = arguments.map { strdup($0) } + [nil]
      let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
      defer { for pointer in argv + envp { free(pointer) } }
      var attributes = posix_spawnattr_t()
      posix_spawnattr_init(&attributes)
      defer { posix_spawnattr_destroy(&attributes) }
      var defaults = sigset_t()
      sigemptyset(&defaults)
      sigaddset(&defaults, SIGPIPE)
      var emptyMask = sigset_t()
      sigemptyset(&emptyMask)
      posix_spawnattr_setsigdefault(&attributes, &defaults)
      posix_spawnattr_setsigmask(&attributes, &emptyMask)
      posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
      var pid: pid_t = 0
      let status = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
      guard status == 0 else { throw SpawnError(description: "\(arguments[0]) could not start: \(status)") }
      return pid
    }

    /// Waits for `pid` to end, for at most `timeout` seconds; then kills it with SIGKILL and reaps it.
    package static func wait(_ pid: pid_t, timeout: TimeInterval) -> Exit {
      var status: Int32 = 0
      let deadline = Date().addingTimeInterval(timeout)
      while waitpid(pid, &status, WNOHANG) == 0 {
        if Date() > deadline {
          kill(pid, SIGKILL)
          while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
          break
        }
        usleep(10_000)
      }
      let signal = status & 0x7f
      return Exit(exitCode: signal == 0 ? (status >> 8) & 0xff : nil, signal: signal == 0 ? nil : signal)
    }

    /// Runs `arguments` to its end, for at most `timeout` seconds (then it is killed), with
    /// `environment`, and returns how it ended and what it printed (standard output and error),
    /// line by line. The wait is on a thread of its own: a test that awaits this leaves the
    /// cooperative pool to the tests running beside it (on 2 cores a blocked pool thread halts half
    /// the suite).
    package static func run(
      _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
      timeout: TimeInterval
    ) async throws -> (exit: Exit, lines: [String]) {
      let output = FileManager.default.temporaryDirectory.appendingPathComponent(
        "child-\(UUID().uuidString).out")
      defer { try? FileManager.default.removeItem(at: output) }
      let pid = try spawn(arguments, environment: environment, output: output)
      let exit = await withCheckedContinuation { (continuation: CheckedContinuation<Exit, Never>) in
        Thread.detachNewThread { continuation.resume(returning: wait(pid, timeout: timeout)) }
      }
      let lines = readGrowingFile(output).split(separator: "\n")
        .map(String.init)
      return (exit, ownLines(lines))
    }

    /// Runs the probe executable `name`, built beside the running test executable, with
    /// `arguments`; see ``run(_:environment:timeout:)``. Throws if the probe was not built.
    package static func runProbe(
      named name: String, arguments: [String] = [],
      environment: [String: String] = ProcessInfo.processInfo.environment, timeout: TimeInterval = 120
    ) async throws -> (exit: Exit, lines: [String]) {
      let probe = try ownExecutable().deletingLastPathComponent().appendingPathComponent(name)
      guard FileManager.default.isExecutableFile(atPath: probe.path) else {
        throw SpawnError(description: "not built: \(probe.path)")
      }
      return try await run([probe.path] + arguments, environment: environment, timeout: timeout)
    }

    /// The lines a child printed itself: without empty trailing lines, and without the table of
    /// suppressions LeakSanitizer prints at exit under the AddressSanitizer build (from a line of
    /// dashes and "Suppressions used:" to the next line of dashes). The table is written before the
    /// child's buffered standard output is flushed, so the child's own lines may follow it.
    package static func ownLines(_ lines: [String]) -> [String] {
      var lines = lines
      if let title = lines.indices.first(where: {
        lines[$0].hasPrefix("Suppressions used:") && $0 > 0 && lines[$0 - 1].hasPrefix("-----")
      }) {
        let end =
          lines[(title + 1)...].firstIndex { $0.hasPrefix("-----") } ?? lines.index(before: lines.endIndex)
        lines.removeSubrange((title - 1)...end)
      }
      while lines.last?.isEmpty == true { lines.removeLast() }
      return lines
    }

    /// The first line `pid` writes to `output`, once it is whole: polled every 10 ms for at most
    /// `timeout` seconds; nil if the child ends or the time runs out first (a server printing the
    /// port it listens on).
    package static func firstLine(of pid: pid_t, output: URL, timeout: TimeInterval) -> String? {
      let deadline = Date().addingTimeInterval(timeout)
      var status: Int32 = 0
      while Date() < deadline, waitpid(pid, &status, WNOHANG) == 0 {
        let text = readGrowingFile(output)
        if let end = text.firstIndex(of: "\n") { return String(text[..<end]) }
        usleep(10_000)
      }
      return nil
    }

    /// The text of a file another process may still be writing, read with read(2): Foundation's
    /// `String(contentsOf:)` of a file that is empty when it looks keeps what it allocated
    /// (LeakSanitizer reports it).
    package static func readGrowingFile(_ url: URL) -> String {
      let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else { return "" }
      defer { close(descriptor) }
      var bytes: [UInt8] = []
      var chunk = [UInt8](repeating: 0, count: 4096)
      while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
          bytes.append(contentsOf: chunk[0..<count])
        } else if count == 0 || errno != EINTR {
          break
        }
      }
      return String(decoding: bytes, as: UTF8.self)
    }

    /// The path of the running executable (a test runner: probes are built beside it).
    package static func ownExecutable() throws -> URL {
      URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    }
  }
#endif
