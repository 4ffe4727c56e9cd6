import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One exchange of a ``ScriptedEngine``: performs its script's steps on the engine's event queue,
/// reporting to its handler one event at a time, and `didCompleteWithError` exactly once, last.
///
/// `@unchecked Sendable`: mutable state lives in `state`, a `Locked`.
final class ScriptedTask: EngineTask, @unchecked Sendable {
  private enum Phase {
    case created, running, suspended, completed
  }

  private struct State {
    var phase = Phase.created
    var cancelled = false
    var nextStep = 0
    var bodyBytes = 0
    var bodySent = false
    var credentialAnswers = 0
    var response: HTTPURLResponse?
    var handler: (any SessionTaskHandler)?
  }

  /// What the engine does next.
  private enum Action {
    case stop
    case finish
    case perform(ScriptedExchange.Step)
  }

  private let book: ScriptBook
  private let index: Int
  private let request: URLRequest
  private let body: EngineBody
  private let steps: [ScriptedExchange.Step]
  private let isUnscripted: Bool
  private let onComplete: @Sendable (ScriptedTask) -> Void
  private let state: Locked<State>

  init(
    book: ScriptBook, index: Int, request: URLRequest, body: EngineBody, exchange: ScriptedExchange?,
    handler: any SessionTaskHandler, onComplete: @escaping @Sendable (ScriptedTask) -> Void
  ) {
    self.book = book
    self.index = index
    self.request = request
    self.body = body
    self.steps = exchange?.steps ?? []
    self.isUnscripted = exchange == nil
    self.onComplete = onComplete
    self.state = Locked(State(handler: handler))
  }

  // MARK: EngineTask

  func resume() {
    let resumed = state.withLock { state -> (Int, Int)? in
      guard !state.cancelled, state.phase == .created || state.phase == .suspended else { return nil }
      state.phase = .running
      return (state.nextStep, state.bodyBytes)
    }
    guard let (steps, bytes) = resumed else { return }
    book.record(.resumed, of: index, steps: steps, bytes: bytes)
    book.events.async { self.advance() }
  }

  func suspend() {
    let suspended = state.withLock { state -> (Int, Int)? in
      guard !state.cancelled, state.phase == .running else { return nil }
      state.phase = .suspended
      return (state.nextStep, state.bodyBytes)
    }
    guard let (steps, bytes) = suspended else { return }
    book.record(.suspended, of: index, steps: steps, bytes: bytes)
  }

  func cancel() {
    let cancelled = state.withLock { state -> (Int, Int)? in
      guard !state.cancelled, state.phase != .completed else { return nil }
      state.cancelled = true
      return (state.nextStep, state.bodyBytes)
    }
    guard let (steps, bytes) = cancelled else { return }
    book.record(.cancelled, of: index, steps: steps, bytes: bytes)
    book.events.async { self.complete(with: URLError(.cancelled)) }
  }

  /// Nothing the engine asks of the exchange waits for an answer, so letting go is cancelling.
  func letGo() {
    cancel()
  }

  var response: URLResponse? { state.withLock { $0.response } }

  var transferMetrics: TransferMetrics? { nil }

  var diagnosticSummary: String {
    state.withLock { state in
      "scripted exchange \(index) \(state.phase) after \(state.nextStep) of \(steps.count) steps, "
        + "\(state.bodyBytes) body bytes, cancelled \(state.cancelled), "
        + "response \(state.response?.statusCode ?? -1)"
    }
  }

  // MARK: Performing the script (on the event queue)

  private func advance() {
    sendBodyIfNeeded()
    while true {
      let action = state.withLock { state -> Action in
        while true {
          guard !state.cancelled, state.phase == .running else { return .stop }
          guard state.nextStep < steps.count else { return .finish }
          let step = steps[state.nextStep]
          switch step {
          case .wait(let gate):
            // Goes on when the gate opens (again through `advance`, which finds it open).
            if !gate.whenOpen({ self.book.events.async { self.advance() } }) { return .stop }
            state.nextStep += 1
          case .stall:
            return .stop
          case .head, .body, .fail:
            state.nextStep += 1
            return .perform(step)
          }
        }
      }
      switch action {
      case .stop:
        return
      case .finish:
        let noHead = state.withLock { $0.response == nil }
        if isUnscripted {
          complete(
            with: ScriptedEngineError.noScript(
              method: (request.httpMethod ?? "GET").uppercased(), url: request.url?.absoluteString ?? ""))
        } else {
          complete(with: noHead ? ScriptedEngineError.endedBeforeHead : nil)
        }
        return
      case .perform(.head(let status, let headers)):
        deliverHead(status: status, headers: headers)
      case .perform(.body(let data)):
        let handler = state.withLock { state -> (any SessionTaskHandler)? in
          guard state.response != nil else { return nil }
          state.bodyBytes += data.count
          return state.handler
        }
        guard let handler else {
          complete(with: ScriptedEngineError.bodyBeforeHead)
          return
        }
        handler.task(self, didReceive: data)
      case .perform(.fail(let error)):
        complete(with: error)
        return
      case .perform(.wait), .perform(.stall):
        return
      }
    }
  }

  /// Reads the request body, once, as the engine would send it, and reports it sent.
  private func sendBodyIfNeeded() {
    let handler = state.withLock { state -> (any SessionTaskHandler)? in
      guard !state.bodySent else { return nil }
      state.bodySent = true
      return state.handler
    }
    guard let handler else { return }
    var expected: Int64 = -1
    let bytes: Data
    switch body {
    case .none:
      return
    case .data(let data):
      bytes = data
      expected = Int64(data.count)
    case .file(let url):
      bytes = (try? Data(contentsOf: url)) ?? Data()
      expected = Int64(bytes.count)
    case .stream(let stream):
      bytes = Self.readAll(stream)
    case .sizedStream(let stream, let length):
      bytes = Self.readAll(stream)
      expected = length
    }
    book.record(body: bytes, of: index)
    guard !bytes.isEmpty else { return }
    let total = Int64(bytes.count)
    handler.task(self, didSendBodyData: total, totalBytesSent: total, totalBytesExpectedToSend: expected)
  }

  private static func readAll(_ stream: InputStream) -> Data {
    var data = Data()
    stream.open()
    defer { stream.close() }
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = stream.read(&buffer, maxLength: buffer.count)
      if count <= 0 { break }
      data.append(buffer, count: count)
    }
    return data
  }

  /// Hands over a head: as a challenge first (401/407 with its header), as a redirect first (3xx
  /// with a `Location`), as the libcurl engine does.
  private func deliverHead(status: Int, headers: [String: String]) {
    guard let url = request.url,
      let response = HTTPURLResponse(
        url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers),
      let handler = state.withLock({ $0.handler })
    else { return }
    if let space = ScriptedChallenge.protectionSpace(status: status, headers: headers, url: url) {
      let failures = state.withLock { $0.credentialAnswers }
      let challenge = URLAuthenticationChallenge(
        protectionSpace: space, proposedCredential: nil, previousFailureCount: failures,
        failureResponse: response, error: nil, sender: ScriptedChallenge.Sender())
      let (disposition, credential) = handler.task(self, didReceive: challenge)
      if disposition == .useCredential, credential != nil {
        // Sent again with the credential within the exchange: the next steps answer that.
        state.withLock { $0.credentialAnswers += 1 }
        return
      }
    }
    if (300..<400).contains(status),
      let location = headers.first(where: { $0.key.caseInsensitiveCompare("Location") == .orderedSame })?
        .value,
      let target = URL(string: location, relativeTo: url)?.absoluteURL
    {
      var redirect = URLRequest(url: target)
      redirect.httpMethod = request.httpMethod
      // Whatever the answer, the 3xx is handed over: the fetcher refuses and follows itself.
      _ = handler.task(self, willRedirect: response, to: redirect)
    }
    let deliver = state.withLock { state -> Bool in
      guard !state.cancelled else { return false }
      state.response = response
      return true
    }
    if deliver { handler.task(self, didReceiveHead: ResponseHead(response)) }
  }

  /// Completes the exchange with `error`, unless it completed already.
  private func complete(with error: (any Error)?) {
    let finished = state.withLock { state -> (any SessionTaskHandler, Int, Int)? in
      guard state.phase != .completed, let handler = state.handler else { return nil }
      state.phase = .completed
      state.handler = nil
      return (handler, state.nextStep, state.bodyBytes)
    }
    guard let (handler, steps, bytes) = finished else { return }
    book.record(.completed(failed: error != nil), of: index, steps: steps, bytes: bytes)
    onComplete(self)
    handler.task(self, didCompleteWithError: error)
  }
}
