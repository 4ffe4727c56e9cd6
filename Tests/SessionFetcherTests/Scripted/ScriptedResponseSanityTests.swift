import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A 206 to a request that asked for no range is not a response to use, on the scripted engine:
/// the fetch fails with `URLError(.badServerResponse)`, and no file or token is left. A stray 101
/// as a real engine reads it from the wire is in `ResponseSanityTests`.
@Suite("Response sanity (scripted)")
struct ScriptedResponseSanityTests {
  static let half = Data((0..<500).map { UInt8($0 % 251) })
  static let partial = ScriptedExchange.response(
    status: 206,
    headers: ["Content-Range": "bytes 0-499/1000", "Accept-Ranges": "bytes", "ETag": "\"v1\""], body: half)

  @Test func a206ToADownloadThatAskedForNoRangeFailsAndLeavesNoFile() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/partial", with: Self.partial)
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let fetcher = engine.fetcher("/partial")
    fetcher.keepsPartialDownloadForResume = true
    fetcher.destinationFileURL = folder.appendingPathComponent("file.bin")
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .badServerResponse, "\(String(describing: result.error))")
    #expect(engine.requests.map { $0.header("Range") } == [nil])
    #expect(DownloadTests.contents(folder).isEmpty)
    #expect(fetcher.downloadResumeData == nil)
  }

  @Test func a206ToAFetchIntoMemoryThatAskedForNoRangeFails() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/partial", with: Self.partial)
    let fetcher = engine.fetcher("/partial")
    let result = await fetcher.fetchResult()
    #expect(result.urlError?.code == .badServerResponse, "\(String(describing: result.error))")
    #expect(fetcher.statusCode == 206)
    #expect(result.data == nil)
  }

  @Test func a206ToARequestWithItsOwnRangeIsTheAnswerAskedFor() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/partial", with: Self.partial)
    let fetcher = engine.fetcher("/partial")
    fetcher.setRequestValue("bytes=0-499", forHTTPHeaderField: "Range")
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data == Self.half)
    #expect(engine.requests.first?.header("Range") == "bytes=0-499")
  }
}
