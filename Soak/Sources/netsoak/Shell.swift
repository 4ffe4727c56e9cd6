import Foundation

/// Runs system tools (`ip`, `nft`, `tc`, `nginx`) for the soak.
enum Shell {
  struct Result {
    var status: Int32
    var output: String
    var succeeded: Bool { status == 0 }
  }

  /// Runs `arguments` (the first found on PATH), waits, and returns its status and combined output.
  /// With `capture` false the output goes to /dev/null: daemons (nginx) keep inherited pipes open.
  @discardableResult
  static func run(_ arguments: [String], capture: Bool = true) -> Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    if capture {
      process.standardOutput = pipe
      process.standardError = pipe
    } else {
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
    }
    process.standardInput = FileHandle.nullDevice
    do {
      try process.run()
    } catch {
      return Result(status: 127, output: "\(error)")
    }
    let output = capture ? pipe.fileHandleForReading.readDataToEndOfFile() : Data()
    process.waitUntilExit()
    return Result(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self))
  }

  /// Runs a command that leaves a daemon behind (nginx), with its output to /dev/null, and waits for
  /// it. Not through `Process`: Foundation waits for a descriptor that the daemon inherits, so until
  /// it exits.
  @discardableResult
  static func spawn(_ arguments: [String]) -> Int32 {
    guard let pid = launch(arguments, output: URL(fileURLWithPath: "/dev/null")) else { return 127 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    // WIFEXITED / WEXITSTATUS
    return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
  }

  /// Starts a long-running command (a server that stays in the foreground) with standard output and
  /// error appended to `output`, and returns its pid without waiting; the caller reaps it.
  static func launch(_ arguments: [String], output: URL) -> pid_t? {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    guard posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ) == 0 else { return nil }
    return pid
  }

  /// Runs a command and stops the soak if it fails (set-up steps that must work).
  static func require(_ arguments: [String]) throws {
    let result = run(arguments)
    guard result.succeeded else {
      throw SoakError.setup(
        "`\(arguments.joined(separator: " "))` failed (\(result.status)): \(result.output)")
    }
  }

  /// Whether a tool is on PATH.
  static func has(_ tool: String) -> Bool {
    run(["sh", "-c", "command -v \(tool)"]).succeeded
  }
}

enum SoakError: Error, CustomStringConvertible {
  case setup(String)
  case skipped(String)

  var description: String {
    switch self {
    case .setup(let text): return "set-up failed: \(text)"
    case .skipped(let text): return "skipped: \(text)"
    }
  }
}
