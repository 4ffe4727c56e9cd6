import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Downloads to a file from a real connection. What a failed, stopped, retried or impossible
/// download leaves on disk is in `ScriptedDownloadTests`.
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

}
