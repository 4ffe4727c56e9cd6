import Foundation

/// One line on stderr, redrawn in place a few times a second: files done of the total, bytes
/// received in this run and the rate. Drawn only when stderr is a terminal; other lines
/// (`note(_:)`) are printed above it.
final class ProgressLine: Sendable {
  private struct State {
    var total = 0
    var done = 0
    var failed = 0
    var bytes: Int64 = 0
    var start = Date()
    var isDrawn = false
    var isFinished = false
  }

  private let isShown: Bool
  private let state = MirrorLock(State())
  private let redrawing = MirrorLock(Task<Void, Never>?.none)

  init(isShown: Bool) {
    self.isShown = isShown && isatty(STDERR_FILENO) == 1
  }

  func start(total: Int) {
    state.withLock { $0 = State(total: total) }
    guard isShown else { return }
    let task = Task { [weak self] in
      while !Task.isCancelled {
        self?.redraw()
        try? await Task.sleep(for: .milliseconds(250))
      }
    }
    redrawing.withLock { $0 = task }
  }

  func add(bytes: Int64) { state.withLock { $0.bytes += bytes } }

  func fileEnded(failed: Bool) {
    state.withLock { state in
      state.done += 1
      if failed { state.failed += 1 }
    }
  }

  /// Prints `line` on stderr, above the progress line.
  func note(_ line: String) {
    state.withLock { state in
      let erase = state.isDrawn ? "\r\u{1B}[K" : ""
      FileHandle.standardError.write(Data((erase + line + "\n").utf8))
      if state.isDrawn { FileHandle.standardError.write(Data(Self.text(state).utf8)) }
    }
  }

  /// Draws the final figures and ends the line.
  func finish() {
    guard isShown else { return }
    redrawing.withLock { $0?.cancel() }
    state.withLock { state in
      FileHandle.standardError.write(Data(("\r\u{1B}[K" + Self.text(state) + "\n").utf8))
      state.isDrawn = false
      state.isFinished = true
    }
  }

  private func redraw() {
    state.withLock { state in
      guard !state.isFinished else { return }
      state.isDrawn = true
      FileHandle.standardError.write(Data(("\r\u{1B}[K" + Self.text(state)).utf8))
    }
  }

  private static func text(_ state: State) -> String {
    let elapsed = max(Date().timeIntervalSince(state.start), 0.001)
    let rate = "\(size(Int64(Double(state.bytes) / elapsed)))/s"
    let failed = state.failed > 0 ? ", \(state.failed) failed" : ""
    return "\(state.done)/\(state.total) files, \(size(state.bytes)), \(rate)\(failed)"
  }

  static func size(_ count: Int64) -> String {
    let value = Double(count)
    if value >= 1_000_000_000 { return String(format: "%.2f GB", value / 1_000_000_000) }
    if value >= 1_000_000 { return String(format: "%.1f MB", value / 1_000_000) }
    if value >= 1_000 { return String(format: "%.1f KB", value / 1_000) }
    return "\(count) B"
  }
}
