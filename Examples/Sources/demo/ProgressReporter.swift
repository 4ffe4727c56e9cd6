import Foundation

/// Shows download progress: a live bar on stderr when it is a terminal, otherwise a line on stdout
/// at every quarter, so logs stay readable.
///
/// `@unchecked Sendable`: the mutable state is guarded by `lock`; updates come from the fetcher's
/// serial callback queue anyway.
final class ProgressReporter: @unchecked Sendable {
  private let lock = NSLock()
  private let startDate = Date()
  private let usesLiveBar: Bool
  private var lastDrawDate = Date.distantPast
  private var nextQuarterToReport = 1
  private var isBarShown = false

  init(usesLiveBar: Bool = Console.stderrIsTerminal) {
    self.usesLiveBar = usesLiveBar
  }

  /// Reports `written` of `expected` bytes (`expected` ≤ 0 when unknown).
  func update(written: Int64, expected: Int64) {
    lock.withLock {
      let elapsed = Date().timeIntervalSince(startDate)
      let rate = elapsed > 0 ? Double(written) / elapsed : 0
      if usesLiveBar {
        let now = Date()
        guard now.timeIntervalSince(lastDrawDate) >= 0.05 || written == expected else { return }
        lastDrawDate = now
        isBarShown = true
        Console.writeError("\r\u{1B}[K    " + Self.bar(written: written, expected: expected, rate: rate))
      } else if expected > 0 {
        while nextQuarterToReport <= 4, written * 4 >= expected * Int64(nextQuarterToReport) {
          Console.detail(
            "\(nextQuarterToReport * 25)%: \(Format.bytes(written)) of \(Format.bytes(expected)) "
              + "after \(Format.seconds(elapsed)) (\(Format.bytes(Int64(rate)))/s)")
          nextQuarterToReport += 1
        }
      }
    }
  }

  /// Ends the live bar's line, if one was drawn.
  func finish() {
    lock.withLock {
      if isBarShown { Console.writeError("\n") }
      isBarShown = false
    }
  }

  static func bar(written: Int64, expected: Int64, rate: Double, width: Int = 30) -> String {
    let rateText = "\(Format.bytes(Int64(rate)))/s"
    guard expected > 0 else { return "\(Format.bytes(written))  \(rateText)" }
    let fraction = min(1, Double(written) / Double(expected))
    let filled = Int(fraction * Double(width))
    let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
    let percent = String(format: "%3d%%", Int(fraction * 100))
    let remaining = rate > 0 ? Double(expected - written) / rate : 0
    return "[\(bar)] \(percent)  \(Format.bytes(written)) / \(Format.bytes(expected))  \(rateText)"
      + "  ETA \(Format.seconds(remaining))"
  }
}
