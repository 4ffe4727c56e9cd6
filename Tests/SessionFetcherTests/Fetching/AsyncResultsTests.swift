import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// `fetchResponse`, `download` and `progressUpdates` over a real connection. Their errors, and a
/// cancelled or stopped fetch, are in `ScriptedAsyncTests`.
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

  @Test func downloadUsesTheDestinationFileURLWhenGivenNone() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let fetcher = server.fetcher("/bytes/10")
    fetcher.destinationFileURL = folder.appendingPathComponent("ten")
    let file = try await fetcher.download()
    #expect(try Data(contentsOf: file) == TestServer.patternBytes(count: 10))
  }

  @Test func aFailedDownloadThrowsAndLeavesNoFile() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("missing")
    do {
      try await server.fetcher("/status/404").download(to: destination)
      Issue.record("expected an error")
    } catch let error as SessionFetcherError {
      #expect(error.statusCode == 404)
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
  }

  // MARK: - progressUpdates

  @Test func progressUpdatesReachTheWholeBodyAndFinish() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let count = 300_000
    let fetcher = server.fetcher("/bytes/\(count)")
    let updates = fetcher.progressUpdates
    let seen = Task {
      var values: [TransferProgress] = []
      for await progress in updates { values.append(progress) }
      return values
    }
    let data = try await fetcher.beginFetch()
    #expect(data.count == count)
    let values = await seen.value  // Ends: the stream finishes with the fetch.
    #expect(!values.isEmpty)
    #expect(values.allSatisfy { $0.direction == .download })
    #expect(
      values.last
        == TransferProgress(direction: .download, completedBytes: Int64(count), expectedBytes: Int64(count)))
    #expect(zip(values, values.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
  }

  /// Progress comes while the body arrives, not only at the end: FoundationNetworking's own
  /// counters (`URLSessionTask.countOfBytesReceived`, `progress`) stay at 0 during a data task on
  /// Linux, and the library counts the bytes it is handed itself. Three pieces 300 ms apart: the
  /// received-progress block hears of the first before the last has arrived. A stalled machine
  /// can read the three pieces at once (one chunk, one call): the fetch is then made again with
  /// the pieces further apart (1 s, then 3 s), and the first run whose pieces came apart is checked.
  @Test func progressComesWhileTheBodyArrives() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let count = 30_000
    for interval in [300, 1000, 3000] {
      let fetcher = server.fetcher("/drip?bytes=\(count)&chunks=3&interval=\(interval)")
      let totals = Recorder<Int64>()
      let chunks = Recorder<Int>()
      fetcher.receivedProgressBlock = { _, total in totals.append(total) }
      fetcher.eventMonitors = [ChunkCounter(chunks)]
      let data = try await fetcher.beginFetch()
      #expect(data.count == count)
      let seen = totals.values
      #expect(seen.last == Int64(count))
      guard chunks.count > 1 else { continue }
      #expect(seen.contains { $0 > 0 && $0 < Int64(count) }, "\(seen)")
      return
    }
    Issue.record("the three pieces always arrived in one chunk, even 3 s apart")
  }

  /// Counts the body chunks a fetcher was handed.
  final class ChunkCounter: FetcherEventMonitor, @unchecked Sendable {
    let chunks: Recorder<Int>
    init(_ chunks: Recorder<Int>) { self.chunks = chunks }
    func fetcher(_ fetcher: SessionFetcher, didReceiveData data: Data) { chunks.append(data.count) }
  }

  /// Nobody reads the stream while the fetch runs: the fetch is not held up, and the stream kept
  /// only the newest value, then its end.
  @Test func anUnreadProgressStreamKeepsOnlyTheNewestValue() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let count = 500_000
    let fetcher = server.fetcher("/bytes/\(count)?chunked=1&chunkSize=1000")
    let updates = fetcher.progressUpdates
    let data = try await fetcher.beginFetch()
    #expect(data.count == count)
    var values: [TransferProgress] = []
    for await progress in updates { values.append(progress) }
    #expect(
      values == [TransferProgress(direction: .download, completedBytes: Int64(count), expectedBytes: nil)])
  }

  /// The answer has no body (a 204), so no download value can take the last upload value's place.
  @Test func progressUpdatesReportTheUpload() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/status/204")
    fetcher.bodyData = Data(count: 200_000)
    let updates = fetcher.progressUpdates
    let seen = Task {
      var values: [TransferProgress] = []
      for await progress in updates { values.append(progress) }
      return values
    }
    _ = try await fetcher.beginFetch()
    let values = await seen.value
    #expect(values.allSatisfy { $0.direction == .upload })
    #expect(
      values.last == TransferProgress(direction: .upload, completedBytes: 200_000, expectedBytes: 200_000))
  }

}
