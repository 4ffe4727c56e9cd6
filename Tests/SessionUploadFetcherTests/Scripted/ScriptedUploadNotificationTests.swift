import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// The original's upload tests that count notifications and cancellation-handler calls, on the
/// scripted engine: which command fetchers start, how retry delays pair up, and what a stop at each
/// stage calls.
@Suite("Upload notifications and cancellation on the scripted engine")
struct ScriptedUploadNotificationTests {
  @Test("Stopping during a retry wait ends the wait and sends cancel (…LimitedRetryWithCancel)")
  func cancelDuringRetryWait() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    engine.respond(
      to: UploadScript.uploadPath, with: UploadScript.error(503), UploadScript.status("cancelled"))
    let file = try temporaryFile(bigData)
    defer { try? FileManager.default.removeItem(at: file) }
    let fetcher = UploadScript.upload(engine)
    fetcher.uploadFileURL = file
    fetcher.isRetryEnabled = true
    // Long enough that only the stop ends it.
    fetcher.minRetryInterval = 300
    fetcher.maxRetryInterval = 1000
    let counter = UploadNotificationCounter(fetcher)
    let cancelled = Recorder<Bool>()
    fetcher.cancellationHandler = { cancelFetcher, _, error in
      cancelled.append(cancelFetcher?.parentUploadFetcher != nil && error == nil)
    }
    let completions = Recorder<Bool>()
    fetcher.beginFetch { _, _ in completions.append(true) }
    #expect(await eventually { counter.retryDelayStarted == 1 })
    // Posted on its own way to the observers: not ordered with the retry delay's.
    #expect(await eventually { counter.backoffStarted == 1 })
    #expect(fetcher.isFetching)
    #expect(fetcher.activeFetcher != nil)
    fetcher.stopFetching()
    #expect(await eventually { cancelled.values == [true] })
    #expect(counter.retryDelayStopped == 1)
    #expect(engine.uploadCommands.map(\.command) == ["upload", "cancel"])
    #expect(engine.requests(matching: UploadScript.uploadPath).first?.body == bigData.prefix(75_000))
    #expect(await eventually { counter.stopped == 3 })
    #expect(counter.started == 3)
    #expect(counter.startedCommands == ["start", "upload", "cancel"])
    #expect(fetcher.retryCount == 0)
    #expect(!fetcher.isFetching)
    #expect(counter.locationObtained == 1)
    await drain(fetcher.callbackQueue)
    #expect(completions.count == 0, "no completion without stopFetchingTriggersCompletionHandler")
  }

  @Test("Retry-delay notifications of an upload that retries: one delay, balanced, then success")
  func retryNotifications() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    engine.respond(
      to: UploadScript.uploadPath,
      with: UploadScript.active(75_000), UploadScript.error(503), UploadScript.active(75_000),
      UploadScript.active(150_000), UploadScript.final(bigLength))
    let fetcher = UploadScript.upload(engine)
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let counter = UploadNotificationCounter(fetcher)
    let (_, error) = await run(fetcher, counter: counter)
    #expect(error == nil)
    #expect(counter.retryDelayStarted == 1)
    #expect(counter.retryDelayStopped == 1)
    #expect(counter.backoffStarted == 1)
    #expect(await eventually { counter.stopped == 6 })
    #expect(counter.started == 6)
    #expect(counter.startedCommands == ["start", "upload", "upload", "query", "upload", "upload, finalize"])
  }

  @Test(
    "A file upload that retries a 503: query, resume, whole file (testBigFileURLSingleChunkedUploadFetchRetry)",
    arguments: [bigChunkSize, SessionUploadFetcher.standardChunkSize])
  func fileUploadRetry(chunkSize: Int64) async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    let inChunks = chunkSize == bigChunkSize
    // The first chunk is answered 503; the query says nothing is held.
    let after: [ScriptedExchange] =
      inChunks
      ? [UploadScript.active(75_000), UploadScript.active(150_000), UploadScript.final(bigLength)]
      : [UploadScript.final(bigLength)]
    for answer in [UploadScript.error(503), UploadScript.active(0)] + after {
      engine.respond(to: UploadScript.uploadPath, with: answer)
    }
    let file = try temporaryFile(bigData)
    defer { try? FileManager.default.removeItem(at: file) }
    let fetcher = SessionUploadFetcher(
      request: URLRequest(url: engine.url(UploadScript.startPath)),
      uploadMIMEType: "application/octet-stream",
      chunkSize: chunkSize, fetcherService: UploadScript.service(engine))
    fetcher.callbackQueue = DispatchQueue(label: "upload test callbacks")
    fetcher.uploadFileURL = file
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let counter = UploadNotificationCounter(fetcher)
    let (data, error) = await run(fetcher, counter: counter)
    #expect(error == nil)
    #expect(fetcher.statusCode == 200)
    #expect(data == Data("done".utf8))
    #expect(fetcher.retryCount == 1)
    #expect(counter.retryDelayStarted == 1 && counter.retryDelayStopped == 1 && counter.backoffStarted == 1)
    #expect(counter.locationObtained == 1)
    let expected =
      inChunks
      ? ["start", "upload", "query", "upload", "upload", "upload, finalize"]
      : ["start", "upload, finalize", "query", "upload, finalize"]
    #expect(counter.startedCommands == expected)
    #expect(engine.uploadCommands.map(\.command) == Array(expected.dropFirst()))
    // The last chunk sent ends the file: the whole file went, from the start after the query.
    let sent = engine.requests(matching: UploadScript.uploadPath).filter { !$0.body.isEmpty }.dropFirst()
    #expect(Data(sent.map(\.body).joined()) == bigData)
  }

  @Test(
    "A provider upload stopped at once: cancellation handler with no fetcher, then released; the completion only with the flag (testBigDataProviderChunkedUploadEarlyCancel*)",
    arguments: [false, true])
  func providerUploadEarlyCancel(withCallback: Bool) async throws {
    let engine = ScriptedEngine()
    // The start is answered only after the stop: the upload's decisions run on its own queue, and
    // an answer given at once could take the upload to its end while this thread is preempted
    // between the begin and the stop (then the stop rightly finds nothing to stop).
    let answerStart = ScriptedGate()
    engine.respond(
      to: UploadScript.startPath,
      with: ScriptedExchange([.wait(answerStart)] + UploadScript.start.steps))
    let fetcher = UploadScript.upload(engine)
    fetcher.setUploadDataLength(Int64(bigLength)) { offset, length, respond in
      respond(bigData.subdata(in: Int(offset)..<Int(offset + length)), nil)
    }
    fetcher.stopFetchingTriggersCompletionHandler = withCallback
    let handled = Recorder<Bool>()
    fetcher.cancellationHandler = { cancelFetcher, _, _ in handled.append(cancelFetcher == nil) }
    let counter = UploadNotificationCounter(fetcher)
    let results = Recorder<SessionFetcherError?>()
    fetcher.beginFetch { _, error in results.append(error as? SessionFetcherError) }
    fetcher.stopFetching()
    // A stop that was missed would let the start's answer go on to a chunk.
    answerStart.open()
    #expect(await eventually { handled.values == [true] })
    // A start that went out was cancelled; once its end has run, nothing more can come.
    #expect(await eventually { engine.requests.allSatisfy(\.hasCompleted) })
    await engine.drainEvents()
    await drain(fetcher.callbackQueue)
    #expect(results.values == (withCallback ? [.cancelled] : []))
    #expect(handled.values == [true])
    #expect(fetcher.cancellationHandler == nil)
    #expect(!fetcher.isFetching)
    #expect(engine.requests.map(\.path).allSatisfy { $0 == UploadScript.startPath })
    await expectNotificationsBalanced(counter, for: fetcher)
    #expect(counter.started <= 1)
    #expect(counter.locationObtained == 0)
  }

  @Test(
    "A provider upload that succeeds lets go of its cancellation handler (…SuccessClearsCancellationHandler)")
  func successClearsCancellationHandler() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    engine.respond(
      to: UploadScript.uploadPath,
      with: UploadScript.active(75_000), UploadScript.active(150_000), UploadScript.final(bigLength))
    let fetcher = UploadScript.upload(engine)
    fetcher.setUploadDataLength(Int64(bigLength)) { offset, length, respond in
      respond(bigData.subdata(in: Int(offset)..<Int(offset + length)), nil)
    }
    let handled = Recorder<Bool>()
    fetcher.cancellationHandler = { _, _, _ in handled.append(true) }
    let counter = UploadNotificationCounter(fetcher)
    let (_, error) = await run(fetcher, counter: counter)
    #expect(error == nil)
    #expect(await eventually { fetcher.cancellationHandler == nil })
    // A stop of an ended upload decides at once; a handler it called would be on the queue.
    fetcher.stopFetching()
    await drain(fetcher.callbackQueue)
    #expect(handled.values.isEmpty)
    #expect(engine.uploadCommands.map(\.command) == ["upload", "upload", "upload, finalize"])
    #expect(counter.started == 4 && counter.stopped == 4)
  }
}
