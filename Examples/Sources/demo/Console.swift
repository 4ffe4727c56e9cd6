import Foundation
import SessionFetcher

/// Unbuffered output, so that stdout and stderr interleave in order when both go to one place.
enum Console {
  /// Whether stderr is a terminal (a live progress bar makes sense there).
  static let stderrIsTerminal = isatty(STDERR_FILENO) == 1

  /// Writes a line to stdout.
  static func say(_ line: String = "") {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }

  /// Writes `text` to stderr as is (no newline added).
  static func writeError(_ text: String) {
    FileHandle.standardError.write(Data(text.utf8))
  }

  /// A section heading: `[n] Title`.
  static func heading(_ number: Int, _ title: String) {
    say()
    say("[\(number)] \(title)")
  }

  /// An indented detail line under a heading.
  static func detail(_ line: String) {
    say("    " + line)
  }
}

/// Human-readable sizes and durations for the tour's output.
enum Format {
  static func bytes(_ count: Int64) -> String {
    let value = Double(count)
    if value >= 1_000_000 { return String(format: "%.1f MB", value / 1_000_000) }
    if value >= 1_000 { return String(format: "%.1f KB", value / 1_000) }
    return "\(count) B"
  }

  static func seconds(_ interval: TimeInterval) -> String {
    String(format: "%.2f s", interval)
  }

  /// A short description of a fetch error: the library's own errors, URLError codes, or anything.
  static func error(_ error: any Error) -> String {
    switch error {
    case let error as SessionFetcherError:
      return error.description
    case let error as URLError:
      return "\(error.localizedDescription) (URLError \(error.code.rawValue))"
    default:
      return String(describing: error)
    }
  }
}
