import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// GTM's `resumeDataBlock`: a download to a file stopped part-way hands its resume token to the
/// block, which continues the download elsewhere; a download into memory has none to give.
@Suite("resumeDataBlock (scripted)")
struct ScriptedResumeDataBlockTests {
  @Test func aStoppedDownloadGivesItsTokenToTheBlock() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/file", with: ScriptedResumeTests.interrupted(by: .stall), ScriptedResumeTests.rest)
    let (fetcher, folder, destination) = try ScriptedResumeTests.download(on: engine)
    defer { try? FileManager.default.removeItem(at: folder) }
    let tokens = Recorder<Data>()
    fetcher.resumeDataBlock = { token in tokens.append(token) }
    #expect(fetcher.keepsPartialDownloadForResume)
    await Self.stopPartWay(fetcher)
    #expect(await eventually { tokens.count == 1 })
    #expect(tokens.values.first == fetcher.downloadResumeData)

    try await Self.expectTokenFinishesTheFile(try #require(tokens.values.first), on: engine, at: destination)
    // Asked once: the stop is the only end.
    #expect(tokens.count == 1)
  }

  /// A fetcher made from a token and stopped before it began hands the token on, as one stopped
  /// part-way does: its part file stays, and a fetcher made from what it handed out continues it.
  @Test func aTokenStoppedBeforeBeginIsHandedOn() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/file", with: ScriptedResumeTests.interrupted(by: .stall), ScriptedResumeTests.rest)
    let (fetcher, folder, destination) = try ScriptedResumeTests.download(on: engine)
    defer { try? FileManager.default.removeItem(at: folder) }
    fetcher.keepsPartialDownloadForResume = true
    await Self.stopPartWay(fetcher)
    #expect(await eventually { fetcher.downloadResumeData != nil })
    let token = try #require(fetcher.downloadResumeData)

    let unbegun = try #require(SessionFetcher(resumeData: token))
    let tokens = Recorder<Data>()
    unbegun.resumeDataBlock = { token in tokens.append(token) }
    unbegun.stopFetching()
    #expect(await eventually { tokens.count == 1 })
    let handed = try #require(unbegun.downloadResumeData)
    #expect(tokens.values.first == handed)
    try await Self.expectTokenFinishesTheFile(handed, on: engine, at: destination)
  }

  /// Begins `fetcher`'s download and stops it once the first 400 bytes are written.
  private static func stopPartWay(_ fetcher: SessionFetcher) async {
    let written = Recorder<Int64>()
    fetcher.receivedProgressBlock = { _, total in written.append(total) }
    fetcher.beginFetch { _, _ in Issue.record("no completion after a stop without the flag") }
    #expect(await eventually { written.values.last == 400 })
    fetcher.stopFetching()
  }

  /// A fetcher made from `token` asks for the rest and finishes the file at `destination`.
  private static func expectTokenFinishesTheFile(
    _ token: Data, on engine: ScriptedEngine, at destination: URL
  ) async throws {
    let resumed = try #require(SessionFetcher(resumeData: token))
    resumed.callbackQueue = DispatchQueue(label: "test.scripted.resume.block")
    resumed.run(on: engine)
    let result = await resumed.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(try Data(contentsOf: destination) == ScriptedResumeTests.whole)
    #expect(engine.requests.last?.header("Range") == "bytes=400-")
  }

  @Test func aDownloadIntoMemoryHasNoTokenToGive() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/memory", with: ScriptedResumeTests.interrupted(by: .stall))
    let fetcher = engine.fetcher("/memory")
    let tokens = Recorder<Data>()
    fetcher.resumeDataBlock = { token in tokens.append(token) }
    fetcher.stopFetchingTriggersCompletionHandler = true
    let written = Recorder<Int64>()
    fetcher.receivedProgressBlock = { _, total in written.append(total) }
    let ended = Recorder<Bool>()
    fetcher.beginFetch { _, _ in ended.append(true) }
    #expect(await eventually { written.values.last == 400 })
    fetcher.stopFetching()
    #expect(await eventually { ended.count == 1 })
    // The completion ran on the callback queue after anything queued before it.
    #expect(tokens.count == 0)
    #expect(fetcher.downloadResumeData == nil)
  }
}
