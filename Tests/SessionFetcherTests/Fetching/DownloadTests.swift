import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("Downloads to a file")
struct DownloadTests {
  /// Every entry of `folder` (hidden part files included).
  static func contents(_ folder: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
  }

  @Test func fetchToFileCreatesFoldersAndWritesAtomically() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("a/b/file.bin")
    let fetcher = server.fetcher("/bytes/2000000")
    fetcher.destinationFileURL = destination
    let progress = Recorder<(Int64, Int64, Int64)>()
    fetcher.downloadProgressBlock = { progress.append(($0, $1, $2)) }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == nil)
    #expect(try Data(contentsOf: destination) == TestServer.patternBytes(count: 2_000_000))
    #expect(Self.contents(destination.deletingLastPathComponent()) == ["file.bin"])
    #expect(progress.values.last?.1 == 2_000_000)
    #expect(progress.values.last?.2 == 2_000_000)
    #expect(fetcher.downloadedLength == 2_000_000)
  }

  @Test func existingDestinationIsReplaced() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("file.bin")
    try Data("old contents".utf8).write(to: destination)
    let fetcher = server.fetcher("/bytes/10")
    fetcher.destinationFileURL = destination
    #expect(await fetcher.fetchResult().error == nil)
    #expect(try Data(contentsOf: destination) == TestServer.patternBytes(count: 10))
  }

  @Test(arguments: ["/status/404", "/truncate?length=100000&send=5000", "/reset?length=100000&send=5000"])
  func failedFetchToFileLeavesNothing(_ path: String) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("file.bin")
    let fetcher = server.fetcher(path)
    fetcher.destinationFileURL = destination
    let result = await fetcher.fetchResult()
    #expect(result.error != nil)
    #expect(Self.contents(folder).isEmpty)
    if path.hasPrefix("/status") {
      // The error body is kept for the error, not written to the file.
      #expect(result.fetcherError?.data?.isEmpty == false)
    }
  }

  @Test func stoppedFetchToFileLeavesNothing() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let fetcher = server.fetcher("/stall?length=1000000&send=100000")
    fetcher.destinationFileURL = folder.appendingPathComponent("file.bin")
    let written = Recorder<Int64>()
    fetcher.downloadProgressBlock = { _, total, _ in written.append(total) }
    fetcher.beginFetch { _, _ in Issue.record("a stopped fetch runs no completion") }
    #expect(await eventually { (written.values.last ?? 0) > 0 })
    #expect(!Self.contents(folder).isEmpty)  // the part file exists while downloading
    fetcher.stopFetching()
    #expect(await eventually { Self.contents(folder).isEmpty })
    try await Task.sleep(nanoseconds: 100_000_000)
    #expect(Self.contents(folder).isEmpty)
  }

  @Test func uncreatableDestinationFolderFailsBeforeTraffic() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let blocker = folder.appendingPathComponent("not-a-folder")
    try Data("x".utf8).write(to: blocker)
    let fetcher = server.fetcher("/bytes/10")
    fetcher.destinationFileURL = blocker.appendingPathComponent("file.bin")
    let counter = NotificationRecorder([fetcher])
    let result = await fetcher.fetchResult()
    guard case .downloadFailed? = result.fetcherError else {
      Issue.record("expected downloadFailed, got \(String(describing: result.error))")
      return
    }
    #expect(server.requests.isEmpty)
    #expect(counter.started == 0)
    #expect(Self.contents(folder) == ["not-a-folder"])
  }

  @Test func retriedDownloadRestartsTheFile() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("file.bin")
    let fetcher = server.fetcher("/fail-first?n=1&key=dl-\(UUID().uuidString)&fault=truncate&bytes=300000")
    fetcher.destinationFileURL = destination
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(fetcher.retryCount == 1)
    #expect(try Data(contentsOf: destination) == TestServer.patternBytes(count: 300_000))
    #expect(Self.contents(folder) == ["file.bin"])
  }
}
