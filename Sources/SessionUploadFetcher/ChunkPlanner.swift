import Foundation

/// How an upload is cut into chunks: pure arithmetic, no I/O.
///
/// The rules are the original library's: a chunk is at most ``chunkSize`` bytes (rounded down to a
/// multiple of the server's granularity, never below one granule); a remainder of less than
/// `chunkSize + 2500` bytes is sent in one last chunk rather than leaving a tiny one behind; the
/// last chunk carries `upload, finalize`, or `finalize` alone when no bytes are left.
package struct ChunkPlanner: Sendable, Equatable {
  /// A remainder this much larger than a chunk still goes in one last chunk.
  package static let mergeSlack: Int64 = 2500
  /// The largest chunk read into memory: 100 MB (a whole file sent by URL is not read).
  package static let maximumChunkSize: Int64 = 100 * 1024 * 1024

  /// The planned chunk size after the cap and the granularity.
  package var chunkSize: Int64
  /// The length of the whole upload; nil when unknown (a provider of unknown length).
  package var totalLength: Int64?

  /// - Parameters:
  ///   - requestedChunkSize: the fetcher's chunk size (`Int64.max`: as large as allowed).
  ///   - totalLength: the upload's length, nil when unknown.
  ///   - granularity: the server's `X-Goog-Upload-Chunk-Granularity`, if any.
  ///   - wholeFileByURL: the source is a file URL, sent without reading it into memory when it
  ///     fits in one chunk: the 100 MB cap does not apply then.
  package init(requestedChunkSize: Int64, totalLength: Int64?, granularity: Int64?, wholeFileByURL: Bool) {
    var size = max(1, requestedChunkSize)
    let fitsWhole = wholeFileByURL && totalLength.map { size >= $0 } == true
    if !fitsWhole { size = min(size, ChunkPlanner.maximumChunkSize) }
    if let granularity, granularity > 0 {
      size = max(granularity, size / granularity * granularity)
    }
    chunkSize = size
    self.totalLength = totalLength
  }

  /// The chunk to send at `offset`: how many bytes to read, and whether it is the last one.
  /// With an unknown length, `isFinal` is false and the bytes actually read decide (see
  /// ``command(length:isFinal:)``): fewer than asked means the end.
  package func chunk(at offset: Int64) -> (length: Int64, isFinal: Bool) {
    guard let totalLength else { return (chunkSize, false) }
    let remaining = max(0, totalLength - offset)
    if remaining <= chunkSize || remaining - chunkSize < ChunkPlanner.mergeSlack {
      return (remaining, true)
    }
    return (chunkSize, false)
  }

  /// The command of a chunk of `length` bytes.
  package static func command(length: Int64, isFinal: Bool) -> UploadCommand {
    guard isFinal else { return .upload }
    return length == 0 ? .finalize : .uploadAndFinalize
  }
}
