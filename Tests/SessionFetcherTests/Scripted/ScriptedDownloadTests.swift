import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Downloads to a file on the scripted engine: what is left on disk when a fetch fails, is
/// stopped, is retried or cannot begin. A large body written from a real connection is in
/// `DownloadTests`.
@Suite("Downloads to a file (scripted)")
struct ScriptedDownloadTests {
  static let body = Data((0..<4000).map { UInt8($0 % 251) })
  static let part = body.prefix(1000)

  /// How a download fails.
  enum Failure: String, CaseIterable, Sendable {
    case status404, truncated, reset

    var exchange: ScriptedExchange {
      switch self {
      case .status404: .response(status: 404, body: Data("no such file".utf8))
      case .truncated:
        ScriptedExchange([
          .head(status: 200, headers: ["Content-Length": "4000"]), .body(part),
          .fail(URLError(.networkConnectionLost)),
        ])
      case .reset:
        ScriptedExchange([.head(status: 200), .body(part), .fail(URLError(.networkConnectionLost))])
      }
    }
  }

  @Test(arguments: Failure.allCases)
  func aFailedDownloadLeavesNothing(_ failure: Failure) async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/file", with: failure.exchange)
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let fetcher = engine.fetcher("/file")
    fetcher.destinationFileURL = folder.appendingPathComponent("file.bin")
    let result = await fetcher.fetchResult()
    #expect(result.error != nil)
    #expect(DownloadTests.contents(folder).isEmpty)
    if failure == .status404 {
      // The error body is kept for the error, not written to the file.
      #expect(result.fetcherError == .status(code: 404, data: Data("no such file".utf8)))
    }
  }

  @Test func aStoppedDownloadLeavesNothing() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/file", with: ScriptedExchange([.head(status: 200), .body(Self.part), .stall]))
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let fetcher = engine.fetcher("/file")
    fetcher.destinationFileURL = folder.appendingPathComponent("file.bin")
    let written = Recorder<Int64>()
    fetcher.downloadProgressBlock = { _, total, _ in written.append(total) }
    fetcher.beginFetch { _, _ in Issue.record("a stopped fetch runs no completion") }
    #expect(await eventually { written.values.last == 1000 })
    // The part file exists while downloading.
    #expect(!DownloadTests.contents(folder).isEmpty)
    fetcher.stopFetching()
    #expect(await eventually { DownloadTests.contents(folder).isEmpty })
    // Whatever the exchange still had queued has been handed over, and wrote nothing back.
    #expect(await eventually { engine.requests.first?.hasCompleted == true })
    await engine.drainEvents()
    await drain(fetcher.callbackQueue)
    #expect(DownloadTests.contents(folder).isEmpty)
    #expect(engine.requests.first?.wasCancelled == true)
  }

  @Test func anUncreatableFolderFailsBeforeAnyRequest() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/file", with: .response(body: Self.body))
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let blocker = folder.appendingPathComponent("not-a-folder")
    try Data("x".utf8).write(to: blocker)
    let fetcher = engine.fetcher("/file")
    fetcher.destinationFileURL = blocker.appendingPathComponent("file.bin")
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    guard case .downloadFailed? = result.fetcherError else {
      Issue.record("expected downloadFailed, got \(String(describing: result.error))")
      return
    }
    #expect(engine.requests.isEmpty)
    #expect(counter.started == 0)
    #expect(DownloadTests.contents(folder) == ["not-a-folder"])
  }

  @Test func aRetriedDownloadRestartsTheFile() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/file", with: Failure.truncated.exchange, .response(body: Self.body))
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("file.bin")
    let fetcher = engine.fetcher("/file")
    fetcher.destinationFileURL = destination
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(fetcher.retryCount == 1)
    // The first attempt's part is not in front of the second's body.
    #expect(try Data(contentsOf: destination) == Self.body)
    #expect(DownloadTests.contents(folder) == ["file.bin"])
  }

  @Test func anExistingDestinationIsReplaced() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/file", with: .response(body: Self.body))
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("file.bin")
    try Data("old contents that are longer than nothing".utf8).write(to: destination)
    let fetcher = engine.fetcher("/file")
    fetcher.destinationFileURL = destination
    #expect(await fetcher.fetchResult().error == nil)
    #expect(try Data(contentsOf: destination) == Self.body)
    #expect(DownloadTests.contents(folder) == ["file.bin"])
  }
}
