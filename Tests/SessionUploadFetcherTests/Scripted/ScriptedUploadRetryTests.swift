import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// The upload's retries on the scripted engine: a transient failure of a chunk queries and resumes
/// where the server says, the backoff ends the retries once the next delay reaches the maximum,
/// and a retry block may refuse.
@Suite("Upload retries on the scripted engine")
struct ScriptedUploadRetryTests {
  @Test("A transient chunk failure retries with query and resume")
  func retrySucceeds() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    engine.respond(
      to: UploadScript.uploadPath,
      with: UploadScript.active(75_000), UploadScript.error(503), UploadScript.active(75_000),
      UploadScript.active(150_000), UploadScript.final(bigLength))
    let fetcher = UploadScript.upload(engine)
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(
      engine.uploadCommands == [
        RecordedCommand(command: "upload", offset: 0, length: 75_000),
        RecordedCommand(command: "upload", offset: 75_000, length: 75_000),
        RecordedCommand(command: "query", offset: nil, length: 0),
        RecordedCommand(command: "upload", offset: 75_000, length: 75_000),
        RecordedCommand(command: "upload, finalize", offset: 150_000, length: 49_000),
      ])
    #expect(fetcher.retryCount == 1)
    // What the server would hold: the bytes of each offset's last chunk, in order.
    var held = Data()
    for request in engine.requests(matching: UploadScript.uploadPath) {
      guard let offset = request.header("X-Goog-Upload-Offset").flatMap({ Int($0) }) else { continue }
      held = held.prefix(offset) + request.body
    }
    #expect(held == bigData)
  }

  @Test("Retrying ends with Retry Limit Reached once the next delay reaches the maximum")
  func limitedRetry() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    let unavailable = UploadScript.error(503)
    let nothingHeld = UploadScript.active(0)
    engine.respond(
      to: UploadScript.uploadPath,
      with: unavailable, nothingHeld, unavailable, nothingHeld, unavailable, nothingHeld, unavailable,
      nothingHeld, unavailable, nothingHeld)
    let fetcher = UploadScript.upload(engine)
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    fetcher.maxRetryInterval = 0.1
    let (_, error) = await run(fetcher)
    guard case .retryLimitReached? = error as? SessionUploadFetcherError else {
      Issue.record("expected retryLimitReached, got \(String(describing: error))")
      return
    }
    #expect(String(describing: error!).contains("Retry Limit Reached"))
    // Delays 0.01, 0.02, 0.04, 0.08; the next (0.16) reaches the limit.
    #expect(fetcher.retryCount == 4)
    let expected = ["upload"] + Array(repeating: ["query", "upload"], count: 4).flatMap { $0 }
    #expect(engine.uploadCommands.map(\.command) == expected)
  }

  @Test("A retry block may refuse the retry")
  func retryBlockRefuses() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    engine.respond(to: UploadScript.uploadPath, with: UploadScript.error(503))
    let fetcher = UploadScript.upload(engine)
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let suggestions = Recorder<Bool>()
    fetcher.retryBlock = { suggested, _, respond in
      suggestions.append(suggested)
      respond(false)
    }
    let (_, error) = await run(fetcher)
    #expect(statusCode(error) == 503)
    #expect(suggestions.values == [true])
    #expect(engine.uploadCommands.map(\.command) == ["upload"])
    #expect(fetcher.retryCount == 0)
  }
}
