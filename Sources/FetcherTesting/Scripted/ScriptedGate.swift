import Foundation

/// A point where a ``ScriptedEngine`` exchange waits for the test
/// (``ScriptedExchange/Step/wait(_:)``): closed until ``open()``, then open for good.
///
/// Unlike ``Gate``, no thread blocks on it: the exchange stops performing steps and goes on, on the
/// engine's event queue, once the gate opens. One gate may hold several exchanges.
public final class ScriptedGate: Sendable {
  private struct State {
    var isOpen = false
    var waiters: [@Sendable () -> Void] = []
  }

  private let state = LockedState(State())

  /// A closed gate.
  public init() {}

  /// Whether the gate was opened.
  public var isOpen: Bool { state.withLock { $0.isOpen } }

  /// Opens the gate: every exchange waiting at it goes on.
  public func open() {
    let waiters = state.withLock { state -> [@Sendable () -> Void] in
      state.isOpen = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter() }
  }

  /// Calls `body` once the gate is open: at once if it is (and returns true), else when it opens.
  func whenOpen(_ body: @escaping @Sendable () -> Void) -> Bool {
    state.withLock { state in
      if state.isOpen { return true }
      state.waiters.append(body)
      return false
    }
  }
}
