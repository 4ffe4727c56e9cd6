import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Downloads to a file asked for in bounded Range windows (Linux; see
/// `SessionFetcher.downloadWindowLength`).
@Suite("Download windows")
struct DownloadWindowTests {
  static let mebibyte = 1 << 20

  /// A fetcher downloading `path` into a new folder, in windows of 1 MiB.
  static func download(
    _ server: TestServer, _ path: String, window: Int64? = Int64(mebibyte)
  ) throws -> (SessionFetcher, URL, URL) {
    let folder = try makeTemporaryFolder()
    let destination = folder.appendingPathComponent("file.bin")
    let fetcher = server.fetcher(path)
    fetcher.engine = .urlSession  // the URLSession engine's Range windows
    fetcher.destinationFileURL = destination
    fetcher.downloadWindowLength = window
    return (fetcher, folder, destination)
  }

  #if canImport(FoundationNetworking)
    @Test func theDefaultWindowIs16MiB() {
      let fetcher = SessionFetcher(request: URLRequest(url: URL(string: "http://example.com/")!))
      #expect(fetcher.downloadWindowLength == 16 * Int64(Self.mebibyte))
    }

    /// 5 MiB and a bit in windows of 1 MiB: six requests, each after the last; the file is whole;
    /// the fetcher shows one 200 for the whole resource, one Started/Stopped pair, and progress
    /// against the whole length.
    @Test func aDownloadComesInWindows() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let size = 5 * Self.mebibyte + 123
      let (fetcher, folder, destination) = try Self.download(server, "/bytes/\(size)")
      defer { try? FileManager.default.removeItem(at: folder) }
      let progress = Recorder<(Int64, Int64)>()
      fetcher.downloadProgressBlock = { _, total, expected in progress.append((total, expected)) }
      let counter = NotificationRecorder([fetcher])
      let result = await fetcher.fetchResult()
      #expect(result.error == nil)
      #expect(try Data(contentsOf: destination) == TestServer.patternBytes(count: size))
      #expect(DownloadTests.contents(folder) == ["file.bin"])
      let requests = server.requests(path: "/bytes/\(size)")
      let window = Self.mebibyte
      #expect(
        requests.map { $0.header("Range") }
          == (0..<6).map { "bytes=\($0 * window)-\(min(($0 + 1) * window, size) - 1)" }
          .map { $0.replacingOccurrences(of: "-\(size - 1)", with: "-\(6 * window - 1)") })
      #expect(requests.first?.header("If-Range") == nil)
      #expect(requests.dropFirst().allSatisfy { $0.header("If-Range") == "\"bytes-\(size)\"" })
      #expect(fetcher.statusCode == 200)
      #expect(fetcher.response?.expectedContentLength == Int64(size))
      #expect(await eventually { progress.values.last?.0 == Int64(size) })
      #expect(progress.values.allSatisfy { $0.1 == Int64(size) })
      #expect(await eventually { counter.started == 1 && counter.stopped == 1 })
    }

    /// A server that ignores ranges answers the first window with the whole body, which is
    /// written as it comes, from that one request.
    @Test func aServerIgnoringRangesSendsTheWholeFile() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let resource = RangedResource(size: 3 * Self.mebibyte)
      server.route("/plain") { resource.respond($0, ranges: false) }
      let (fetcher, folder, destination) = try Self.download(server, "/plain")
      defer { try? FileManager.default.removeItem(at: folder) }
      #expect(await fetcher.fetchResult().error == nil)
      #expect(try Data(contentsOf: destination) == resource.body)
      #expect(server.requestCount(path: "/plain") == 1)
    }

    /// A window whose connection breaks fails the attempt; the retry continues the part file with
    /// an open-ended range (no more windows), and the file is whole.
    @Test func aBrokenWindowIsContinuedByARetry() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let window = Self.mebibyte
      let resource = RangedResource(size: 3 * window) { number in
        number == 2 ? .truncate(announcedLength: window) : nil
      }
      server.route("/flaky") { resource.respond($0) }
      let (fetcher, folder, destination) = try Self.download(server, "/flaky")
      defer { try? FileManager.default.removeItem(at: folder) }
      fetcher.isRetryEnabled = true
      fetcher.minRetryInterval = 0.05
      #expect(await fetcher.fetchResult().error == nil)
      #expect(try Data(contentsOf: destination) == resource.body)
      #expect(fetcher.retryCount == 1)
      #expect(
        server.requests(path: "/flaky").map { $0.header("Range") } == [
          "bytes=0-\(window - 1)", "bytes=\(window)-\(2 * window - 1)", "bytes=\(window + window / 2)-",
        ])
      #expect(DownloadTests.contents(folder) == ["file.bin"])
    }

    /// The resource changes between two windows: the `If-Range` gets a 200 with the whole new
    /// body, which replaces what the part file held (without retries or more windows).
    @Test func aChangedResourceBetweenWindowsRestartsTheDownload() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let resource = RangedResource(size: 3 * Self.mebibyte)
      server.route("/changing") { request in
        let response = resource.respond(request)
        resource.etag = "\"v2\""
        return response
      }
      let (fetcher, folder, destination) = try Self.download(server, "/changing")
      defer { try? FileManager.default.removeItem(at: folder) }
      let result = await fetcher.fetchResult()
      #expect(result.error == nil)
      #expect(fetcher.retryCount == 0)
      let requests = server.requests(path: "/changing")
      #expect(
        requests.map { $0.header("Range") } == [
          "bytes=0-\(Self.mebibyte - 1)", "bytes=\(Self.mebibyte)-\(2 * Self.mebibyte - 1)",
        ])
      #expect(requests.last?.header("If-Range") == "\"v1\"")
      // Not the first window followed by the whole body: the part file started over.
      #expect(try Data(contentsOf: destination) == resource.body)
      #expect(DownloadTests.contents(folder) == ["file.bin"])
    }

    /// A window whose `Content-Range` names another total length belongs to another resource:
    /// the fetch ends with `streamInterrupted` (not retried) and leaves nothing behind.
    @Test func aWindowOfAnotherLengthEndsTheDownload() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let window = Self.mebibyte
      let hits = Recorder<Int>()
      server.route("/grows") { _ in
        hits.append(1)
        let total = hits.count == 1 ? 3 * window : 4 * window
        let start = hits.count == 1 ? 0 : window
        return TestResponse(
          status: 206,
          headers: [
            ("ETag", "\"v1\""), ("Content-Type", "application/octet-stream"),
            ("Content-Range", "bytes \(start)-\(start + window - 1)/\(total)"),
          ],
          body: TestServer.patternBytes(count: window, offset: start))
      }
      let (fetcher, folder, _) = try Self.download(server, "/grows")
      defer { try? FileManager.default.removeItem(at: folder) }
      fetcher.isRetryEnabled = true
      fetcher.minRetryInterval = 0.05
      let result = await fetcher.fetchResult()
      guard case .streamInterrupted? = result.fetcherError else {
        Issue.record("expected streamInterrupted, got \(String(describing: result.error))")
        return
      }
      #expect(server.requestCount(path: "/grows") == 2)
      #expect(fetcher.retryCount == 0)
      #expect(DownloadTests.contents(folder).isEmpty)
    }
  #endif

  /// Without windows the body is asked for whole, in one request.
  @Test func noWindowsWhenTheLengthIsNil() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let size = 3 * Self.mebibyte
    let (fetcher, folder, destination) = try Self.download(server, "/bytes/\(size)", window: nil)
    defer { try? FileManager.default.removeItem(at: folder) }
    #expect(await fetcher.fetchResult().error == nil)
    #expect(try Data(contentsOf: destination) == TestServer.patternBytes(count: size))
    #expect(server.requests(path: "/bytes/\(size)").map { $0.header("Range") } == [nil])
  }
}
