import Foundation
import SoakSupport

#if canImport(Glibc)
  import Glibc
#endif

/// A child process of this program, spawned with `posix_spawn`, its standard output on a pipe that
/// a reader thread turns into lines.
final class ChildProcess: @unchecked Sendable {
  // `@unchecked Sendable`: `lines`, `progress` and `isClosed` are only touched under `lock`;
  // `pid` and `readEnd` are set once, in `init`.
  let pid: pid_t
  private let readEnd: Int32
  private let lock = NSLock()
  private var lines: [String] = []
  private var progressValue: Int64 = -1
  private var isClosed = false

  /// Spawns `executable` with `arguments` (without the program name) and this process's
  /// environment; its standard error stays this process's.
  init(executable: String, arguments: [String]) throws {
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else { throw CrashResumeError("pipe: \(String(cString: strerror(errno)))") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
    posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
    posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var spawned: pid_t = 0
    let status = posix_spawn(&spawned, executable, &actions, nil, argv, environ)
    close(pipeEnds[1])
    guard status == 0 else {
      close(pipeEnds[0])
      throw CrashResumeError("posix_spawn \(executable): \(String(cString: strerror(status)))")
    }
    pid = spawned
    readEnd = pipeEnds[0]
    let thread = Thread { [self] in readLines() }
    thread.start()
  }

  private func readLines() {
    var pending = Data()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = read(readEnd, &buffer, buffer.count)
      if count < 0, errno == EINTR { continue }
      guard count > 0 else { break }
      pending.append(contentsOf: buffer[0..<count])
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
        pending.removeSubrange(pending.startIndex...newline)
        record(line)
      }
    }
    close(readEnd)
    lock.withLock { isClosed = true }
  }

  private func record(_ line: String) {
    lock.withLock {
      if line.hasPrefix("p "), let value = Int64(line.dropFirst(2)) {
        progressValue = value
      } else {
        lines.append(line)
      }
    }
  }

  /// The latest `p N` progress line's N, -1 before any.
  var progress: Int64 { lock.withLock { progressValue } }

  /// The lines other than progress, so far.
  var output: [String] { lock.withLock { lines } }

  /// Whether the child printed `line`.
  func hasPrinted(_ line: String) -> Bool { output.contains(line) }

  /// Sends SIGKILL.
  func kill() { send(SIGKILL) }

  /// Sends `signal`.
  func send(_ signal: Int32) { _ = Glibc.kill(pid, signal) }

  /// The exit status, once the child ended (nil while it runs, or after `timeout` seconds of waiting).
  func wait(timeout: TimeInterval) -> ChildExit? {
    let deadline = Date().addingTimeInterval(timeout)
    var status: Int32 = 0
    while true {
      let result = waitpid(pid, &status, WNOHANG)
      if result == pid {
        // Let the reader thread drain the pipe (the child's last lines).
        let drainDeadline = Date().addingTimeInterval(2)
        while !lock.withLock({ isClosed }), Date() < drainDeadline { usleep(1_000) }
        return ChildExit(rawStatus: status)
      }
      if result < 0, errno != EINTR { return ChildExit(rawStatus: -1) }
      if Date() >= deadline { return nil }
      usleep(1_000)
    }
  }
}

/// How a child ended.
struct ChildExit: CustomStringConvertible {
  var rawStatus: Int32

  /// The exit code when the child exited, nil when a signal ended it.
  var exitCode: Int32? { rawStatus & 0x7f == 0 ? (rawStatus >> 8) & 0xff : nil }
  /// The signal that ended the child, nil when it exited.
  var signal: Int32? {
    let signal = rawStatus & 0x7f
    return signal != 0 && signal != 0x7f ? signal : nil
  }

  var description: String {
    if let exitCode { return "exit \(exitCode)" }
    if let signal { return "signal \(signal)" }
    return "status \(rawStatus)"
  }
}

struct CrashResumeError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// The sha256 of a file (hex).
func sha256(of url: URL) throws -> String {
  guard let digest = SHA256.hex(ofFile: url) else { throw CrashResumeError("cannot read \(url.path)") }
  return digest
}

/// The size of the file at `url`, nil when there is none.
func fileSize(_ url: URL) -> Int64? {
  var info = stat()
  guard stat(url.path, &info) == 0 else { return nil }
  return Int64(info.st_size)
}

/// The names in `folder`, sorted.
func contents(of folder: URL) -> [String] {
  ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
}

/// Writes `data` to `url` through a temporary file and a rename: a reader sees all or nothing.
func writeAtomically(_ data: Data, to url: URL) throws {
  try data.write(to: url, options: .atomic)
}

/// A random file of `count` bytes (from /dev/urandom, in 1 MiB pieces).
func makeRandomFile(_ url: URL, count: Int64) throws {
  guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
    throw CrashResumeError("cannot create \(url.path)")
  }
  let output = try FileHandle(forWritingTo: url)
  defer { try? output.close() }
  let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
  defer { try? random.close() }
  var left = count
  while left > 0 {
    let piece = try random.read(upToCount: Int(min(left, 1 << 20))) ?? Data()
    guard !piece.isEmpty else { throw CrashResumeError("/dev/urandom gave nothing") }
    try output.write(contentsOf: piece)
    left -= Int64(piece.count)
  }
}
