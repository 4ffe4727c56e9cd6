import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// What the upload does with the server's answers, on the scripted engine: when it queries, where
/// it resumes after a query, and which answers end it with which error.
@Suite("Upload queries and errors on the scripted engine")
struct ScriptedUploadQueryTests {
  @Test("A chunk refused with 4xx queries; a final answer completes the upload")
  func queryFinal() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    engine.respond(to: UploadScript.uploadPath, with: UploadScript.error(400), UploadScript.final(bigLength))
    let fetcher = UploadScript.upload(engine)
    let (data, error) = await run(fetcher)
    #expect(error == nil)
    #expect(data == Data("done".utf8))
    #expect(engine.uploadCommands.map(\.command) == ["upload", "query"])
    // Final: the server holds the whole upload, though only a query said so.
    #expect(fetcher.uploadedLength == Int64(bigLength))
  }

  @Test("A query answering a size resumes there: finalize at 199000")
  func queryWithOffset() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    engine.respond(
      to: UploadScript.uploadPath,
      with: UploadScript.error(400), UploadScript.active(bigLength), UploadScript.final(bigLength))
    let (_, error) = await run(UploadScript.upload(engine))
    #expect(error == nil)
    #expect(
      engine.uploadCommands == [
        RecordedCommand(command: "upload", offset: 0, length: 75_000),
        RecordedCommand(command: "query", offset: nil, length: 0),
        RecordedCommand(command: "finalize", offset: 199_000, length: 0),
      ])
  }

  @Test("A chunk refused with 404 fails without a query")
  func chunk404() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    engine.respond(to: UploadScript.uploadPath, with: UploadScript.error(404))
    let (data, error) = await run(UploadScript.upload(engine))
    #expect(statusCode(error) == 404)
    #expect(data == Data("error 404".utf8))
    #expect(engine.uploadCommands.map(\.command) == ["upload"])
  }

  /// The start's own answer: an error is the upload's error; a success without the protocol's
  /// headers is status 501.
  @Test(
    "What the start answers ends the upload",
    arguments: [(UploadScript.error(502), 502), (.response(body: Data("hello".utf8)), 501)]
      as [(ScriptedExchange, Int)])
  func startAnswers(answer: ScriptedExchange, status: Int) async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: answer)
    let (_, error) = await run(UploadScript.upload(engine))
    #expect(statusCode(error) == status)
    #expect(engine.requests.map(\.path) == [UploadScript.startPath])
    #expect(engine.requests.first?.header("X-Goog-Upload-Command") == "start")
  }

  /// After a refused chunk, the query's answer: an error is the upload's error, `cancelled` is
  /// status 501.
  @Test(
    "What a query answers ends the upload",
    arguments: [(UploadScript.error(502), 502), (UploadScript.status("cancelled"), 501)]
      as [(ScriptedExchange, Int)])
  func queryAnswers(answer: ScriptedExchange, status: Int) async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    engine.respond(to: UploadScript.uploadPath, with: UploadScript.error(400), answer)
    let (_, error) = await run(UploadScript.upload(engine))
    #expect(statusCode(error) == status)
    #expect(engine.uploadCommands.map(\.command) == ["upload", "query"])
  }

  @Test("A server that keeps refusing chunks with 4xx: three queries, then the chunk's error")
  func endlessRefusal() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: UploadScript.startPath, with: UploadScript.start)
    let refusal = UploadScript.error(400)
    let nothingHeld = UploadScript.active(0)
    engine.respond(
      to: UploadScript.uploadPath,
      with: refusal, nothingHeld, refusal, nothingHeld, refusal, nothingHeld, refusal, nothingHeld)
    let (_, error) = await run(UploadScript.upload(engine))
    #expect(statusCode(error) == 400)
    let expected = ["upload", "query", "upload", "query", "upload", "query", "upload"]
    #expect(engine.uploadCommands.map(\.command) == expected)
    // Each query said nothing is held: every chunk sent again from the start.
    #expect(engine.uploadCommands.filter { $0.command == "upload" }.allSatisfy { $0.offset == 0 })
  }
}
