import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Request bodies on the scripted engine: which body each attempt sends, and the bodies that fail
/// before any request. How each engine frames a body on the wire (Content-Length or chunked) is in
/// `BodyTests`.
@Suite("Request bodies (scripted)")
struct ScriptedBodyTests {
  @Test func theStreamProviderIsCalledForEveryAttempt() async {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/upload", with: .response(status: 503), .response(status: 503), .response(body: Data("ok".utf8)))
    let calls = Recorder<Int>()
    let body = Data("retry me".utf8)
    let fetcher = engine.fetcher("/upload")
    fetcher.request?.httpMethod = "PUT"
    fetcher.bodyStreamProvider = {
      calls.append(1)
      return InputStream(data: body)
    }
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.data == Data("ok".utf8), "\(String(describing: result.error))")
    #expect(calls.count == 3)
    #expect(engine.requests.map(\.method) == ["PUT", "PUT", "PUT"])
    #expect(engine.requests.map(\.body) == [body, body, body])
  }

  @Test(arguments: [false, true])
  func aBodyFileIsReadAgainForEveryAttempt(chunked: Bool) async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/upload", with: .response(status: 503), .response(body: Data("ok".utf8)))
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("body.bin")
    try Data("first".utf8).write(to: file)
    let fetcher = engine.fetcher("/upload")
    fetcher.request?.httpMethod = "PUT"
    fetcher.bodyFileURL = file
    fetcher.sendsBodyFileChunked = chunked
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    // The file changes between the attempts: each sends what the file holds when it starts.
    fetcher.retryBlock = { suggested, _, response in
      try? Data("second".utf8).write(to: file)
      response(suggested)
    }
    #expect(await fetcher.fetchResult().data == Data("ok".utf8))
    #expect(engine.requests.map(\.body) == [Data("first".utf8), Data("second".utf8)])
  }

  @Test func aChunkedBodyFileThatDisappearsBeforeARetryFailsCleanly() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/upload", with: .response(status: 503), .response(body: Data("ok".utf8)))
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("body.bin")
    try Data("first attempt".utf8).write(to: file)
    let fetcher = engine.fetcher("/upload")
    fetcher.request?.httpMethod = "PUT"
    fetcher.bodyFileURL = file
    fetcher.sendsBodyFileChunked = true
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    // Deletes the file when the 503 is judged; the suggestion stands (retry the 503, not the
    // missing file that follows).
    fetcher.retryBlock = { suggested, _, response in
      try? FileManager.default.removeItem(at: file)
      response(suggested)
    }
    let result = await fetcher.fetchResult()
    guard case .bodyUnavailable? = result.fetcherError else {
      Issue.record("expected bodyUnavailable, got \(String(describing: result.error))")
      return
    }
    #expect(engine.requests.count == 1)
  }

  /// A body that cannot be sent fails the fetch before any request.
  enum Unsendable: String, CaseIterable, Sendable {
    case missingFile, throwingProvider, twoBodies
  }

  @Test(arguments: Unsendable.allCases)
  func anUnsendableBodyFailsBeforeAnyRequest(_ kind: Unsendable) async {
    struct Broken: Error {}
    let engine = ScriptedEngine()
    engine.respond(to: "/upload", with: .response(body: Data("ok".utf8)))
    let fetcher = engine.fetcher("/upload")
    switch kind {
    case .missingFile: fetcher.bodyFileURL = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)")
    case .throwingProvider: fetcher.bodyStreamProvider = { throw Broken() }
    case .twoBodies:
      fetcher.bodyData = Data("a".utf8)
      fetcher.bodyStreamProvider = { InputStream(data: Data()) }
    }
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    switch (kind, result.fetcherError) {
    case (.missingFile, .bodyUnavailable?), (.throwingProvider, .bodyUnavailable?),
      (.twoBodies, .invalidConfiguration?):
      break
    default:
      Issue.record("\(kind): got \(String(describing: result.error))")
    }
    await engine.drainEvents()
    #expect(engine.requests.isEmpty)
    #expect(counter.started == counter.stopped)
    if kind == .missingFile { #expect(counter.started == 0) }
  }
}
