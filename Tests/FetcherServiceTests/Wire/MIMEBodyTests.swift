import FetcherService
import FetcherTesting
import Foundation
import MIMEDocument
import SessionFetcher
import Testing

@Suite("MIME document bodies")
struct MIMEBodyTests {
  private func boundary(of contentType: String?) -> String? {
    guard let range = contentType?.range(of: "boundary=") else { return nil }
    return String(contentType![range.upperBound...]).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
  }

  @Test func aDocumentIsSentWithItsContentTypeAndResentOnRetry() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.isRetryEnabled = true
    service.minRetryInterval = 0.05
    let document = MIMEDocument()
    document.appendFormField(name: "title", value: "Holiday")
    document.appendPart(headers: ["Content-Type": "application/octet-stream"], body: Data(count: 5000))
    let expected = try document.generateData()

    let fetcher = service.fetcher(url: server.url("/fail-first?n=1&key=mime&status=503"))
    let sent = Recorder<Int64>()
    fetcher.sendProgressBlock = { _, total, expectedTotal in sent.append(expectedTotal) }
    try fetcher.setBody(document)
    #expect(fetcher.bodyLength == Int64(expected.data.count))
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    let records = server.requests(path: "/fail-first")
    #expect(records.count == 2)
    for record in records {
      #expect(record.method == "POST")
      #expect(record.body == expected.data)
      let contentType = record.header("Content-Type")
      #expect(contentType?.hasPrefix("multipart/form-data; boundary=") == true)
      #expect(boundary(of: contentType) == expected.boundary)
      let parts = try #require(MIMEDocument.parts(boundary: expected.boundary, data: record.body))
      #expect(parts.count == 2)
      #expect(parts.last?.body == Data(count: 5000))
    }
  }

  @Test func anotherMediaTypeCanBeAnnounced() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let document = MIMEDocument()
    document.appendPart(headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
    let fetcher = service.fetcher(url: server.url("/upload"))
    try fetcher.setBody(document, contentType: "multipart/related")
    #expect(await fetcher.fetchResult().error == nil)
    let contentType = server.requests(path: "/upload").first?.header("Content-Type")
    #expect(contentType?.hasPrefix("multipart/related; boundary=") == true)
  }

  @Test func anUnreadableFilePartThrowsAndChangesNothing() throws {
    let service = makeService()
    let document = MIMEDocument()
    document.appendPart(headers: [:], fileURL: URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)"))
    let fetcher = service.fetcher(urlString: "https://example.com/upload")
    #expect(throws: (any Error).self) { try fetcher.setBody(document) }
    #expect(fetcher.bodyStreamProvider == nil)
    #expect(fetcher.request?.value(forHTTPHeaderField: "Content-Type") == nil)
  }
}
