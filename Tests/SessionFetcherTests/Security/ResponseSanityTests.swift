import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// A 101 no request asked for and a 206 to a request without Range are not responses to use: the
/// fetch fails with `URLError(.badServerResponse)` and no file is written. The 101 as each engine
/// reads it from the wire is here; the 206 cases are in `ScriptedResponseSanityTests`.
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
