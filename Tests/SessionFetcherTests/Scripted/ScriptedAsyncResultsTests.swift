import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `download` and `progressUpdates` on the scripted engine: which file a download names, what a
/// failed one leaves, and which progress values a stream gives and when. A body and a file from a
/// real connection are in `AsyncResultsTests`.
@Suite("async results (scripted)")
struct ScriptedAsyncResultsTests {
  static let body = Data((0..<30_000).map { UInt8($0 % 251) })
  static let thirds = stride(from: 0, to: body.count, by: 10_000).map { body[$0..<$0 + 10_000] }

  @Test func downloadUsesTheDestinationFileURLWhenGivenNone() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/file", with: .response(body: Data("ten bytes!".utf8)))
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let fetcher = engine.fetcher("/file")
    fetcher.destinationFileURL = folder.appendingPathComponent("ten")
    let file = try await fetcher.download()
    #expect(file == folder.appendingPathComponent("ten"))
    #expect(try Data(contentsOf: file) == Data("ten bytes!".utf8))
  }

  @Test func aFailedDownloadThrowsAndLeavesNoFile() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/missing", with: .response(status: 404, body: Data("no".utf8)))
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    await #expect(throws: SessionFetcherError.status(code: 404, data: Data("no".utf8))) {
      try await engine.fetcher("/missing").download(to: folder.appendingPathComponent("missing"))
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
  }

  @Test func progressUpdatesReachTheWholeBodyInOrderAndFinish() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/items", with: .response(headers: ["Content-Length": "30000"], chunks: Self.thirds))
    let fetcher = engine.fetcher("/items")
    let updates = fetcher.progressUpdates
    let seen = Task {
      var values: [TransferProgress] = []
      for await progress in updates { values.append(progress) }
      return values
    }
    #expect(try await fetcher.beginFetch() == Self.body)
    let values = await seen.value  // Ends: the stream finishes with the fetch.
    #expect(!values.isEmpty)
    #expect(values.allSatisfy { $0.direction == .download && $0.expectedBytes == 30_000 })
    #expect(values.last?.completedBytes == 30_000)
    #expect(zip(values, values.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
  }

  /// Progress comes while the body arrives, not only at the end: the fetcher counts the bytes it
  /// is handed. The exchange waits after its first third until the test has seen it.
  @Test func progressComesWhileTheBodyArrives() async throws {
    let engine = ScriptedEngine()
    let rest = ScriptedGate()
    engine.respond(
      to: "/items",
      with: ScriptedExchange([
        .head(status: 200, headers: ["Content-Length": "30000"]), .body(Self.thirds[0]), .wait(rest),
        .body(Self.thirds[1]), .body(Self.thirds[2]),
      ]))
    let fetcher = engine.fetcher("/items")
    let totals = Recorder<Int64>()
    fetcher.receivedProgressBlock = { _, total in totals.append(total) }
    let fetched = Task { try await fetcher.beginFetch() }
    #expect(await eventually { totals.values == [10_000] })
    rest.open()
    #expect(try await fetched.value == Self.body)
    #expect(totals.values == [10_000, 20_000, 30_000])
  }

  /// Nobody reads the stream while the fetch runs: the fetch is not held up, and the stream kept
  /// only the newest value, then its end.
  @Test func anUnreadProgressStreamKeepsOnlyTheNewestValue() async throws {
    let engine = ScriptedEngine()
    let pieces = (0..<100).map { _ in Data(repeating: 7, count: 1000) }
    engine.respond(to: "/items", with: .response(chunks: pieces))
    let fetcher = engine.fetcher("/items")
    let updates = fetcher.progressUpdates
    #expect(try await fetcher.beginFetch().count == 100_000)
    var values: [TransferProgress] = []
    for await progress in updates { values.append(progress) }
    #expect(values == [TransferProgress(direction: .download, completedBytes: 100_000, expectedBytes: nil)])
  }

  /// The answer has no body (a 204), so no download value can take the last upload value's place.
  @Test func progressUpdatesReportTheUpload() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/upload", with: .response(status: 204))
    let fetcher = engine.fetcher("/upload")
    fetcher.bodyData = Data(count: 200_000)
    let updates = fetcher.progressUpdates
    let seen = Task {
      var values: [TransferProgress] = []
      for await progress in updates { values.append(progress) }
      return values
    }
    _ = try await fetcher.beginFetch()
    let values = await seen.value
    #expect(!values.isEmpty)
    #expect(values.allSatisfy { $0.direction == .upload })
    #expect(
      values.last == TransferProgress(direction: .upload, completedBytes: 200_000, expectedBytes: 200_000))
  }
}
