import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// The server's byte counts are untrusted: one the upload cannot act on ends it with an error that
/// names the header and the value, never a trap (a negative offset used to slice the source out of
/// range) and never a success.
@Suite("Upload protocol numbers")
struct ProtocolNumberTests {
  struct ParseCase: Sendable, CustomTestStringConvertible {
    var raw: String
    var floor: Int64
    var ceiling: Int64?
    var expected: Int64?
    var testDescription: String { "\"\(raw)\" in \(floor)...\(ceiling.map(String.init) ?? "∞")" }
  }

  @Test(
    arguments: [
      ParseCase(raw: "0", floor: 0, ceiling: 10, expected: 0),
      ParseCase(raw: "10", floor: 0, ceiling: 10, expected: 10),
      ParseCase(raw: " 7 ", floor: 0, ceiling: 10, expected: 7),
      ParseCase(raw: "5", floor: 5, ceiling: nil, expected: 5),
      ParseCase(raw: "9223372036854775807", floor: 0, ceiling: nil, expected: .max),
      ParseCase(raw: "-1", floor: 0, ceiling: 10, expected: nil),
      ParseCase(raw: "-1", floor: -5, ceiling: nil, expected: nil),
      ParseCase(raw: "11", floor: 0, ceiling: 10, expected: nil),
      ParseCase(raw: "4", floor: 5, ceiling: 10, expected: nil),
      ParseCase(raw: "99999999999999999999", floor: 0, ceiling: nil, expected: nil),
      ParseCase(raw: "abc", floor: 0, ceiling: nil, expected: nil),
      ParseCase(raw: "", floor: 0, ceiling: nil, expected: nil),
      ParseCase(raw: "1.5", floor: 0, ceiling: nil, expected: nil),
      ParseCase(raw: "0x10", floor: 0, ceiling: nil, expected: nil),
      ParseCase(raw: "1 2", floor: 0, ceiling: nil, expected: nil),
    ])
  func parse(_ row: ParseCase) {
    #expect(UploadNumber.parse(row.raw, from: row.floor, through: row.ceiling) == row.expected)
  }

  @Test func sizeReceivedNamesTheHeaderAndTheValue() {
    #expect(UploadNumber.sizeReceived(nil, acknowledged: 0, ceiling: 10) == .absent)
    #expect(UploadNumber.sizeReceived("4", acknowledged: 0, ceiling: 10) == .valid(4))
    #expect(
      UploadNumber.sizeReceived("3", acknowledged: 4, ceiling: 10)
        == .invalid(header: "X-Goog-Upload-Size-Received", value: "3"))
    let long = String(repeating: "9", count: 1000)
    guard case .invalid(_, let shown) = UploadNumber.sizeReceived(long, acknowledged: 0, ceiling: nil) else {
      Issue.record("a 1000-digit size is invalid")
      return
    }
    #expect(shown.count < 100)
  }

  @Test func granularity() {
    #expect(UploadNumber.granularity(nil) == .absent)
    #expect(UploadNumber.granularity("262144") == .valid(262_144))
    #expect(UploadNumber.granularity("0") == .valid(0))
    for raw in ["-1", "x", "\(ChunkPlanner.maximumChunkSize + 1)"] {
      #expect(
        UploadNumber.granularity(raw) == .invalid(header: "X-Goog-Upload-Chunk-Granularity", value: raw))
    }
  }

  // MARK: - On the wire

  struct WireCase: Sendable, CustomTestStringConvertible {
    var name: String
    /// The `.location` query steering the test server.
    var query: String
    var value: String
    /// The commands the server saw: none after the broken answer.
    var commands: [String]
    var testDescription: String { name }
  }

  static let sizeHeader = "X-Goog-Upload-Size-Received"

  @Test(
    arguments: [
      WireCase(name: "chunk: -1", query: "sizeReceived=-1", value: "-1", commands: ["upload"]),
      WireCase(
        name: "chunk: huge", query: "sizeReceived=99999999999999999999", value: "99999999999999999999",
        commands: ["upload"]),
      WireCase(
        name: "chunk: beyond the bytes sent", query: "sizeReceived=75001", value: "75001",
        commands: ["upload"]),
      WireCase(name: "chunk: not a number", query: "sizeReceived=abc", value: "abc", commands: ["upload"]),
      WireCase(
        name: "chunk: backwards past the acknowledged 75000", query: "sizeReceived=100&sizeReceivedChunks=2",
        value: "100", commands: ["upload", "upload"]),
      WireCase(
        name: "query: -1", query: "uploadStatus=400&uploadStatusChunks=1&querySizeReceived=-1", value: "-1",
        commands: ["upload", "query"]),
      WireCase(
        name: "query: beyond the upload's length",
        query: "uploadStatus=400&uploadStatusChunks=1&querySizeReceived=199001", value: "199001",
        commands: ["upload", "query"]),
      WireCase(
        name: "query: huge",
        query: "uploadStatus=400&uploadStatusChunks=1&querySizeReceived=9223372036854775807",
        value: "9223372036854775807", commands: ["upload", "query"]),
      WireCase(
        name: "query: not a number", query: "uploadStatus=400&uploadStatusChunks=1&querySizeReceived=abc",
        value: "abc", commands: ["upload", "query"]),
      WireCase(
        name: "query: backwards past the acknowledged 75000",
        query: "uploadStatus=400&uploadStatusChunks=2&querySizeReceived=100", value: "100",
        commands: ["upload", "upload", "query"]),
    ])
  func brokenAnswerFailsTheUpload(_ row: WireCase) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/n.location?" + row.query)
    fetcher.uploadData = bigData
    let (_, error) = await run(fetcher)
    #expect(
      error as? SessionUploadFetcherError
        == .invalidProtocolValue(header: Self.sizeHeader, value: row.value))
    #expect(server.commands("/n.upload").map(\.command) == row.commands)
    #expect(server.resumableUpload(path: "/n.upload")?.status == .active)
  }

  @Test func aFileSourceFailsOnANegativeSizeToo() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString)")
    try bigData.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let fetcher = makeUploadFetcher(server, "/f.location?sizeReceived=-1")
    fetcher.uploadFileURL = file
    let (_, error) = await run(fetcher)
    #expect(
      error as? SessionUploadFetcherError == .invalidProtocolValue(header: Self.sizeHeader, value: "-1"))
  }
}
