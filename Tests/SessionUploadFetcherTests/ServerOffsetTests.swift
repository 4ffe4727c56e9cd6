import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@testable import SessionUploadFetcher

/// The offsets a resumable-upload server answers are untrusted input: `X-Goog-Upload-Size-Received`
/// decides which bytes are read and sent next. A value below 0, not a whole number, beyond the
/// bytes sent or behind what the server had acknowledged ends the upload with
/// `SessionUploadFetcherError.invalidServerValue`, naming the header and the value: never a trap
/// (a negative offset used to slice the upload's `Data` out of range, or convert to `UInt64` in the
/// file source) and never a success.
@Suite("Upload offsets from the server are checked")
struct ServerOffsetTests {
  struct Row: Sendable, CustomStringConvertible {
    var value: String?
    var lowest: Int64
    var highest: Int64?
    /// The size accepted, or nil for none (the header absent); `invalid` names a rejection.
    var accepted: Int64?
    var invalid: String?

    var description: String { "\(value ?? "absent") in \(lowest)...\(highest.map(String.init) ?? "?")" }
  }

  static let rows: [Row] = [
    Row(value: nil, lowest: 0, highest: 10, accepted: nil),
    Row(value: "0", lowest: 0, highest: 10, accepted: 0),
    Row(value: " 7 ", lowest: 5, highest: 10, accepted: 7),
    Row(value: "10", lowest: 5, highest: 10, accepted: 10),
    Row(value: "123456789012", lowest: 0, highest: nil, accepted: 123_456_789_012),
    Row(value: "-1", lowest: 0, highest: 10, invalid: "below 0"),
    Row(value: "-0", lowest: 0, highest: 10, invalid: "below 0"),
    Row(value: "11", lowest: 0, highest: 10, invalid: "beyond the 10 bytes sent"),
    Row(value: "4", lowest: 5, highest: 10, invalid: "going back before the 5 bytes"),
    Row(value: "abc", lowest: 0, highest: 10, invalid: "not a whole number"),
    Row(value: "", lowest: 0, highest: 10, invalid: "not a whole number"),
    Row(value: "+5", lowest: 0, highest: 10, invalid: "not a whole number"),
    Row(value: "5.0", lowest: 0, highest: 10, invalid: "not a whole number"),
    Row(value: "0x10", lowest: 0, highest: 10, invalid: "not a whole number"),
    Row(value: "99999999999999999999", lowest: 0, highest: nil, invalid: "beyond any upload's length"),
  ]

  @Test(
    "X-Goog-Upload-Size-Received is a whole number between what was acknowledged and sent", arguments: rows)
  func sizeReceived(_ row: Row) {
    let headers = row.value.map { ["X-Goog-Upload-Size-Received": $0] } ?? [:]
    let response = HTTPURLResponse(
      url: URL(string: "https://upload.example/u")!, statusCode: 200, httpVersion: "HTTP/1.1",
      headerFields: headers)
    switch UploadResponse.sizeReceived(response, lowest: row.lowest, highest: row.highest) {
    case .absent:
      #expect(row.invalid == nil && row.accepted == nil, "absent")
    case .size(let size):
      #expect(row.invalid == nil, "accepted \(size)")
      #expect(size == row.accepted)
    case .invalid(.invalidValue(let header, let value, let reason)):
      #expect(header == "X-Goog-Upload-Size-Received")
      #expect(value == row.value)
      #expect(row.invalid.map { reason.contains($0) } == true, "\(reason)")
    case .invalid(let other):
      Issue.record("unexpected decision \(other)")
    }
  }

  /// The chunk's own ends bound its answer; the query's bounds are what was acknowledged and the
  /// upload's length.
  @Test func chunkAndQueryAnswersUseTheirBounds() {
    func answer(_ size: String) -> HTTPURLResponse {
      HTTPURLResponse(
        url: URL(string: "https://upload.example/u")!, statusCode: 200, httpVersion: "HTTP/1.1",
        headerFields: ["X-Goog-Upload-Status": "active", "X-Goog-Upload-Size-Received": size])!
    }
    #expect(
      UploadResponse.chunk(answer("12"), offset: 10, length: 5, wasFinal: false)
        == .uploadFrom(offset: 12, location: nil, granularity: nil))
    for bad in ["-1", "9", "16", "x"] {
      guard case .invalidValue = UploadResponse.chunk(answer(bad), offset: 10, length: 5, wasFinal: false)
      else {
        Issue.record("chunk answer \(bad) accepted")
        continue
      }
    }
    #expect(
      UploadResponse.query(answer("30"), acknowledged: 10, totalLength: 30)
        == .uploadFrom(offset: 30, location: nil, granularity: nil))
    for bad in ["-1", "9", "31", ""] {
      guard case .invalidValue = UploadResponse.query(answer(bad), acknowledged: 10, totalLength: 30) else {
        Issue.record("query answer \(bad) accepted")
        continue
      }
    }
  }

  enum Answered: String, CaseIterable, Sendable {
    /// The first chunk's answer carries the value.
    case chunk
    /// The first chunk gets a 503; the query after the retry delay carries the value.
    case query
  }

  /// On the wire, on the engine the suite runs on: a server answering each value ends the upload
  /// with the error naming it, the process alive, and no byte sent from a bad offset.
  @Test(
    "A hostile size received ends the upload with an error",
    arguments: Answered.allCases, ["-1", "-9223372036854775808", "999999999", "NaN", "1e3"])
  func hostileServer(_ answered: Answered, _ value: String) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let chunks = Recorder<String>()
    server.route("/hostile/start") { _ in
      TestResponse(headers: [
        ("X-Goog-Upload-Status", "active"),
        ("X-Goog-Upload-URL", server.url("/hostile/upload").absoluteString),
      ])
    }
    server.route("/hostile/upload") { request in
      let command = request.header("X-Goog-Upload-Command") ?? ""
      chunks.append("\(command)@\(request.header("X-Goog-Upload-Offset") ?? "-")")
      if command.contains("query") {
        return TestResponse(headers: [
          ("X-Goog-Upload-Status", "active"), ("X-Goog-Upload-Size-Received", value),
        ])
      }
      if answered == .query { return TestResponse(status: 503) }
      return TestResponse(headers: [
        ("X-Goog-Upload-Status", "active"), ("X-Goog-Upload-Size-Received", value),
      ])
    }
    // Three chunks of 4 bytes: the first chunk's answer may claim 0 to 4 bytes; the query after its
    // 503 (nothing acknowledged yet) 0 to 12.
    var request = URLRequest(url: server.url("/hostile/start"))
    request.httpMethod = "POST"
    let fetcher = SessionUploadFetcher(
      request: request, uploadMIMEType: "application/octet-stream", chunkSize: 4, fetcherService: nil)
    fetcher.allowLocalhostRequest = true
    fetcher.allowedInsecureSchemes = ["http"]
    fetcher.callbackQueue = DispatchQueue(label: "hostile upload callbacks")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    fetcher.uploadData = Data("0123456789ab".utf8)
    let (_, error) = await run(fetcher)
    guard case .invalidServerValue(let header, let sent, _)? = error as? SessionUploadFetcherError else {
      Issue.record("expected invalidServerValue, got \(String(describing: error)); commands \(chunks.values)")
      return
    }
    #expect(header == "X-Goog-Upload-Size-Received")
    #expect(sent == value)
    #expect(String(describing: error!).contains(value))
    // Nothing was read or sent from the bad offset.
    #expect(!chunks.values.contains { $0.hasSuffix("@\(value)") }, "\(chunks.values)")
  }
}
