import FetcherService
import FetcherTesting
import Foundation
import MIMEDocument
import SessionFetcher
import Testing

/// Multipart bodies go with a `Content-Length`: checked against a route that, like servers that
/// do not read chunked request bodies (S3 POST uploads, Python's `http.server`), refuses them.
@Suite("MIME document bodies with a Content-Length")
struct MIMEContentLengthTests {
  /// Answers 411 to a chunked body or one without a `Content-Length`, else the body's length.
  private func lengthOnlyServer() throws -> TestServer {
    let server = try TestServer()
    server.route("/length-only") { request in
      guard !request.wasChunked, let length = request.header("Content-Length"),
        Int(length) == request.bodyLength
      else { return TestResponse.text("length required", status: 411) }
      return .text(String(request.bodyLength))
    }
    return server
  }

  private func temporaryFile(_ contents: Data) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("mime-cl-\(UUID().uuidString)")
    try contents.write(to: url)
    return url
  }

  @Test func dataAndFileParts() async throws {
    let server = try lengthOnlyServer()
    defer { server.stop() }
    let file = try temporaryFile(TestServer.patternBytes(count: 300_000))
    defer { try? FileManager.default.removeItem(at: file) }
    let document = MIMEDocument()
    document.appendFormField(name: "title", value: "Holiday")
    document.appendFormFile(name: "photo", contentType: "image/jpeg", fileURL: file)
    let expected = try document.generateData()
    let fetcher = makeService().fetcher(url: server.url("/length-only"))
    try fetcher.setBody(document)
    let reply = try await fetcher.beginFetch()
    #expect(String(decoding: reply, as: UTF8.self) == String(expected.data.count))
    let record = try #require(server.requests(path: "/length-only").last)
    #expect(record.body == expected.data)
    #expect(record.header("Content-Length") == String(expected.data.count))
    #expect(record.header("Transfer-Encoding") == nil)
  }

  @Test func aFormBodyWithAFile() async throws {
    let server = try lengthOnlyServer()
    defer { server.stop() }
    let file = try temporaryFile(Data("file contents".utf8))
    defer { try? FileManager.default.removeItem(at: file) }
    let fetcher = makeService().fetcher(url: server.url("/length-only"))
    try fetcher.setFormBody(["title": "x", "attachment": .file(file)])
    #expect(await fetcher.fetchResult().error == nil)
    let record = try #require(server.requests(path: "/length-only").last)
    #expect(!record.wasChunked)
    #expect(String(decoding: record.body, as: UTF8.self).contains("file contents"))
  }

  /// Past the 16 MiB kept in memory: a temporary file on the URLSession engine (deleted when the
  /// fetch ends), a stream with its length on the libcurl engine. Retried once, so the body is
  /// prepared twice.
  @Test func aDocumentLargerThanTheInMemoryLimitAndItsRetry() async throws {
    let server = try lengthOnlyServer()
    defer { server.stop() }
    let size = 17 << 20
    let file = try temporaryFile(TestServer.patternBytes(count: size))
    defer { try? FileManager.default.removeItem(at: file) }
    let document = MIMEDocument()
    document.boundary = "LARGE"
    document.appendPart(headers: ["Content-Type": "application/octet-stream"], fileURL: file)
    let (_, length, _) = try document.generateInputStream()
    let calls = Recorder<Bool>()
    server.route("/large") { request in
      guard !request.wasChunked, request.header("Content-Length") == String(length) else {
        return TestResponse.text("length required", status: 411)
      }
      let parts = MIMEDocument.parts(boundary: "LARGE", data: request.body)
      guard parts?.first?.body == TestServer.patternBytes(count: size) else {
        return .text("mangled", status: 400)
      }
      // The first intact upload is answered 503, to have the document sent a second time.
      return calls.appendIfEmpty(true) ? .status(503) : .text("ok")
    }
    let service = makeService()
    service.isRetryEnabled = true
    service.minRetryInterval = 0.01
    let fetcher = service.fetcher(url: server.url("/large"))
    try fetcher.setBody(document)
    let result = await fetcher.fetchResult(timeout: 120)
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data == Data("ok".utf8))
    #expect(server.requests(path: "/large").count == 2)
    // This document's spools only (its length): tests running in parallel spool bodies of their own.
    let temporary = FileManager.default.temporaryDirectory
    let spools = try FileManager.default.contentsOfDirectory(atPath: temporary.path)
      .filter { $0.hasPrefix(".SessionFetcher-body-") }
      .filter { name in
        let path = temporary.appendingPathComponent(name).path
        let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber
        return size?.int64Value == Int64(length)
      }
    #expect(spools.isEmpty)
  }

  @Test func aFilePartThatChangedSizeFailsBeforeAnythingIsSent() async throws {
    let server = try lengthOnlyServer()
    defer { server.stop() }
    let file = try temporaryFile(Data(count: 1000))
    defer { try? FileManager.default.removeItem(at: file) }
    let document = MIMEDocument()
    document.appendPart(headers: [:], fileURL: file)
    let fetcher = makeService().fetcher(url: server.url("/length-only"))
    try fetcher.setBody(document)
    try Data(count: 1500).write(to: file)
    let result = await fetcher.fetchResult()
    guard case .bodyUnavailable(let text)? = result.fetcherError else {
      Issue.record("expected bodyUnavailable, got \(String(describing: result.error))")
      return
    }
    #expect(text.contains("changed size"))
    await pause(0.2)
    #expect(server.requests.isEmpty)
  }

  /// A stream of exact length that is not: shorter or longer than announced. Neither engine lets a
  /// complete request go out (the URLSession engine reads it first; the libcurl engine holds the
  /// last byte back until the stream has ended), and the error says what happened.
  @Test(arguments: [1000, 3000])
  func aStreamOfTheWrongLengthNeverCompletesARequest(actual: Int) async throws {
    let server = try lengthOnlyServer()
    defer { server.stop() }
    let fetcher = makeService().fetcher(url: server.url("/length-only"))
    fetcher.setBodyStream({ InputStream(data: Data(count: actual)) }, exactLength: 2000)
    let result = await fetcher.fetchResult()
    guard case .bodyUnavailable(let text)? = result.fetcherError else {
      Issue.record("expected bodyUnavailable, got \(String(describing: result.error))")
      return
    }
    #expect(text.contains("2000"))
    await pause(0.2)
    #expect(server.requests(path: "/length-only").isEmpty)
  }
}
