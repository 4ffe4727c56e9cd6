import Foundation

/// A one-line download progress bar on stderr (bytes, total, rate, ETA); silent when stderr is not
/// a terminal.
///
/// `@unchecked Sendable`: the mutable state is guarded by `lock`.
final class ProgressBar: @unchecked Sendable {
  private let lock = NSLock()
  private let isEnabled = isatty(STDERR_FILENO) == 1
  private let startDate = Date()
  private var lastDrawDate = Date.distantPast
  private var isShown = false

  func update(written: Int64, expected: Int64) {
    guard isEnabled else { return }
    lock.withLock {
      let now = Date()
      guard now.timeIntervalSince(lastDrawDate) >= 0.1 || written == expected else { return }
      lastDrawDate = now
      isShown = true
      let elapsed = now.timeIntervalSince(startDate)
      let rate = elapsed > 0 ? Double(written) / elapsed : 0
      FileHandle.standardError.write(Data(("\r\u{1B}[K" + Self.line(written, expected, rate)).utf8))
    }
  }

  func finish() {
    lock.withLock {
      if isShown { FileHandle.standardError.write(Data("\n".utf8)) }
      isShown = false
    }
  }

  private static func line(_ written: Int64, _ expected: Int64, _ rate: Double) -> String {
    let rateText = "\(size(Int64(rate)))/s"
    guard expected > 0 else { return "\(size(written))  \(rateText)" }
    let fraction = min(1, Double(written) / Double(expected))
    let width = 30
    let filled = Int(fraction * Double(width))
    let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
    let eta = rate > 0 ? String(format: "%.0f s", Double(expected - written) / rate) : "--"
    return String(format: "[%@] %3d%%  ", bar, Int(fraction * 100))
      + "\(size(written)) / \(size(expected))  \(rateText)  ETA \(eta)"
  }

  private static func size(_ count: Int64) -> String {
    let value = Double(count)
    if value >= 1_000_000 { return String(format: "%.1f MB", value / 1_000_000) }
    if value >= 1_000 { return String(format: "%.1f KB", value / 1_000) }
    return "\(count) B"
  }
}
