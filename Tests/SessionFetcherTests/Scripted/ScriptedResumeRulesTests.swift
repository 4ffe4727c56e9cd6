import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// When a download keeps a part file and gives a token, and what a token whose part file is gone
/// or whose range the server refuses does, on the scripted engine. Large downloads stopped and
/// continued over a real connection are in `DownloadResumeTests`.
@Suite("Resumable downloads: the rules (scripted)")
struct ScriptedResumeRulesTests {
  typealias Resume = ScriptedResumeTests

  static let lost = Resume.interrupted(by: .fail(URLError(.networkConnectionLost)))

  /// Runs a resumable download of `/file` that loses its connection after 400 bytes, and returns
  /// its token, its folder (the caller removes it) and its destination.
  static func interruptedDownload(on engine: ScriptedEngine) async throws -> (Data, URL, URL) {
    let (fetcher, folder, destination) = try Resume.download(on: engine)
    fetcher.keepsPartialDownloadForResume = true
    #expect(await fetcher.fetchResult().urlError?.code == .networkConnectionLost)
    return (try #require(fetcher.downloadResumeData), folder, destination)
  }

  static func resuming(_ token: Data, on engine: ScriptedEngine) throws -> SessionFetcher {
    let fetcher = try #require(SessionFetcher(resumeData: token))
    fetcher.callbackQueue = DispatchQueue(label: "test.scripted.resumed")
    fetcher.run(on: engine)
    return fetcher
  }

  @Test func withoutKeepingPartsARunningDownloadHasNoToken() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/file", with: Resume.interrupted(by: .stall))
    let (fetcher, folder, _) = try Resume.download(on: engine)
    defer { try? FileManager.default.removeItem(at: folder) }
    fetcher.beginFetch { _, _ in }
    #expect(await eventually { fetcher.downloadedLength == 400 })
    #expect(fetcher.partFileResumeData == nil)
    fetcher.stopFetching()
    #expect(await eventually { DownloadTests.contents(folder).isEmpty })
  }

  @Test func withoutKeepingPartsAFailedDownloadLeavesNothingAndNoToken() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/file", with: Self.lost)
    let (fetcher, folder, _) = try Resume.download(on: engine)
    defer { try? FileManager.default.removeItem(at: folder) }
    #expect(await fetcher.fetchResult().urlError?.code == .networkConnectionLost)
    #expect(fetcher.downloadResumeData == nil)
    #expect(DownloadTests.contents(folder).isEmpty)
  }

  /// The resource is now shorter than the part kept: the 416 drops the part file, and the whole
  /// resource is asked for again, without a range.
  @Test func a416ToTheResumedRangeDownloadsTheWholeResourceAgain() async throws {
    let engine = ScriptedEngine()
    let shorter = Data(Resume.whole.prefix(300))
    engine.respond(
      to: "/file", with: Self.lost,
      .response(status: 416, headers: ["ETag": "\"v1\"", "Content-Range": "bytes */300"]),
      .response(headers: Resume.validators, body: shorter))
    let (token, folder, destination) = try await Self.interruptedDownload(on: engine)
    defer { try? FileManager.default.removeItem(at: folder) }
    let resumed = try Self.resuming(token, on: engine)
    let result = await resumed.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(resumed.statusCode == 200)
    #expect(try Data(contentsOf: destination) == shorter)
    #expect(engine.requests.map { $0.header("Range") } == [nil, "bytes=400-", nil])
    #expect(DownloadTests.contents(folder) == ["file.bin"])
  }

  @Test func aTokenWhosePartFileIsGoneDownloadsEverythingAgain() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/file", with: Self.lost, .response(headers: Resume.validators, body: Resume.whole))
    let (token, folder, destination) = try await Self.interruptedDownload(on: engine)
    defer { try? FileManager.default.removeItem(at: folder) }
    for name in DownloadTests.contents(folder) {
      try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
    }
    let resumed = try Self.resuming(token, on: engine)
    #expect(await resumed.fetchResult().error == nil)
    #expect(try Data(contentsOf: destination) == Resume.whole)
    #expect(engine.requests.map { $0.header("Range") } == [nil, nil])
    #expect(engine.requests.last?.header("If-Range") == nil)
  }

  @Test func dataThatIsNotATokenMakesNoFetcher() {
    #expect(SessionFetcher(resumeData: Data("not a token".utf8)) == nil)
    #expect(SessionFetcher(resumeData: Data()) == nil)
  }
}
