import Foundation

/// The byte counts of the protocol's answers, checked before the upload acts on them.
///
/// `X-Goog-Upload-Size-Received` and `X-Goog-Upload-Chunk-Granularity` come from the server: an
/// offset taken from them reads the source and is sent back as `X-Goog-Upload-Offset`. A value that
/// is not a decimal number, is negative, goes back past what the server already acknowledged, or
/// lies beyond the bytes the upload can hold would read outside the source or report a broken
/// upload as complete; it ends the upload with
/// ``SessionUploadFetcherError/invalidProtocolValue(header:value:)`` instead.
package enum UploadNumber {
  /// `raw` as a byte count from `floor` through `ceiling` (no upper bound when nil), or nil when it
  /// is not one: a decimal integer, optionally signed, with surrounding spaces allowed.
  package static func parse(_ raw: String, from floor: Int64, through ceiling: Int64?) -> Int64? {
    guard let value = Int64(raw.trimmingCharacters(in: .whitespaces)), value >= 0, value >= floor else {
      return nil
    }
    if let ceiling, value > ceiling { return nil }
    return value
  }

  /// The bytes the server says it holds (`X-Goog-Upload-Size-Received`), when present.
  ///
  /// - Parameters:
  ///   - acknowledged: the most the server said it held before: a server does not lose bytes it
  ///     acknowledged, so a smaller value is a broken answer, not a resynchronization.
  ///   - ceiling: the most it can hold (the bytes sent, or the upload's length), nil when unknown.
  package static func sizeReceived(_ raw: String?, acknowledged: Int64, ceiling: Int64?) -> Checked {
    guard let raw else { return .absent }
    guard let value = parse(raw, from: acknowledged, through: ceiling) else {
      return .invalid(header: UploadHeader.sizeReceived, value: shown(raw))
    }
    return .valid(value)
  }

  /// The server's chunk granularity (`X-Goog-Upload-Chunk-Granularity`), when present: a chunk
  /// holds a multiple of it, so it must be a size one chunk may have (0 asks for none).
  package static func granularity(_ raw: String?) -> Checked {
    guard let raw else { return .absent }
    guard let value = parse(raw, from: 0, through: ChunkPlanner.maximumChunkSize) else {
      return .invalid(header: UploadHeader.granularity, value: shown(raw))
    }
    return .valid(value)
  }

  /// A value as an error names it: a header is not bounded in length, an error message is.
  private static func shown(_ raw: String) -> String {
    raw.count <= 64 ? raw : String(raw.prefix(64)) + "…"
  }

  /// A header's number as checked.
  package enum Checked: Equatable, Sendable {
    /// The header is not in the answer.
    case absent
    case valid(Int64)
    /// The header holds `value`, which the upload cannot act on.
    case invalid(header: String, value: String)
  }
}
