import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// An upload URL comes from outside the process (a server's answer, or where an app stored it):
/// only an http or https URL with a host is ever used, never a local file.
@Suite("Upload locations")
struct UploadLocationTests {
  static func expectInvalidLocation(_ error: (any Error)?) {
    guard case .invalidUploadLocation? = error as? SessionUploadFetcherError else {
      Issue.record("expected invalidUploadLocation, got \(String(describing: error))")
      return
    }
  }

  @Test(
    "A restored upload URL that is not http or https fails before any traffic, and no file is touched",
    arguments: ["file", "ftp", "data", "user"])
  func restoredLocation(kind: String) async throws {
    let folder = try makeUploadTestFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let victim = folder.appendingPathComponent("victim.txt")
    try Data("untouched".utf8).write(to: victim)
    let location: URL
    switch kind {
    case "file": location = victim
    case "ftp": location = URL(string: "ftp://127.0.0.1/upload")!
    case "data": location = URL(string: "data:text/plain,x")!
    default: location = URL(string: "http://user:pass@127.0.0.1:9/upload")!
    }
    let upload = SessionUploadFetcher(location: location, uploadMIMEType: "application/octet-stream")
    upload.allowLocalhostRequest = true
    upload.allowedInsecureSchemes = ["http", "file", "ftp"]
    upload.callbackQueue = DispatchQueue(label: "upload location")
    upload.uploadData = Data("chunk bytes".utf8)
    let (_, error) = await run(upload)
    Self.expectInvalidLocation(error)
    #expect(upload.currentCommandFetcher == nil)
    #expect(try Data(contentsOf: victim) == Data("untouched".utf8))
  }

  @Test("A start answer giving a file URL as the upload URL ends the upload; nothing is sent there")
  func startAnswerWithFileLocation() async throws {
    let folder = try makeUploadTestFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let victim = folder.appendingPathComponent("victim.txt")
    try Data("untouched".utf8).write(to: victim)
    let reply = Data(
      ("HTTP/1.1 200 OK\r\nX-Goog-Upload-Status: active\r\nX-Goog-Upload-URL: \(victim.absoluteString)\r\n"
        + "Content-Length: 0\r\n\r\n").utf8)
    let server = try HostileServer { _ in .bytes(reply) }
    defer { server.stop() }
    var request = URLRequest(url: server.url("/start"))
    request.httpMethod = "POST"
    let upload = SessionUploadFetcher(request: request, uploadMIMEType: "application/octet-stream")
    upload.allowLocalhostRequest = true
    upload.allowedInsecureSchemes = ["http", "file"]
    upload.callbackQueue = DispatchQueue(label: "upload location")
    upload.uploadData = Data("chunk bytes".utf8)
    let (_, error) = await run(upload)
    Self.expectInvalidLocation(error)
    #expect(server.requestHeads.count == 1)
    #expect(upload.uploadLocationURL == nil)
    #expect(try Data(contentsOf: victim) == Data("untouched".utf8))
  }

  @Test(
    "Which upload URLs are used",
    arguments: [
      ("https://example.com/upload?id=1", true), ("http://127.0.0.1:8080/u", true),
      ("HTTPS://EXAMPLE.COM/u", true),
      ("file:///etc/passwd", false), ("/upload?id=1", false), ("ftp://example.com/u", false),
      ("https://user:pw@example.com/u", false), ("https:///nohost", false), ("data:,x", false),
    ])
  func table(location: String, accepted: Bool) throws {
    let url = try #require(URL(string: location))
    #expect(UploadLocation.isAcceptable(url) == accepted)
  }
}

/// A fresh empty folder under the temporary directory.
func makeUploadTestFolder() throws -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent("upload-tests-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}

@Suite("Upload locations through the service")
struct UploadLocationServiceTests {
  @Test(
    "The service resumes an upload by its location with its defaults, and refuses a location that is not http"
  )
  func serviceResumesByLocation() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let first = makeUploadFetcher(server, "/again.location")
    first.uploadData = bigData
    first.willBeginCommandFetcher = { [weak first] commandFetcher in
      if isChunk(commandFetcher, at: 75_000) { first?.pauseFetching() }
    }
    first.beginFetch { _, _ in Issue.record("the first fetcher never completes") }
    #expect(await eventually { first.isPaused })
    let location = try #require(first.uploadLocationURL)

    let service = FetcherService()
    service.allowLocalhostRequest = true
    service.callbackQueue = DispatchQueue(label: "upload service callbacks")
    #expect(
      service.uploadFetcher(location: URL(fileURLWithPath: "/etc/hostname"), uploadMIMEType: "text/plain")
        == nil)
    #expect(
      service.uploadFetcher(location: URL(string: "ftp://127.0.0.1/x")!, uploadMIMEType: "text/plain") == nil)
    let resumed = try #require(
      service.uploadFetcher(
        location: location, uploadMIMEType: "application/octet-stream", chunkSize: bigChunkSize))
    #expect(resumed.fetcherService === service)
    #expect(resumed.callbackQueue === service.callbackQueue)
    #expect(resumed.allowLocalhostRequest)
    resumed.uploadData = bigData
    let (data, error) = await run(resumed)
    #expect(error == nil)
    #expect(data.map { String(decoding: $0, as: UTF8.self).contains(TestServer.checksum(bigData)) } == true)
    #expect(server.commands("/again.upload").map(\.command).contains("query"))
  }
}
