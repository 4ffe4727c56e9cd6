import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Resumable downloads on the scripted engine: a download interrupted mid-body keeps its part file
/// and is continued with `Range` and `If-Range`, by a resume token or by the fetcher's own retry.
@Suite("Resumable downloads (scripted)")
struct ScriptedResumeTests {
  static let whole = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
  static let validators = ["ETag": "\"v1\"", "Accept-Ranges": "bytes"]

  /// The first 400 bytes of ``whole`` then `ending` (a stall a stop ends, or a failure).
  static func interrupted(by ending: ScriptedExchange.Step) -> ScriptedExchange {
    ScriptedExchange([
      .head(status: 200, headers: validators.merging(["Content-Length": "1000"]) { $1 }),
      .body(whole.prefix(400)), ending,
    ])
  }

  /// The rest of ``whole`` from byte 400, as a 206.
  static let rest = ScriptedExchange.response(
    status: 206,
    headers: validators.merging(["Content-Range": "bytes 400-999/1000", "Content-Length": "600"]) { $1 },
    body: whole.dropFirst(400))

  /// How the first download ends after 400 bytes.
  enum Interruption: String, CaseIterable, Sendable {
    /// The fetcher is stopped.
    case stop
    /// The connection is lost (retries are off).
    case lostConnection
  }

  /// A fetcher of `/file` on `engine` to `file.bin` in a new temporary folder (the caller removes it).
  static func download(on engine: ScriptedEngine) throws -> (SessionFetcher, URL, URL) {
    let folder = try makeTemporaryFolder()
    let destination = folder.appendingPathComponent("file.bin")
    let fetcher = engine.fetcher("/file")
    fetcher.destinationFileURL = destination
    return (fetcher, folder, destination)
  }

  @Test(arguments: Interruption.allCases)
  func anInterruptedDownloadGivesATokenThatContinuesWithRange(_ interruption: Interruption) async throws {
    let engine = ScriptedEngine()
    let ending: ScriptedExchange.Step =
      interruption == .stop ? .stall : .fail(URLError(.networkConnectionLost))
    engine.respond(to: "/file", with: Self.interrupted(by: ending), Self.rest)
    let (fetcher, folder, destination) = try Self.download(on: engine)
    defer { try? FileManager.default.removeItem(at: folder) }
    fetcher.keepsPartialDownloadForResume = true
    fetcher.stopFetchingTriggersCompletionHandler = true
    let outcome = Recorder<FetchResult>()
    // Progress is reported once the chunk is on disk: a stop while a write is still in flight
    // keeps no part file (how much of it landed is not known), so the stop waits for the report.
    let written = Recorder<Int64>()
    fetcher.receivedProgressBlock = { _, total in written.append(total) }
    fetcher.beginFetch { data, error in outcome.append(FetchResult(data: data, error: error)) }
    if interruption == .stop {
      #expect(await eventually { written.values.last == 400 })
      fetcher.stopFetching()
    }
    #expect(await eventually { outcome.count == 1 })
    if interruption == .stop {
      #expect(outcome.values.first?.fetcherError == .cancelled)
      #expect(await eventually { engine.requests.first?.wasCancelled == true })
    } else {
      #expect(outcome.values.first?.urlError?.code == .networkConnectionLost)
    }
    #expect(!FileManager.default.fileExists(atPath: destination.path))
    // The part file holds the 400 bytes, hidden beside the destination.
    #expect(DownloadTests.contents(folder).count == 1)
    let token = try #require(fetcher.downloadResumeData)

    let resumed = try #require(SessionFetcher(resumeData: token))
    resumed.callbackQueue = DispatchQueue(label: "test.scripted.resumed")
    resumed.run(on: engine)
    #expect(resumed.destinationFileURL == destination)
    let result = await resumed.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(try Data(contentsOf: destination) == Self.whole)
    #expect(DownloadTests.contents(folder) == ["file.bin"])
    #expect(engine.requests.count == 2)
    #expect(engine.requests.first?.header("Range") == nil)
    #expect(engine.requests.last?.header("Range") == "bytes=400-")
    #expect(engine.requests.last?.header("If-Range") == "\"v1\"")
    #expect(resumed.downloadedLength == 1000)
  }

  /// A download whose connection is lost mid-body is continued by the retry, not restarted: the
  /// retry asks for the rest with `If-Range`; a 206 is appended to the part file, and a 200 (the
  /// resource changed) replaces what it holds.
  @Test(arguments: [false, true])
  func aRetryContinuesTheDownload(resourceChanged: Bool) async throws {
    let changed = Data("the resource changed".utf8)
    let engine = ScriptedEngine()
    engine.respond(
      to: "/file", with: Self.interrupted(by: .fail(URLError(.networkConnectionLost))),
      resourceChanged
        ? .response(headers: ["ETag": "\"v2\"", "Accept-Ranges": "bytes"], body: changed) : Self.rest)
    let (fetcher, folder, destination) = try Self.download(on: engine)
    defer { try? FileManager.default.removeItem(at: folder) }
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(fetcher.retryCount == 1)
    #expect(try Data(contentsOf: destination) == (resourceChanged ? changed : Self.whole))
    #expect(DownloadTests.contents(folder) == ["file.bin"])
    #expect(engine.requests.map { $0.header("Range") } == [nil, "bytes=400-"])
    #expect(engine.requests.last?.header("If-Range") == "\"v1\"")
    #expect(fetcher.downloadResumeData == nil)
  }
}
