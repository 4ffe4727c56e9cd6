import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Resume tokens are data from outside the process: which headers a token never keeps, and which
/// names are the library's own part files. Forged tokens are refused before any request in
/// `ScriptedResumeTokenTests`.
@Suite("Resume tokens")
struct ResumeTokenTests {
  /// A real token of a failed download of `path` (150,000 of 300,000 bytes kept) to
  /// `folder/file.bin`, as a JSON object to forge from (for `DiskWorkOutsideLockTests`).
  static func realToken(_ server: TestServer, _ path: String, folder: URL) async throws -> [String: Any] {
    DownloadResumeTests.rangeRoute(server, path, total: 300_000, truncations: 1) { "v1" }
    let (fetcher, _) = DownloadResumeTests.download(server, path, to: folder, resumable: true)
    #expect(await fetcher.fetchResult().error != nil)
    let token = try #require(fetcher.downloadResumeData)
    return try #require(try JSONSerialization.jsonObject(with: token) as? [String: Any])
  }

  static func data(_ object: [String: Any]) throws -> Data {
    try JSONSerialization.data(withJSONObject: object)
  }

  /// Routes answering `path` with 200 (the whole body, Range ignored) or 206 (the range asked for).
  static func answerRoute(_ server: TestServer, _ path: String, status: Int) {
    server.route(path) { request in
      let headers = [("ETag", "\"v1\""), ("Accept-Ranges", "bytes")]
      guard status == 206, let range = request.header("Range"),
        let start = Int(range.dropFirst("bytes=".count).dropLast())
      else {
        return TestResponse(status: 200, headers: headers, body: TestServer.patternBytes(count: 300_000))
      }
      return TestResponse(
        status: 206, headers: headers + [("Content-Range", "bytes \(start)-299999/300000")],
        body: TestServer.patternBytes(count: 300_000 - start, offset: start))
    }
  }

  @Test(
    "Credential headers are recognized by name",
    arguments: [
      ("Authorization", true), ("proxy-authorization", true), ("Cookie", true), ("X-Api-Key", true),
      ("X-Goog-Api-Key", true), ("X-Session-Id", true), ("X-Upload-Token", true), ("X_Client_Secret", true),
      ("X-Auth", true), ("Accept", false), ("X-Custom", false), ("X-Keyboard", false),
      ("If-None-Match", false),
      ("Range", true), ("User-Agent", true),
    ])
  func credentialHeaderNames(name: String, isCredential: Bool) {
    #expect(ResumeToken.isCredentialHeader(name) == isCredential)
  }

  @Test(
    "Part-file names are the library's own",
    arguments: [
      (".file.bin.\(UUID().uuidString).part", true), (".file.bin.not-a-uuid.part", false),
      ("file.bin.\(UUID().uuidString).part", false), (".other.bin.\(UUID().uuidString).part", false),
      ("..", false), (".file.bin..part", false),
    ])
  func partFileNames(name: String, isPartFile: Bool) {
    let destination = URL(fileURLWithPath: "/tmp/x/file.bin")
    #expect(ResumeToken.isPartFileName(name, for: destination) == isPartFile)
  }
}
