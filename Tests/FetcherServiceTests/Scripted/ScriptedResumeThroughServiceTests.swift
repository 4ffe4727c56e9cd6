import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `FetcherService.fetcher(resumeData:)` on the scripted engine: a resumed download carries the
/// service's defaults and the token's request, with credentials added again by the service, never
/// read from the token.
@Suite("Resume through the service on the scripted engine")
struct ScriptedResumeThroughServiceTests {
  /// Adds a bearer token to every request.
  struct BearerAuthorizer: FetcherAuthorizer {
    let token: String
    func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
      var request = request
      request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
      return request
    }
  }

  static let whole = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
  static let validators = ["ETag": "\"v1\"", "Accept-Ranges": "bytes"]

  /// `/file`: the first 400 bytes, then the connection is lost; then the rest as a 206.
  static func engine() -> ScriptedEngine {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/file",
      with: ScriptedExchange([
        .head(status: 200, headers: validators.merging(["Content-Length": "1000"]) { $1 }),
        .body(whole.prefix(400)), .fail(URLError(.networkConnectionLost)),
      ]),
      .response(
        status: 206,
        headers: validators.merging(["Content-Range": "bytes 400-999/1000", "Content-Length": "600"]) { $1 },
        body: whole.dropFirst(400)))
    return engine
  }

  static func folder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resume-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }

  @Test("A resumed download keeps the method and custom headers, and gets its credentials from the service")
  func resumeKeepsRequestAndDefaults() async throws {
    let engine = Self.engine()
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("file.bin")
    let service = ScriptedServiceTests.service(engine)
    service.authorizer = BearerAuthorizer(token: "s3cret-bearer")
    service.userAgent = "ResumeTest/1.0"
    service.cookieStorage.handleSetCookieHeaders(["sid=s3cret-cookie; Path=/"], for: engine.url("/"))

    var request = URLRequest(url: engine.url("/file"))
    request.setValue("trace-1", forHTTPHeaderField: "X-Trace")
    request.setValue("Basic s3cret-header", forHTTPHeaderField: "Authorization")
    let first = service.fetcher(request: request)
    first.destinationFileURL = destination
    first.keepsPartialDownloadForResume = true
    #expect(await first.fetchResult().urlError?.code == .networkConnectionLost)
    let token = try #require(first.downloadResumeData)
    #expect(!String(decoding: token, as: UTF8.self).contains("s3cret"))

    let resumed = try #require(service.fetcher(resumeData: token))
    #expect(resumed.callbackQueue === service.callbackQueue)
    #expect(resumed.destinationFileURL == destination)
    #expect(await resumed.fetchResult().error == nil)
    let last = try #require(engine.requests(matching: "/file").last)
    #expect(engine.requests(matching: "/file").count == 2)
    #expect(last.method == "GET")
    #expect(last.header("Range") == "bytes=400-")
    #expect(last.header("If-Range") == "\"v1\"")
    #expect(last.header("X-Trace") == "trace-1")
    #expect(last.header("Authorization") == "Bearer s3cret-bearer")
    #expect(last.header("Cookie")?.contains("sid=s3cret-cookie") == true)
    #expect(last.header("User-Agent") == "ResumeTest/1.0")
    #expect(try Data(contentsOf: destination) == Self.whole)
  }

  @Test("The service refuses data that is not a token")
  func notAToken() {
    let service = ScriptedServiceTests.service(ScriptedEngine())
    #expect(service.fetcher(resumeData: Data("not a token".utf8)) == nil)
    #expect(service.fetcher(resumeData: Data()) == nil)
  }

  @Test("A standalone resumed fetcher has no credentials, where the service's has them")
  func standaloneHasNoCredentials() async throws {
    let engine = Self.engine()
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let service = ScriptedServiceTests.service(engine)
    service.authorizer = BearerAuthorizer(token: "s3cret-bearer")
    let first = service.fetcher(url: engine.url("/file"))
    first.destinationFileURL = folder.appendingPathComponent("file.bin")
    first.keepsPartialDownloadForResume = true
    #expect(await first.fetchResult().error != nil)
    #expect(engine.requests.first?.header("Authorization") == "Bearer s3cret-bearer")
    let token = try #require(first.downloadResumeData)
    let standalone = try #require(SessionFetcher(resumeData: token))
    #expect(standalone.authorizer == nil)
    #expect(standalone.request?.value(forHTTPHeaderField: "Authorization") == nil)
    standalone.run(on: engine)
    standalone.callbackQueue = DispatchQueue(label: "test.standalone")
    #expect(await standalone.fetchResult().error == nil)
    #expect(engine.requests.last?.header("Authorization") == nil)
    #expect(engine.requests.last?.header("Range") == "bytes=400-")
  }
}
