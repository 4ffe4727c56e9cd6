import FetcherService
import FetcherTesting
import Foundation
import MIMEDocument
import SessionFetcher
import Testing

@Suite("MIME documents on the wire")
struct WireUploadTests {
  /// A 64 MiB file part goes through a fetcher to the in-process server, read from disk in chunks
  /// (the URLSession engine goes through a temporary file, to send it with a length): the server
  /// receives every byte, with a `Content-Length`, and the process does not grow by anything like
  /// the file.
  @Test func largeFilePartIsStreamedEndToEnd() async throws {
    let megabytes = 64
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "mime-wire-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("large.bin")
    #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
    let handle = try FileHandle(forWritingTo: file)
    for index in 0..<megabytes {
      try handle.write(contentsOf: TestServer.patternBytes(count: 1 << 20, offset: index << 20))
    }
    try handle.close()

    let server = try TestServer()
    defer { server.stop() }
    let document = MIMEDocument()
    document.appendFormField(name: "title", value: "large")
    document.appendFormFile(name: "file", filename: "large.bin", fileURL: file)

    let fetcher = SessionFetcher.fetcher(url: server.url("/upload?discard=1"))
    fetcher.allowLocalhostRequest = true
    fetcher.cookieStorage = SessionCookieStorage()
    fetcher.callbackQueue = DispatchQueue(label: "MIMEDocumentTests.wire")
    try fetcher.setBody(document)
    let before = MemoryStatus.current().residentBytes
    let peak = PeakResident(before)
    fetcher.sendProgressBlock = { _, _, _ in peak.sample() }
    let data = try await fetcher.beginFetch()
    peak.sample()

    let received = try #require(server.requests(path: "/upload").last)
    let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let expected = try document.generateData().data
    #expect(json["length"] as? Int == expected.count)
    #expect(json["checksum"] as? String == TestServer.checksum(expected))
    #expect(!received.wasChunked)
    #expect(received.header("Content-Length") == String(expected.count))
    let growth = peak.value - before
    print(
      "MIMEDocument on the wire: \(megabytes) MiB file part uploaded; VmRSS grew by at most "
        + "\(growth >> 10) KiB while sending")
    // Printed, not asserted: suites running in parallel in this process move VmRSS by more than
    // this test could (the streaming itself is bounded; see FilePartTests for the isolated figure).
  }
}

/// The highest VmRSS seen by `sample()`.
final class PeakResident: @unchecked Sendable {
  // `@unchecked Sendable`: `peak` is only touched under `lock`.
  private let lock = NSLock()
  private var peak: Int64

  init(_ start: Int64) { peak = start }

  func sample() {
    let now = MemoryStatus.current().residentBytes
    lock.withLock { peak = max(peak, now) }
  }

  var value: Int64 { lock.withLock { peak } }
}
