import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// Resumable downloads: the part file kept with its validator, continued with Range + If-Range,
/// over a real connection. When a token is given, and a 416 or a lost part file, are in
/// `ScriptedResumeRulesTests`.
@Suite("Resumable downloads", .ownThreads)
struct DownloadResumeTests {
  /// The Range of a download's first request: its first window where downloads go in windows
  /// (the URLSession engine on Linux, see `SessionFetcher.downloadWindowLength`), none elsewhere
  /// (the libcurl engine pauses instead).
  static let firstRange: String? = {
    let fetcher = SessionFetcher(request: URLRequest(url: URL(string: "http://x")!))
    guard fetcher.engine == .urlSession else { return nil }
    return fetcher.downloadWindowLength.map { "bytes=0-\($0 - 1)" }
  }()

  /// Whether the file at `url` holds exactly `count` pattern bytes (compared in 4 MiB pieces).
  static func holdsPattern(_ url: URL, count: Int) throws -> Bool {
    let handle = try FileHandle(forReadingFrom: url)
    defer { try? handle.close() }
    var offset = 0
    while offset < count {
      let piece = min(4 << 20, count - offset)
      guard let data = try handle.read(upToCount: piece),
        data == TestServer.patternBytes(count: piece, offset: offset)
      else { return false }
      offset += piece
    }
    return try handle.read(upToCount: 1)?.isEmpty ?? true
  }

  /// A fetcher of `path` downloading to `file.bin` in `folder`; `resumable` keeps its part file
  /// and gives a resume token when it fails.
  static func download(
    _ server: TestServer, _ path: String, to folder: URL, resumable: Bool = false
  ) -> (fetcher: SessionFetcher, destination: URL) {
    let destination = folder.appendingPathComponent("file.bin")
    let fetcher = server.fetcher(path)
    fetcher.destinationFileURL = destination
    // Set only when asked: the default must be what the other tests see.
    if resumable { fetcher.keepsPartialDownloadForResume = true }
    return (fetcher, destination)
  }

  /// A fetcher continuing the download of `token`, allowed to fetch from the test server.
  static func resuming(_ token: Data) throws -> SessionFetcher {
    let fetcher = try #require(SessionFetcher(resumeData: token))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    return fetcher
  }

  /// Answers `total` pattern bytes with `ETag: "<etag()>"` and `Accept-Ranges: bytes`, honouring
  /// `Range: bytes=N-` when `If-Range` matches; the first `truncations` answers send half their body
  /// and close.
  static func rangeRoute(
    _ server: TestServer, _ path: String, total: Int, truncations: Int, etag: @escaping @Sendable () -> String
  ) {
    let answered = Recorder<Int>()
    server.route(path) { request in
      answered.append(1)
      let tag = "\"\(etag())\""
      var start = 0
      if let range = request.header("Range"), range.hasPrefix("bytes="), range.hasSuffix("-"),
        request.header("If-Range") == nil || request.header("If-Range") == tag
      {
        start = Int(range.dropFirst("bytes=".count).dropLast()) ?? 0
      }
      let count = total - start
      var headers = [("ETag", tag), ("Accept-Ranges", "bytes"), ("Content-Type", "application/octet-stream")]
      if start > 0 { headers.append(("Content-Range", "bytes \(start)-\(total - 1)/\(total)")) }
      if answered.count <= truncations {
        var response = TestResponse(
          status: start > 0 ? 206 : 200, headers: headers,
          body: TestServer.patternBytes(count: count / 2, offset: start))
        response.fault = .truncate(announcedLength: count)
        return response
      }
      return TestResponse(
        status: start > 0 ? 206 : 200, headers: headers,
        body: TestServer.patternBytes(count: count, offset: start))
    }
  }

  @Test("Retries continue an interrupted download with Range and If-Range instead of restarting")
  func automaticResumeOnRetry() async throws {
    let server = try TestServer()
    defer { server.stop() }
    Self.rangeRoute(server, "/flaky", total: 1_000_000, truncations: 2) { "v1" }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let (fetcher, destination) = Self.download(server, "/flaky", to: folder)
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(try Self.holdsPattern(destination, count: 1_000_000))
    let requests = server.requests(path: "/flaky")
    // A retry asks for the rest whole (open-ended), not in windows.
    #expect(requests.map { $0.header("Range") } == [Self.firstRange, "bytes=500000-", "bytes=750000-"])
    #expect(requests.dropFirst().allSatisfy { $0.header("If-Range") == "\"v1\"" })
    #expect(DownloadTests.contents(folder) == ["file.bin"])
    #expect(fetcher.downloadedLength == 1_000_000)
    #expect(fetcher.downloadResumeData == nil)
  }

  @Test("A changed validator makes the server answer 200: the download restarts cleanly")
  func changedValidatorRestarts() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let version = Recorder<Int>()
    Self.rangeRoute(server, "/changing", total: 400_000, truncations: 1) {
      version.append(1)
      return "v\(version.count)"
    }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let (fetcher, destination) = Self.download(server, "/changing", to: folder)
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(try Self.holdsPattern(destination, count: 400_000))
    let ranges = server.requests(path: "/changing").map { $0.header("Range") }
    #expect(ranges == [Self.firstRange, "bytes=200000-"])
    #expect(DownloadTests.contents(folder) == ["file.bin"])
  }

  @Test("A failed download keeps its part file and gives a token that a new fetcher continues")
  func failureGivesToken() async throws {
    let server = try TestServer()
    defer { server.stop() }
    Self.rangeRoute(server, "/once", total: 300_000, truncations: 1) { "v1" }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let (first, destination) = Self.download(server, "/once", to: folder, resumable: true)
    let failed = await first.fetchResult()
    #expect(failed.error != nil)
    #expect(!FileManager.default.fileExists(atPath: destination.path))
    let token = try #require(first.downloadResumeData)
    #expect(DownloadTests.contents(folder).count == 1)

    let second = try Self.resuming(token)
    #expect(second.destinationFileURL == destination)
    let result = await second.fetchResult()
    #expect(result.error == nil)
    #expect(try Self.holdsPattern(destination, count: 300_000))
    #expect(server.requests(path: "/once").last?.header("Range") == "bytes=150000-")
    #expect(DownloadTests.contents(folder) == ["file.bin"])
  }

  @Test("The token of a running download continues its part file as a killed process leaves it")
  func liveTokenSurvivesACrash() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let total = 300_000
    // The first answer sends half its body and stalls: what a process killed mid-body has on disk.
    server.route("/crash") { request in
      let headers = [
        ("ETag", "\"v1\""), ("Accept-Ranges", "bytes"), ("Content-Type", "application/octet-stream"),
      ]
      guard let range = request.header("Range"), request.header("If-Range") == "\"v1\"",
        let start = Int(range.dropFirst("bytes=".count).dropLast())
      else {
        var response = TestResponse(
          status: 200, headers: headers, body: TestServer.patternBytes(count: total / 2))
        response.fault = .stall(announcedLength: total)
        return response
      }
      return TestResponse(
        status: 206, headers: headers + [("Content-Range", "bytes \(start)-\(total - 1)/\(total)")],
        body: TestServer.patternBytes(count: total - start, offset: start))
    }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let (first, destination) = Self.download(server, "/crash", to: folder, resumable: true)
    first.downloadWindowLength = 0
    #expect(first.partFileResumeData == nil)
    first.beginFetch { _, _ in }
    #expect(await eventually(timeout: 30) { first.partFileResumeData != nil })
    let token = try #require(first.partFileResumeData)
    // The part file (named `.NAME.UUID.part`), once the half body is written to it: the token names
    // it before it is created, the fetcher counts bytes before it writes them (after its lock), and
    // Foundation creates a file through a temporary one beside it.
    func partFileName() -> String? { DownloadTests.contents(folder).first { $0.hasSuffix(".part") } }
    func partFileLength() -> Int? {
      partFileName().flatMap {
        try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent($0).path)[.size]
          as? Int
      }
    }
    #expect(await eventually(timeout: 30) { partFileLength() == total / 2 })
    let partFile = folder.appendingPathComponent(try #require(partFileName()))
    // The crash: the part file stays as it is, nothing else happens to it.
    let kept = try Data(contentsOf: partFile)
    first.stopFetching()
    try? FileManager.default.removeItem(at: partFile)
    try kept.write(to: partFile)
    #expect(!FileManager.default.fileExists(atPath: destination.path))

    let second = try Self.resuming(token)
    #expect(second.destinationFileURL == destination)
    let result = await second.fetchResult()
    #expect(result.error == nil)
    #expect(server.requests(path: "/crash").last?.header("Range") == "bytes=150000-")
    #expect(try Self.holdsPattern(destination, count: total))
    #expect(DownloadTests.contents(folder) == ["file.bin"])
  }

  @Test("256 MiB stopped at random points resumes to the same bytes")
  func bigDownloadStoppedAtRandomPoints() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let total = 256 << 20
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("big.bin")
    var stopPoints = (0..<3).map { _ in Int64.random(in: 1...Int64(total - 1)) }.sorted()
    var token: Data?
    var ranges: [String?] = []
    while true {
      let fetcher: SessionFetcher
      if let token {
        fetcher = try #require(SessionFetcher(resumeData: token))
        fetcher.allowLocalhostRequest = true
        fetcher.callbackQueue = makeCallbackQueue()
      } else {
        fetcher = server.fetcher("/bytes/\(total)")
        fetcher.destinationFileURL = destination
        fetcher.keepsPartialDownloadForResume = true
      }
      let stopAt = stopPoints.first
      if let stopAt {
        stopPoints.removeFirst()
        // A monitor runs on the delivery path itself, so the stop always comes before the end of the
        // body (a progress block runs later, on the callback queue, possibly after completion).
        fetcher.eventMonitors = [StopAtLengthMonitor(stopAt)]
      }
      server.resetRecords()
      if stopAt == nil {
        let result = await fetcher.fetchResult(timeout: 120)
        #expect(result.error == nil)
        ranges.append(server.requests.last?.header("Range"))
        break
      }
      fetcher.beginFetch { _, _ in }
      #expect(await eventually(timeout: 120) { fetcher.downloadResumeData != nil })
      #expect(!FileManager.default.fileExists(atPath: destination.path))
      ranges.append(server.requests.last?.header("Range"))
      token = fetcher.downloadResumeData
    }
    // The first fetcher's last request: its whole body, or (in windows) its last window.
    #expect(ranges.first == .some(nil) || ranges.first??.hasSuffix("-") == false)
    // Every resumed fetcher asks for the rest, open-ended.
    #expect(ranges.dropFirst().allSatisfy { $0?.hasPrefix("bytes=") == true && $0?.hasSuffix("-") == true })
    #expect(try Self.holdsPattern(destination, count: total))
    #expect(DownloadTests.contents(folder) == ["big.bin"])
  }
}
