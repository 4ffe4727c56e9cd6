import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// How each engine frames a request body on the wire. Which body each attempt sends, and bodies
/// that fail before any request, are in `ScriptedBodyTests`.
@Suite("Request bodies")
struct BodyTests {
  @Test func dataBodyIsSentWithContentLengthAndGETBecomesPOST() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let body = TestServer.patternBytes(count: 300_000)
    let fetcher = server.fetcher("/echo")
    fetcher.bodyData = body
    let sent = Recorder<(Int64, Int64, Int64)>()
    fetcher.sendProgressBlock = { sent.append(($0, $1, $2)) }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(result.data == body)
    let recorded = try #require(server.requests.last)
    #expect(recorded.method == "POST")
    #expect(recorded.header("Content-Length") == "300000")
    #expect(!recorded.wasChunked)
    #expect(recorded.bodyChecksum == TestServer.checksum(body))
    #expect(sent.values.last?.1 == 300_000)
    #expect(sent.values.last?.2 == 300_000)
    #expect(fetcher.timing.bytesSent == 300_000)
  }

  @Test func fileBodyIsStreamedWithContentLength() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let body = TestServer.patternBytes(count: 1_000_000, offset: 7)
    let (fetcher, file) = try putFile(body, to: "/upload", on: server)
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    let recorded = try #require(server.requests.last)
    #expect(recorded.method == "PUT")
    #expect(recorded.header("Content-Length") == "1000000")
    #expect(!recorded.wasChunked)
    #expect(recorded.bodyChecksum == TestServer.checksum(body))
  }

  @Test func fileBodyCanBeSentChunked() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let body = TestServer.patternBytes(count: 3_000_001, offset: 11)
    let (fetcher, file) = try putFile(body, to: "/upload", on: server)
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    fetcher.sendsBodyFileChunked = true
    let sent = Recorder<(Int64, Int64, Int64)>()
    fetcher.sendProgressBlock = { sent.append(($0, $1, $2)) }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(fetcher.statusCode == 200)
    let recorded = try #require(server.requests.last)
    #expect(recorded.method == "PUT")
    #expect(recorded.wasChunked)
    #expect(recorded.header("Content-Length") == nil)
    #expect(recorded.bodyChecksum == TestServer.checksum(body))
    // The file's size is the expected total, although a stream reports none on Linux.
    #expect(!sent.values.isEmpty)
    #expect(sent.values.allSatisfy { $0.2 == 3_000_001 })
    #expect(sent.values.last?.1 == 3_000_001)
  }

  @Test func chunkedFileBodyIsReadAgainForEveryAttempt() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let body = TestServer.patternBytes(count: 200_000, offset: 3)
    let (fetcher, file) = try putFile(
      body, to: "/fail-first?n=2&key=file-\(UUID().uuidString)&status=503", on: server)
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    fetcher.sendsBodyFileChunked = true
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(server.requests.count == 3)
    #expect(server.requests.allSatisfy { $0.wasChunked && $0.body == body })
  }

  @Test func streamBodyIsChunkedNeverFramedTwice() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let body = TestServer.patternBytes(count: 1_048_576)
    let fetcher = server.fetcher("/echo")
    fetcher.bodyStreamProvider = { InputStream(data: body) }
    fetcher.bodyLength = Int64(body.count)
    let sent = Recorder<Int64>()
    fetcher.sendProgressBlock = { _, _, expected in sent.append(expected) }
    let result = await fetcher.fetchResult()
    #expect(result.error == nil)
    #expect(fetcher.statusCode == 200)
    #expect(result.data == body)
    let recorded = try #require(server.requests.last)
    #expect(recorded.method == "POST")
    // Workaround pinned: FoundationNetworking sends Content-Length *and* chunked for a stream with
    // a length (corelibs #4818); the fetcher sends chunked only.
    #expect(recorded.wasChunked)
    #expect(recorded.header("Content-Length") == nil)
    #expect(recorded.bodyChecksum == TestServer.checksum(body))
    // The declared length stands in for the 0 that FoundationNetworking reports for streams.
    #expect(sent.values.allSatisfy { $0 == 1_048_576 })
  }

  /// A PUT fetcher whose `bodyFileURL` is a new file holding `body`, in a fresh temporary folder
  /// (the caller removes it).
  private func putFile(_ body: Data, to path: String, on server: TestServer) throws -> (SessionFetcher, URL) {
    let file = try makeTemporaryFolder().appendingPathComponent("body.bin")
    try body.write(to: file)
    let fetcher = server.fetcher(path)
    fetcher.request?.httpMethod = "PUT"
    fetcher.bodyFileURL = file
    return (fetcher, file)
  }
}
