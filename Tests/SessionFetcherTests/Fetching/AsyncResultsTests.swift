import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// `fetchResponse` and `download` over a real connection. Their errors, a cancelled or stopped
/// fetch, and the values of `progressUpdates` are in `ScriptedAsyncTests` and
/// `ScriptedAsyncResultsTests`.
@Suite("async results: fetchResponse, download, progressUpdates")
struct AsyncResultsTests {
  // MARK: - fetchResponse

  @Test func fetchResponseGivesTheBodyTheResponseAndTheTiming() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let result = try await server.fetcher("/bytes/1234").fetchResponse()
    #expect(result.data == TestServer.patternBytes(count: 1234))
    #expect(result.statusCode == 200)
    #expect(result.response?.statusCode == 200)
    #expect(result.response?.value(forHTTPHeaderField: "ETag") == "\"bytes-1234\"")
    #expect(result.timing.bytesReceived == 1234)
    #expect(result.timing.duration != nil)
  }

  // MARK: - download

  @Test func downloadReturnsTheFileItWrote() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("nested/file.bin")
    let fetcher = server.fetcher("/bytes/70000")
    let file = try await fetcher.download(to: destination)
    #expect(file == destination)
    #expect(fetcher.destinationFileURL == destination)
    #expect(try Data(contentsOf: file) == TestServer.patternBytes(count: 70000))
  }
}
