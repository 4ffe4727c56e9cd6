import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// The pure chunk arithmetic and answer interpretation, without a network.
@Suite("Chunk planning and answers")
struct PlannerTests {
  /// Walks a planner of a known length and returns (command, offset, length) for every chunk.
  private func walk(_ planner: ChunkPlanner) -> [(UploadCommand, Int64, Int64)] {
    var chunks: [(UploadCommand, Int64, Int64)] = []
    var offset: Int64 = 0
    while true {
      let chunk = planner.chunk(at: offset)
      chunks.append(
        (ChunkPlanner.command(length: chunk.length, isFinal: chunk.isFinal), offset, chunk.length))
      if chunk.isFinal { return chunks }
      offset += chunk.length
    }
  }

  @Test(
    "Chunks of known lengths",
    arguments: [
      // total, chunk, granularity (0: none), expected lengths
      (199_000, 75_000, 0, [75_000, 75_000, 49_000]),
      (199_000, 75_000, 66_666, [66_666, 66_666, 65_668]),
      (13, 75_000, 0, [13]),
      (0, 75_000, 0, [0]),
      (150_000, 75_000, 0, [75_000, 75_000]),
      (152_499, 75_000, 0, [75_000, 77_499]),
      (152_500, 75_000, 0, [75_000, 75_000, 2_500]),
      (10, 3, 4, [10]),
    ] as [(Int64, Int64, Int64, [Int64])])
  func knownLengths(total: Int64, chunk: Int64, granularity: Int64, lengths: [Int64]) {
    let planner = ChunkPlanner(
      requestedChunkSize: chunk, totalLength: total, granularity: granularity == 0 ? nil : granularity,
      wholeFileByURL: false)
    let chunks = walk(planner)
    #expect(chunks.map(\.2) == lengths)
    #expect(chunks.dropLast().allSatisfy { $0.0 == .upload })
    #expect(chunks.last?.0 == (total == 0 ? .finalize : .uploadAndFinalize))
  }

  @Test("The 100 MB cap applies except to a whole file sent by URL")
  func cap() {
    let total: Int64 = 300 * 1024 * 1024
    let capped = ChunkPlanner(
      requestedChunkSize: .max, totalLength: total, granularity: nil, wholeFileByURL: false)
    #expect(capped.chunkSize == ChunkPlanner.maximumChunkSize)
    let whole = ChunkPlanner(
      requestedChunkSize: .max, totalLength: total, granularity: nil, wholeFileByURL: true)
    #expect(whole.chunk(at: 0) == (total, true))
    let unknown = ChunkPlanner(
      requestedChunkSize: .max, totalLength: nil, granularity: nil, wholeFileByURL: false)
    #expect(unknown.chunk(at: 0) == (ChunkPlanner.maximumChunkSize, false))
  }

  private func response(_ headers: [String: String]) -> HTTPURLResponse? {
    HTTPURLResponse(url: URL(string: "http://h/x")!, statusCode: 200, httpVersion: nil, headerFields: headers)
  }

  @Test("Answers to start, chunks and queries")
  func answers() {
    let location = URL(string: "http://h/x.upload")!
    #expect(
      UploadResponse.start(
        response(["X-Goog-Upload-Status": "active", "X-Goog-Upload-URL": location.absoluteString]))
        == .uploadFrom(offset: 0, location: location, granularity: nil))
    #expect(
      UploadResponse.start(
        response([
          "x-goog-upload-status": "active", "x-goog-upload-url": location.absoluteString,
          "X-Goog-Upload-Chunk-Granularity": "262144",
        ])) == .uploadFrom(offset: 0, location: location, granularity: 262_144))
    if case .protocolError = UploadResponse.start(response(["X-Goog-Upload-Status": "active"])) {
    } else {
      Issue.record("a start answer without URL is a protocol error")
    }
    let final = response(["X-Goog-Upload-Status": "final"])
    #expect(UploadResponse.chunk(final, offset: 0, length: 5, wasFinal: true) == .done)
    let partial = response(["X-Goog-Upload-Status": "active", "X-Goog-Upload-Size-Received": "3"])
    #expect(
      UploadResponse.chunk(partial, offset: 0, length: 5, wasFinal: false)
        == .uploadFrom(offset: 3, location: nil, granularity: nil))
    let active = response(["X-Goog-Upload-Status": "active"])
    #expect(
      UploadResponse.chunk(active, offset: 10, length: 5, wasFinal: false)
        == .uploadFrom(offset: 15, location: nil, granularity: nil))
    let queried = response(["X-Goog-Upload-Status": "active", "X-Goog-Upload-Size-Received": "7"])
    #expect(UploadResponse.query(queried) == .uploadFrom(offset: 7, location: nil, granularity: nil))
    #expect(UploadResponse.query(final) == .done)
    for headers in [["X-Goog-Upload-Status": "active"], ["X-Goog-Upload-Status": "cancelled"], [:]] {
      if case .protocolError = UploadResponse.query(response(headers)) { continue }
      Issue.record("\(headers) is a protocol error")
    }
  }

  @Test("Failures: a chunk's 4xx (not 404) queries, transient failures retry, others fail")
  func failures() {
    let error = URLError(.badURL)
    #expect(UploadResponse.failure(of: .upload, statusCode: 400, error: error) == .query)
    #expect(UploadResponse.failure(of: .uploadAndFinalize, statusCode: 409, error: error) == .query)
    #expect(UploadResponse.failure(of: .upload, statusCode: 404, error: error) == .fail)
    #expect(UploadResponse.failure(of: .query, statusCode: 400, error: error) == .fail)
    #expect(UploadResponse.failure(of: .upload, statusCode: 503, error: error) == .retry)
    #expect(UploadResponse.failure(of: .query, statusCode: 502, error: error) == .retry)
    #expect(UploadResponse.failure(of: .start, statusCode: 500, error: error) == .fail)
    #expect(UploadResponse.failure(of: .upload, statusCode: nil, error: URLError(.timedOut)) == .retry)
  }
}
