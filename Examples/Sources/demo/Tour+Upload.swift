import FetcherService
import FetcherTesting
import Foundation
import MIMEDocument
import SessionFetcher

extension Tour {
  /// A multipart/form-data POST built with `MIMEDocument`: a text field and a 200 KB file part
  /// streamed from disk, sent with `fetcher.setBody(_:)`. The server answers with the length and
  /// checksum of what it received, which must match the document generated locally.
  func showMultipartUpload() async throws -> SectionOutcome {
    let file = workFolder.appendingPathComponent("uploads/photo.bin")
    try FileManager.default.createDirectory(
      at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try TestServer.patternBytes(count: 200_000).write(to: file)

    let form = MIMEDocument()
    form.appendFormField(name: "title", value: "Holiday 2024")
    form.appendFormFile(name: "photo", contentType: "application/octet-stream", fileURL: file)
    let (expectedBody, boundary) = try form.generateData()
    Console.detail(
      "POST /upload — multipart/form-data: field \"title\", file \"photo\" (\(file.lastPathComponent), "
        + "\(Format.bytes(200_000)) streamed from disk), boundary \(boundary)")

    let fetcher = makeFetcher("/upload")
    fetcher.comment = "tour: multipart upload"
    try fetcher.setBody(form)
    let reply = try JSONDecoder().decode(UploadReply.self, from: try await fetcher.beginFetch())

    let expectedChecksum = TestServer.checksum(expectedBody)
    Console.detail(
      "server received \(reply.method) of \(reply.length) bytes (\(reply.chunked ? "chunked" : "Content-Length")), "
        + "checksum \(reply.checksum)")
    try require(reply.method == "POST", "the upload was sent as \(reply.method), not POST")
    try require(
      reply.length == expectedBody.count,
      "the server received \(reply.length) bytes, the document has \(expectedBody.count)")
    try require(reply.checksum == expectedChecksum, "the server's checksum differs from the document's")
    Console.detail(
      "matches the document generated locally: \(expectedBody.count) bytes, checksum \(expectedChecksum)")

    let parts = MIMEDocument.parts(boundary: boundary, data: expectedBody) ?? []
    try require(parts.count == 2, "parsing the document back gave \(parts.count) parts, not 2")
    Console.detail(
      "parsed back with MIMEDocument.parts(boundary:data:): "
        + parts.map { "\($0.body.count) bytes" }.joined(separator: " + "))
    return .shown
  }
}

/// The JSON the test server's `/upload` route answers with.
private struct UploadReply: Decodable {
  let method: String
  let length: Int
  let checksum: String
  let chunked: Bool
}
