import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Adds a bearer token to every request.
private struct BearerAuthorizer: FetcherAuthorizer {
  let token: String
  func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
    var request = request
    request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    return request
  }
}

/// `FetcherService.fetcher(resumeData:)`: a resumed download carries the service's defaults and
/// the token's request, with credentials added again by the service, never read from the token.
@Suite("Resume through the service")
struct ResumeThroughServiceTests {
  /// `total` pattern bytes with a strong ETag; a request with `Range: bytes=N-` and the matching
  /// `If-Range` gets a 206; the first answer sends half its body and closes.
  static func rangeRoute(_ server: TestServer, _ path: String, total: Int) {
    let answered = Recorder<Int>()
    server.route(path) { request in
      answered.append(1)
      let headers = [("ETag", "\"v1\""), ("Accept-Ranges", "bytes")]
      var start = 0
      if let range = request.header("Range"), range.hasSuffix("-"), request.header("If-Range") == "\"v1\"" {
        start = Int(range.dropFirst("bytes=".count).dropLast()) ?? 0
      }
      var response = TestResponse(
        status: start > 0 ? 206 : 200,
        headers: headers + (start > 0 ? [("Content-Range", "bytes \(start)-\(total - 1)/\(total)")] : []),
        body: TestServer.patternBytes(
          count: answered.count == 1 ? (total - start) / 2 : total - start, offset: start))
      if answered.count == 1 { response.fault = .truncate(announcedLength: total - start) }
      return response
    }
  }

  @Test("A resumed download keeps the method and custom headers, and gets its credentials from the service")
  func resumeKeepsRequestAndDefaults() async throws {
    let server = try TestServer()
    defer { server.stop() }
    Self.rangeRoute(server, "/file", total: 300_000)
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resume-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("file.bin")
    let service = makeService()
    service.authorizer = BearerAuthorizer(token: "s3cret-bearer")
    service.userAgent = "ResumeTest/1.0"
    service.cookieStorage.handleSetCookieHeaders(["sid=s3cret-cookie; Path=/"], for: server.url("/"))

    var request = URLRequest(url: server.url("/file"))
    request.setValue("trace-1", forHTTPHeaderField: "X-Trace")
    request.setValue("Basic s3cret-header", forHTTPHeaderField: "Authorization")
    let first = service.fetcher(request: request)
    first.destinationFileURL = destination
    first.keepsPartialDownloadForResume = true
    #expect(await first.fetchResult().error != nil)
    let token = try #require(first.downloadResumeData)
    #expect(!String(decoding: token, as: UTF8.self).contains("s3cret"))

    let resumed = try #require(service.fetcher(resumeData: token))
    #expect(resumed.callbackQueue === service.callbackQueue)
    #expect(resumed.allowLocalhostRequest)
    #expect(resumed.destinationFileURL == destination)
    let result = await resumed.fetchResult()
    #expect(result.error == nil)
    let last = try #require(server.requests(path: "/file").last)
    #expect(last.method == "GET")
    #expect(last.header("Range") == "bytes=150000-")
    #expect(last.header("X-Trace") == "trace-1")
    #expect(last.header("Authorization") == "Bearer s3cret-bearer")
    #expect(last.header("Cookie")?.contains("sid=s3cret-cookie") == true)
    #expect(last.header("User-Agent") == "ResumeTest/1.0")
    #expect(try Data(contentsOf: destination) == TestServer.patternBytes(count: 300_000))
  }
}
