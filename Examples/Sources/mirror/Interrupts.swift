import Foundation

/// Ctrl-C (SIGINT) for the whole process, through one dispatch source: the current run's handler
/// when one is set, else the default, ending the process.
enum Interrupts {
  private struct State {
    var source: (any DispatchSourceSignal)?
    var handler: (@Sendable () -> Void)?
  }

  private static let state = MirrorLock(State())

  /// Call once, before the first run. One source serves the whole process: on Linux, libdispatch
  /// catches the signal with a handler of its own, installed when the first source starts, and a
  /// later `signal()` call (say, to restore the default between runs) replaces it: no source, not
  /// even a new one, hears the signal again.
  static func install() {
    signal(SIGINT, SIG_IGN)  // Until the source starts, Ctrl-C must not end the process halfway.
    let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
    source.setEventHandler {
      guard let handler = state.withLock({ $0.handler }) else { exit(130) }
      handler()
    }
    source.resume()
    state.withLock { $0.source = source }
  }

  /// Runs `handler` on each Ctrl-C from now on; nil goes back to ending the process.
  static func setHandler(_ handler: (@Sendable () -> Void)?) {
    state.withLock { $0.handler = handler }
  }
}
