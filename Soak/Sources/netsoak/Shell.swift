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

  /// Runs a command and stops the soak if it fails (set-up steps that must work).
  static func require(_ arguments: [String]) throws {
    let result = run(arguments)
    guard result.succeeded else {
      throw SoakError.setup("`\(arguments.joined(separator: " "))` failed (\(result.status)): \(result.output)")
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
