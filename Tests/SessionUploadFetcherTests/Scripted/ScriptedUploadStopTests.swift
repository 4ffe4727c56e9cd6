import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// Pausing and stopping an upload on the scripted engine: what it sends after a resume and after a
/// stop, and that nothing follows once it ended (read from the engine's records, drained, instead
/// of waiting a while).
@Suite("Upload pause and stop on the scripted engine")
struct ScriptedUploadStopTests {
  @Test("Pause and resume: upload, query, upload, upload-finalize")
  func pauseAndResume() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    engine.respond(
      to: UploadScript.uploadPath,
      with: UploadScript.active(75_000), UploadScript.active(75_000), UploadScript.active(150_000),
      UploadScript.final(bigLength))
    let fetcher = UploadScript.upload(engine)
    let paused = Recorder<Bool>()
    fetcher.willBeginCommandFetcher = { [weak fetcher] commandFetcher in
      // Pause just before the second chunk goes out.
      if isChunk(commandFetcher, at: 75_000), paused.values.isEmpty {
        paused.append(true)
        fetcher?.pauseFetching()
      }
    }
    async let result = run(fetcher)
    #expect(await eventually { paused.values.count == 1 })
    #expect(fetcher.isPaused)
    #expect(fetcher.isFetching)
    await engine.drainEvents()
    #expect(engine.uploadCommands.count == 1)
    fetcher.resumeFetching()
    let (_, error) = await result
    #expect(error == nil)
    // The resume asks the server where it stands before it sends on.
    #expect(
      engine.uploadCommands == [
        RecordedCommand(command: "upload", offset: 0, length: 75_000),
        RecordedCommand(command: "query", offset: nil, length: 0),
        RecordedCommand(command: "upload", offset: 75_000, length: 75_000),
        RecordedCommand(command: "upload, finalize", offset: 150_000, length: 49_000),
      ])
    #expect(engine.requests(matching: UploadScript.uploadPath).last?.body == bigData.suffix(49_000))
  }

  @Test("Stopping sends cancel to the upload URL and calls the cancellation handler")
  func cancelSendsCancel() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    engine.respond(
      to: UploadScript.uploadPath, with: UploadScript.active(75_000), UploadScript.status("cancelled"))
    let fetcher = UploadScript.upload(engine)
    fetcher.stopFetchingTriggersCompletionHandler = true
    fetcher.willBeginCommandFetcher = { [weak fetcher] commandFetcher in
      if isChunk(commandFetcher, at: 75_000) { fetcher?.stopFetching() }
    }
    let cancelResults = Recorder<(Bool, Bool)>()
    fetcher.cancellationHandler = { cancelFetcher, _, error in
      cancelResults.append((cancelFetcher != nil, error == nil))
    }
    let (_, error) = await run(fetcher)
    #expect(error as? SessionFetcherError == .cancelled)
    #expect(await eventually { cancelResults.values.count == 1 })
    #expect(cancelResults.values.first?.0 == true)
    #expect(cancelResults.values.first?.1 == true)
    #expect(engine.uploadCommands.map(\.command) == ["upload", "cancel"])
    #expect(engine.requests(matching: UploadScript.uploadPath).last?.method == "PUT")
    #expect(!fetcher.isFetching)
  }

  @Test("Stopping before the upload URL is known sends no cancel and no completion")
  func stopBeforeLocation() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: .stall)
    let fetcher = UploadScript.upload(engine)
    let handled = Recorder<Bool>()
    fetcher.cancellationHandler = { cancelFetcher, _, _ in handled.append(cancelFetcher == nil) }
    let counter = UploadNotificationCounter(fetcher)
    let completions = Recorder<Bool>()
    fetcher.beginFetch { _, _ in completions.append(true) }
    // The start was sent (the server never answers it).
    #expect(await eventually { engine.requests.count == 1 })
    fetcher.stopFetching()
    #expect(await eventually { handled.values == [true] })
    // The start's exchange was cancelled and has ended; whatever it set off has run.
    #expect(await eventually { engine.requests.first?.hasCompleted == true })
    #expect(engine.requests.first?.wasCancelled == true)
    await engine.drainEvents()
    await drain(fetcher.callbackQueue)
    #expect(engine.requests.count == 1)
    #expect(completions.count == 0)
    await expectNotificationsBalanced(counter, for: fetcher)
    #expect(counter.startedCommands == ["start"])
    #expect(counter.locationObtained == 0)
  }
}
