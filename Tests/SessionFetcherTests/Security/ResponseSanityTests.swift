import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// A 101 no request asked for and a 206 to a request without Range are not responses to use: the
/// fetch fails with `URLError(.badServerResponse)` and no file is written.
@Suite("Response sanity")
struct ResponseSanityTests {
  static func expectBadServerResponse(_ error: (any Error)?) {
    #expect((error as? URLError)?.code == .badServerResponse, "got \(String(describing: error))")
  }

  static let switchingProtocols = Data(
    ("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"
      + "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello").utf8)

  @Test("A 101 to a request without Upgrade fails the download and writes no file")
  func stray101Download() async throws {
    let server = try HostileServer { _ in .bytes(Self.switchingProtocols) }
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let fetcher = SessionFetcher.fetcher(url: server.url("/switch"))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    fetcher.destinationFileURL = folder.appendingPathComponent("file.bin")
    let result = await fetcher.fetchResult()
    Self.expectBadServerResponse(result.error)
    #expect(DownloadTests.contents(folder).isEmpty)
  }

  @Test("A 101 to a request without Upgrade fails a fetch into memory")
  func stray101Memory() async throws {
    let server = try HostileServer { _ in .bytes(Self.switchingProtocols) }
    defer { server.stop() }
    let fetcher = SessionFetcher.fetcher(url: server.url("/switch"))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    let result = await fetcher.fetchResult()
    Self.expectBadServerResponse(result.error)
    #expect(result.data == nil)
  }

  /// A route answering 206 with the first half of a 300,000-byte body, whatever was asked.
  static func partialRoute(_ server: TestServer) {
    server.route("/partial") { _ in
      TestResponse(
        status: 206,
        headers: [
          ("Content-Range", "bytes 0-149999/300000"), ("Accept-Ranges", "bytes"), ("ETag", "\"v1\""),
        ],
        body: TestServer.patternBytes(count: 150_000))
    }
  }

  @Test("A 206 to a download that asked for no range fails and leaves no file")
  func unaskedPartialDownload() async throws {
    let server = try TestServer()
    defer { server.stop() }
    Self.partialRoute(server)
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let fetcher = server.fetcher("/partial")
    // No Range windows: the request asks for the whole resource.
    fetcher.downloadWindowLength = 0
    fetcher.keepsPartialDownloadForResume = true
    fetcher.destinationFileURL = folder.appendingPathComponent("file.bin")
    let result = await fetcher.fetchResult()
    Self.expectBadServerResponse(result.error)
    #expect(server.requests(path: "/partial").first?.header("Range") == nil)
    #expect(DownloadTests.contents(folder).isEmpty)
    #expect(fetcher.downloadResumeData == nil)
  }

  @Test("A 206 to a fetch into memory that asked for no range fails")
  func unaskedPartialMemory() async throws {
    let server = try TestServer()
    defer { server.stop() }
    Self.partialRoute(server)
    let fetcher = server.fetcher("/partial")
    let result = await fetcher.fetchResult()
    Self.expectBadServerResponse(result.error)
    #expect(fetcher.statusCode == 206)
  }

  @Test("A 206 to a request with its own Range is the answer asked for")
  func askedPartial() async throws {
    let server = try TestServer()
    defer { server.stop() }
    Self.partialRoute(server)
    var request = URLRequest(url: server.url("/partial"))
    request.setValue("bytes=0-149999", forHTTPHeaderField: "Range")
    let fetcher = server.fetcher("/partial")
    fetcher.request = request
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == TestServer.patternBytes(count: 150_000))
  }

  @Test(
    "Which answers a request could not have asked for",
    arguments: [
      (101, nil, nil, true), (101, "websocket", nil, false), (206, nil, nil, true),
      (206, nil, "bytes=0-", false),
      (200, nil, nil, false), (100, nil, nil, false), (416, nil, nil, false),
    ] as [(Int, String?, String?, Bool)])
  func table(status: Int, upgrade: String?, range: String?, refused: Bool) {
    var request = URLRequest(url: URL(string: "https://example.com/")!)
    request.setValue(upgrade, forHTTPHeaderField: "Upgrade")
    request.setValue(range, forHTTPHeaderField: "Range")
    #expect((ResponseSanity.error(status: status, request: request) != nil) == refused)
  }
}
