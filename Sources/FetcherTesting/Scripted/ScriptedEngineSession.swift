import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// An engine session of a ``ScriptedEngine``: makes ``ScriptedTask``s answered by the engine's
/// script, and cancels them when invalidated that way.
///
/// `@unchecked Sendable`: mutable state lives in `state`, a `Locked`.
final class ScriptedEngineSession: EngineSession, @unchecked Sendable {
  private struct State {
    var invalidated = false
    var tasks: [ObjectIdentifier: ScriptedTask] = [:]
  }

  private let book: ScriptBook
  private let configuration: URLSessionConfiguration
  private let state = Locked(State())

  init(book: ScriptBook, configuration: URLSessionConfiguration) {
    self.book = book
    self.configuration = configuration
  }

  /// A suspended exchange performs no step until resumed, as libcurl stops reading.
  var pausing: StreamPausing.Method { .suspendTask }

  /// No timer of its own: the fetcher's timeout ends a stalled exchange.
  var enforcesRequestTimeout: Bool { false }

  /// The engine's virtual clock, if it has one.
  var clock: any FetchClock { book.clock ?? SystemFetchClock.shared }

  var tlsSettingsLimitation: String? { nil }

  var routeLimitation: String? { nil }

  var sharesOneSessionAmongStreams: Bool { true }

  func sendsSizedStreams(for request: URLRequest) -> Bool { true }

  var isInvalidated: Bool { state.withLock { $0.invalidated } }

  func makeTask(
    request: URLRequest, body: EngineBody, tls: TLSSettings, route: TransportRoute,
    handler: any SessionTaskHandler
  ) -> (any EngineTask)? {
    var headers = request.allHTTPHeaderFields ?? [:]
    for (key, value) in configuration.httpAdditionalHeaders ?? [:] {
      guard let name = key as? String, request.value(forHTTPHeaderField: name) == nil else { continue }
      headers[name] = String(describing: value)
    }
    return state.withLock { state -> (any EngineTask)? in
      if state.invalidated { return nil }
      let (exchange, index) = book.take(request, headers: headers)
      let task = ScriptedTask(
        book: book, index: index, request: request, body: body, exchange: exchange, handler: handler,
        onComplete: { [weak self] task in self?.forget(task) })
      state.tasks[ObjectIdentifier(task)] = task
      return task
    }
  }

  private func forget(_ task: ScriptedTask) {
    state.withLock { _ = $0.tasks.removeValue(forKey: ObjectIdentifier(task)) }
  }

  func finishTasksAndInvalidate() {
    state.withLock { $0.invalidated = true }
  }

  func invalidateAndCancel() {
    let tasks = state.withLock { state -> [ScriptedTask] in
      state.invalidated = true
      return Array(state.tasks.values)
    }
    for task in tasks { task.cancel() }
  }

  func invalidateAndCancelWithoutWaiting() {
    invalidateAndCancel()
  }
}
