import FetcherService
import FetcherTesting
import Foundation
import MIMEDocument
import SessionFetcher
import Testing

@Suite("Form parameters on the wire")
struct FormBodyTests {
  private func boundary(of contentType: String?) -> String? {
    guard let contentType, let range = contentType.range(of: "boundary=") else { return nil }
    return String(contentType[range.upperBound...]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
  }

  private func disposition(_ part: MIMEDocument.Part) -> String? {
    part.headers.first { $0.key.lowercased() == "content-disposition" }?.value
  }

  private func contentType(_ part: MIMEDocument.Part) -> String? {
    part.headers.first { $0.key.lowercased() == "content-type" }?.value
  }

  @Test func aGETQueryReachesTheServerExactlyAsEncoded() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let parameters = [("q", "a b+c&d=e"), ("name", "Zoë 日本"), ("tag", "x"), ("tag", "y"), ("empty", "")]
    let fetcher = service.fetcher(url: server.url("/headers"), query: parameters)
    #expect(await fetcher.fetchResult().error == nil)
    let record = try #require(server.requests(path: "/headers").first)
    #expect(record.method == "GET")
    #expect(
      record.target
        == "/headers?q=a+b%2Bc%26d%3De&name=Zo%C3%AB+%E6%97%A5%E6%9C%AC&tag=x&tag=y&empty=")
    // The server percent-decodes but keeps `+`: every value arrived whole, none split at `&` or `=`.
    #expect(record.queryValues("q") == ["a+b+c&d=e"])
    #expect(record.queryValues("tag") == ["x", "y"])
    #expect(record.queryValues("empty") == [""])

    let standalone = SessionFetcher.fetcher(url: server.url("/headers?lang=en"), query: ["q": "1+1"])
    standalone.allowLocalhostRequest = true
    standalone.callbackQueue = DispatchQueue(label: "test.form.standalone")
    #expect(await standalone.fetchResult().error == nil)
    #expect(server.requests(path: "/headers").last?.target == "/headers?lang=en&q=1%2B1")
  }

  @Test func textParametersMakeAURLEncodedPOSTBody() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let fetcher = service.fetcher(url: server.url("/echo"))
    try fetcher.setFormBody([
      ("user", "ada lovelace"), ("password", "p&ss=w+rd%"), ("note", "naïve ☕"), ("note", ""),
    ])
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    let expected = "user=ada+lovelace&password=p%26ss%3Dw%2Brd%25&note=na%C3%AFve+%E2%98%95&note="
    let record = try #require(server.requests(path: "/echo").first)
    #expect(record.method == "POST")
    #expect(record.header("Content-Type") == "application/x-www-form-urlencoded")
    #expect(record.bodyText == expected)
    #expect(result.data == Data(expected.utf8))
  }

  @Test func aDataValueMakesTheWholeBodyMultipart() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let bytes = Data((0..<300).map { UInt8($0 % 256) })
    let fetcher = service.fetcher(url: server.url("/echo"))
    try fetcher.setFormBody([
      ("title", "a b&c=d"),
      ("avatar", .data(bytes, filename: "me.png", contentType: "image/png")),
      ("title", "second"),
      ("blob", .data(Data("raw".utf8))),
    ])
    #expect(await fetcher.fetchResult().error == nil)
    let record = try #require(server.requests(path: "/echo").first)
    #expect(record.method == "POST")
    let header = record.header("Content-Type")
    #expect(header?.hasPrefix("multipart/form-data; boundary=") == true)
    let separator = try #require(boundary(of: header))
    let parts = try #require(MIMEDocument.parts(boundary: separator, data: record.body))
    #expect(parts.count == 4)
    #expect(disposition(parts[0]) == #"form-data; name="title""#)
    #expect(parts[0].body == Data("a b&c=d".utf8))
    #expect(disposition(parts[1]) == #"form-data; name="avatar"; filename="me.png""#)
    #expect(contentType(parts[1]) == "image/png")
    #expect(parts[1].body == bytes)
    #expect(disposition(parts[2]) == #"form-data; name="title""#)
    #expect(parts[2].body == Data("second".utf8))
    #expect(disposition(parts[3]) == #"form-data; name="blob"; filename="blob""#)
    #expect(contentType(parts[3]) == "application/octet-stream")
  }

  @Test func aFileValueIsStreamedAsAFilePart() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("form-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let fileURL = folder.appendingPathComponent("report.csv")
    let contents = Data(String(repeating: "a,b,c\n", count: 2000).utf8)
    try contents.write(to: fileURL)

    let service = makeService()
    let fetcher = service.fetcher(url: server.url("/upload"))
    try fetcher.setFormBody(["kind": "csv", "file": .file(fileURL, contentType: "text/csv")])
    #expect(await fetcher.fetchResult().error == nil)
    let record = try #require(server.requests(path: "/upload").first)
    let separator = try #require(boundary(of: record.header("Content-Type")))
    let parts = try #require(MIMEDocument.parts(boundary: separator, data: record.body))
    #expect(parts.map(\.body) == [Data("csv".utf8), contents])
    #expect(disposition(parts[1]) == #"form-data; name="file"; filename="report.csv""#)
    #expect(contentType(parts[1]) == "text/csv")
  }

  @Test func anUnreadableFileThrowsAndLeavesTheBodyAsItWas() throws {
    let fetcher = SessionFetcher.fetcher(urlString: "https://example.com/upload")
    try fetcher.setFormBody(["a": "1"])
    let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)")
    #expect(throws: (any Error).self) { try fetcher.setFormBody(["file": .file(missing)]) }
    #expect(fetcher.bodyData == Data("a=1".utf8))
    #expect(fetcher.bodyStreamProvider == nil)
    #expect(fetcher.request?.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
  }

  @Test func aNewFormBodyReplacesTheOldOne() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let fetcher = service.fetcher(url: server.url("/echo"))
    try fetcher.setFormBody(["file": .data(Data("x".utf8))])
    try fetcher.setFormBody(["a": "1"])
    #expect(await fetcher.fetchResult().error == nil)
    let record = try #require(server.requests(path: "/echo").first)
    #expect(record.bodyText == "a=1")
    #expect(record.header("Content-Type") == "application/x-www-form-urlencoded")
  }
}
