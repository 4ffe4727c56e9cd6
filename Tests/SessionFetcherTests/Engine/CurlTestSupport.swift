#if canImport(FoundationNetworking)
  import FetcherTesting
  import Foundation
  import SessionFetcher
  import Testing

  /// Records what a ``CurlTask`` reports, in order, and lets a test act from inside the callbacks.
  ///
  /// `@unchecked Sendable`: `record` is behind its `Locked` wrapper; the hooks are set before the
  /// task is resumed and only read afterwards.
  final class CurlRecordingHandler: SessionTaskHandler, @unchecked Sendable {
    struct Record {
      var events: [String] = []
      var response: HTTPURLResponse?
      var body = Data()
      var chunks = 0
      var sent: [(delta: Int64, total: Int64, expected: Int64)] = []
      var redirects: [(response: HTTPURLResponse, target: URL?)] = []
      var challenges: [URLAuthenticationChallenge] = []
      var completions: [(any Error)?] = []
      var newBodyStreams = 0
      /// The task's metrics as the completion saw them.
      var metricsAtCompletion: TransferMetrics?
    }

    let record = Locked(Record())
    private let done = DispatchSemaphore(value: 0)
    /// Called on the loop thread after each chunk is recorded.
    var onData: (@Sendable (any EngineTask, Data) -> Void)?
    /// The answer to a challenge (default: cancel it).
    var answer:
      @Sendable (URLAuthenticationChallenge) -> (URLSession.AuthChallengeDisposition, URLCredential?) = {
        _ in (.cancelAuthenticationChallenge, nil)
      }
    /// A fresh body stream for a resend.
    var newBodyStream: (@Sendable () -> InputStream?)?

    func task(_ task: any EngineTask, didReceiveHead head: ResponseHead) {
      let response = head.response
      record.withLock {
        $0.events.append("response \((response as? HTTPURLResponse)?.statusCode ?? 0)")
        $0.response = response as? HTTPURLResponse
      }
    }

    func task(_ task: any EngineTask, didReceive data: Data) {
      record.withLock {
        if $0.chunks == 0 { $0.events.append("data") }
        $0.chunks += 1
        $0.body.append(data)
      }
      onData?(task, data)
    }

    func task(
      _ task: any EngineTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
      totalBytesExpectedToSend: Int64
    ) {
      record.withLock { $0.sent.append((bytesSent, totalBytesSent, totalBytesExpectedToSend)) }
    }

    func task(_ task: any EngineTask, willRedirect response: HTTPURLResponse, to request: URLRequest)
      -> URLRequest?
    {
      record.withLock {
        $0.events.append("redirect \(response.statusCode)")
        $0.redirects.append((response, request.url))
      }
      return nil
    }

    func task(_ task: any EngineTask, didReceive challenge: URLAuthenticationChallenge)
      -> (URLSession.AuthChallengeDisposition, URLCredential?)
    {
      record.withLock {
        $0.events.append("challenge \(challenge.previousFailureCount)")
        $0.challenges.append(challenge)
      }
      return answer(challenge)
    }

    func taskNeedsNewBodyStream(_ task: any EngineTask) -> InputStream? {
      record.withLock { $0.newBodyStreams += 1 }
      return newBodyStream?()
    }

    func task(_ task: any EngineTask, didCompleteWithError error: (any Error)?) {
      record.withLock {
        $0.events.append("complete")
        $0.completions.append(error)
        $0.metricsAtCompletion = (task as? CurlTask)?.transferMetrics
      }
      done.signal()
    }

    /// Waits (up to 30 s) for the completion; false when it did not come.
    func waitForCompletion(timeout: TimeInterval = 30) -> Bool {
      done.wait(timeout: .now() + timeout) == .success
    }

    var current: Record { record.current }
  }

  /// An engine with an ephemeral configuration.
  func makeCurlEngine(perHost: Int = 16) throws -> CurlEngine {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = perHost
    return try CurlEngine(configuration: configuration)
  }

  /// Runs one exchange to its end and returns the record and task.
  func curlExchange(
    _ engine: CurlEngine, _ request: URLRequest, body: EngineBody = .none,
    configure: (CurlRecordingHandler) -> Void = { _ in }
  ) throws -> (CurlRecordingHandler.Record, CurlTask) {
    let handler = CurlRecordingHandler()
    configure(handler)
    let task = try #require(engine.makeTask(request: request, body: body, handler: handler))
    task.resume()
    try #require(handler.waitForCompletion(), "no completion: \(task.diagnosticSummary)")
    return (handler.current, task)
  }

  extension Optional where Wrapped == any Error {
    /// The URLError code, if the error is one.
    var urlErrorCode: URLError.Code? { (self as? URLError)?.code }
  }
#endif
