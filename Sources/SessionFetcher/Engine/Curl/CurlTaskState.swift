import Foundation

/// The life of one ``CurlTask`` as every thread sees it: a value type with no I/O, changed only
/// under the task's lock; each event returns what the caller must do.
///
/// created → running → completed; `cancel` and `suspend` are flags on top. The completion is taken
/// exactly once: ``complete(curlCode:metrics:)`` hands the handler out the first time only.
package struct CurlTaskState {
  package enum Phase: String {
    case created, running, completed
  }

  package enum ResumeAction: Equatable {
    /// Nothing to do (already running, or over).
    case none
    /// Hand the transfer to the loop.
    case start
    /// Let the paused transfer go on receiving.
    case unpause
  }

  package private(set) var phase = Phase.created
  package private(set) var isCancelled = false
  package private(set) var isSuspended = false
  package private(set) var handler: (any SessionTaskHandler)?
  /// The final head handed to the handler (its `URLResponse` made only when asked for).
  package var response: ResponseHead?
  package var bytesSent: Int64 = 0
  package var bytesReceived: Int64 = 0
  package private(set) var curlCode: Int32?
  package private(set) var metrics: TransferMetrics?

  package init(handler: any SessionTaskHandler) {
    self.handler = handler
  }

  package mutating func resume() -> ResumeAction {
    switch phase {
    case .created:
      guard !isCancelled else { return .none }
      phase = .running
      // A suspend before the start has nothing to hold back.
      isSuspended = false
      return .start
    case .running:
      guard isSuspended else { return .none }
      isSuspended = false
      return .unpause
    case .completed:
      return .none
    }
  }

  /// Whether the loop must pause the transfer.
  package mutating func suspend() -> Bool {
    guard phase != .completed, !isSuspended else { return false }
    isSuspended = true
    return phase == .running
  }

  /// Whether the loop must end the transfer (false when it is over or being ended already).
  package mutating func cancel() -> Bool {
    guard phase != .completed, !isCancelled else { return false }
    isCancelled = true
    return true
  }

  /// Ends the task; returns the handler to tell, the first time only.
  package mutating func complete(curlCode: Int32?, metrics: TransferMetrics?) -> (any SessionTaskHandler)? {
    guard phase != .completed else { return nil }
    phase = .completed
    self.curlCode = curlCode
    self.metrics = metrics
    defer { handler = nil }
    return handler
  }
}
