import Foundation

// The response head of the exchange in flight: what the fetcher decides about it, under its lock,
// and the one step that follows.
extension SessionFetcher {
  /// The response head of the current task (or a test block's). Reads the head, not its
  /// `URLResponse`, for the fetcher's own decisions: that is made only for those who ask for it (a
  /// stream consumer, a monitor, `didReceiveResponseBlock`, a download's part file, a redirect).
  func receive(head: ResponseHead, from task: (any EngineTask)?) {
    let statusCode = head.statusCode
    // FoundationNetworking hands interim 1xx responses (a fake 100 for streamed uploads) to the
    // delegate; a 101 is looked at below (switching protocols is never asked for).
    if let statusCode, statusCode < 200, statusCode != 101 { return }
    let decision: ReceivedHeadAction? = storage.withLock { storage in
      guard accepts(task, storage), let plan = storage.plan else { return nil }
      var decision = ReceivedHeadAction()
      let now = plan.clock.now
      let run = storage.run
      storage.lifecycle.current.lastActivity = now
      if let statusCode,
        let error = ResponseSanity.error(status: statusCode, request: storage.lifecycle.current.request)
      {
        storage.lifecycle.current.responseHead = head
        decision.next = .fail(fail(&storage, with: error))
        return decision
      }
      if let statusCode, statusCode < 200 { return nil }
      if run.stream.isContinuation, !StreamWindows.downloadRestarts(head.response, storage: &storage) {
        let response = head.response
        // A paused stream (or the next window of a download) goes on from the head it has.
        run.stream.isContinuation = false
        storage.lifecycle.current.response = run.stream.head ?? response
        storage.lifecycle.current.responseBodyLength = run.stream.deliveredBytes
        storage.lifecycle.current.expectedContentLength = run.stream.head?.expectedContentLength ?? -1
        storage.lifecycle.current.sink = run.stream.isDownload ? .file : .stream
        if let error = StreamPausing.continuationError(response, offset: run.stream.deliveredBytes)
          ?? StreamWindows.continuationError(response, storage: storage)
        {
          decision.next = .fail(fail(&storage, with: error))
        }
        decision.cookies = (plan.cookieStorage, response.url ?? storage.lifecycle.current.request?.url)
        return decision
      }
      // The first Range window of a stream: the fetcher and the consumer see the whole resource.
      var wholeResource: URLResponse?
      let window: StreamWindows.FirstResponse =
        run.stream.windowLength == nil
        ? .asIs : StreamWindows.firstResponse(head.response, storage: &storage)
      switch window {
      case .asIs:
        break
      case .whole(let head):
        wholeResource = head
      case .refetch:
        let hop = storage.lifecycle.current.hopRequest
        let task = storage.lifecycle.cancelTask(.pausedForBackpressure).task
        if let hop { decision.next = .refetch(task: task, hop: hop) }
        decision.cookies = (plan.cookieStorage, head.url ?? storage.lifecycle.current.request?.url)
        return decision
      }
      let head = wholeResource.map(ResponseHead.init) ?? head
      if run.timing.firstResponseDate == nil { run.timing.firstResponseDate = now }
      if storage.lifecycle.current.measure.responseDate == nil {
        storage.lifecycle.current.measure.responseDate = now
      }
      storage.lifecycle.current.responseHead = head
      storage.lifecycle.current.responseData = Data()
      storage.lifecycle.current.responseBodyLength = 0
      // The Content-Length of an encoded body is not the length of the decoded bytes counted here.
      let isEncoded = ContentDecoding.isEncoded(head)
      let expectedContentLength = head.expectedContentLength
      storage.lifecycle.current.expectedContentLength = isEncoded ? -1 : expectedContentLength
      var input = HeadDecision.Input(status: head.statusCode)
      input.hasRedirectTarget = storage.lifecycle.current.redirectTarget != nil
      input.isStreaming = run.stream.isStreaming
      input.accumulates = plan.accumulates
      input.hasDestination = plan.destination != nil
      input.maximumInMemoryBodyLength = plan.maximumInMemoryBodyLength
      input.isEncoded = isEncoded
      input.expectedContentLength = expectedContentLength
      input.method = storage.lifecycle.current.request?.httpMethod?.uppercased() ?? "GET"
      let responseBlock = storage.config.didReceiveResponseBlock
      input.hasResponseBlock = responseBlock != nil
      input.isAnsweredChallenge =
        head.statusCode == 401 && plan.testBlock == nil
        && head.httpResponse.flatMap(ServerChallenge.init(response:)) != nil
      let action = HeadDecision.decide(input)
      storage.lifecycle.current.sink = action.sink
      var sinkError: Error? = action.tooLarge.map { SessionFetcherError.responseTooLarge(limit: $0) }
      var streamConsumer: (any FetcherStreamConsumer)?
      switch action.sink {
      case .stream:
        run.stream.head = head.response
        streamConsumer = run.stream.consumer?.consumer
      case .accumulate:
        if run.accumulatedSinceResponse, let block = storage.config.accumulateDataBlock {
          decision.restartAccumulation = (plan.callbackQueue, block)
        }
        run.accumulatedSinceResponse = false
      case .file:
        guard let destination = plan.destination else { break }
        let choice = DownloadResume.choosePartFile(
          for: head.response, destination: destination, storage: &storage)
        decision.partFile = choice
        if let failure = choice.failure {
          sinkError = SessionFetcherError.downloadFailed(description: String(describing: failure))
        } else if wholeResource != nil {
          // The first of the download's windows: later ones continue from this head.
          run.stream.head = head.response
          if run.downloadResume.validator == nil, let validator = run.stream.validator {
            run.downloadResume.validator = DownloadValidator(ifRange: validator)
          }
        }
      case .memory, .redirect:
        break
      }
      if let sinkError {
        decision.next = .fail(fail(&storage, with: sinkError))
      } else if action.asksResponseBlock, let block = responseBlock {
        // The final head (a 401 with a challenge waits for `answerChallenge`): its body waits for
        // the block's decision.
        var held = ResponseGate(hop: run.hopCount)
        held.streamConsumer = streamConsumer
        storage.lifecycle.current.responseGate = held
        decision.next = .askAboutResponse(hop: run.hopCount, block: block, head: head.response)
      } else if let streamConsumer {
        // The head as the fetch sees it: a stream's first Range window describes the whole resource.
        decision.next = .deliverToStream(streamConsumer, head: head.response)
      }
      decision.cookies = (plan.cookieStorage, head.url ?? storage.lifecycle.current.request?.url)
      return decision
    }
    guard let decision else { return }
    // Most responses set no cookie: the head answers that without making the response.
    if head.statusCode != nil, let cookieStorage = decision.cookies.storage, let url = decision.cookies.url,
      head.value(forHTTPHeaderField: "Set-Cookie") != nil,
      let http = head.httpResponse
    {
      cookieStorage.handleResponse(http, for: url)
    }
    if let (queue, block) = decision.restartAccumulation {
      deliver(on: queue) { block(nil) }
    }
    let monitors = allMonitors()
    if !monitors.isEmpty {
      let response = head.response
      for monitor in monitors { monitor.fetcher(self, didReceiveResponse: response) }
    }
    if let choice = decision.partFile, !preparePartFile(choice, from: task) { return }
    switch decision.next {
    case .nothing:
      break
    case .refetch(let task, let hop):
      // The server's answer to the first Range window cannot be streamed in windows: ask again whole.
      Self.letGo(task)
      sendHop(hop, body: .none)
    case .fail(let failure):
      endAttempt(failure)
    case .askAboutResponse(let hop, let block, let response):
      askAboutResponse(response, hop: hop, block: block)
    case .deliverToStream(let consumer, let response):
      consumer.fetcher(self, didReceiveStreamResponse: response)
    }
  }

  /// What ``receive(head:from:)`` decided under the lock, for after it.
  private struct ReceivedHeadAction {
    /// The jar and the URL the head's cookies are for (no jar: none kept).
    var cookies: (storage: SessionCookieStorage?, url: URL?) = (nil, nil)
    /// The accumulate block is told to start over (a new 2xx after bytes it was given).
    var restartAccumulation: (DispatchQueue, @Sendable (Data?) -> Void)?
    /// The part file to create, open or empty (see `PartFileAction`).
    var partFile: PartFileAction?
    var next = Next.nothing

    /// The one step that follows.
    enum Next {
      case nothing
      /// The first Range window's answer cannot be streamed in windows: let go of the task and
      /// send the hop again whole.
      case refetch(task: (any EngineTask)?, hop: URLRequest)
      /// The fetcher failed the exchange (see `fail`).
      case fail(EndAttemptAction)
      /// The head waits for ``SessionFetcher/didReceiveResponseBlock``.
      case askAboutResponse(hop: UInt64, block: DidReceiveResponseBlock, head: URLResponse)
      /// Hand the head to the stream consumer.
      case deliverToStream(any FetcherStreamConsumer, head: URLResponse)
    }
  }
}
