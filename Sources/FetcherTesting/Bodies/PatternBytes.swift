import Foundation

/// The byte pattern of every body the server generates: byte `i` is `UInt8(i % 251)`.
///
/// 251 is prime, so the pattern does not line up with power-of-two buffer sizes, and a byte that
/// lands at the wrong offset (a lost, duplicated or reordered piece) changes the checksum.
enum PatternBytes {
  static let period = 251

  /// `period` repetitions of the pattern past 64 KiB, so any window of up to 64 KiB starting at any
  /// phase is one contiguous slice.
  private static let table: [UInt8] = (0..<(65_536 + period)).map { UInt8($0 % period) }

  /// The largest piece ``withPiece(at:count:_:)`` hands out.
  static let maximumPiece = 65_536

  /// Calls `body` with the pattern bytes at positions `position ..< position + count`
  /// (`count <= maximumPiece`), without copying.
  static func withPiece<Result>(
    at position: Int, count: Int, _ body: (UnsafeRawBufferPointer) throws -> Result
  ) rethrows -> Result {
    precondition(count >= 0 && count <= maximumPiece)
    let phase = ((position % period) + period) % period
    return try table.withUnsafeBytes { all in
      try body(UnsafeRawBufferPointer(rebasing: all[phase..<(phase + count)]))
    }
  }

  /// `count` pattern bytes starting at pattern position `offset`.
  static func make(count: Int, offset: Int) -> Data {
    precondition(count >= 0, "count must not be negative")
    var data = Data(count: count)
    data.withUnsafeMutableBytes { destination in
      var written = 0
      while written < count {
        let piece = min(maximumPiece, count - written)
        withPiece(at: offset + written, count: piece) { source in
          UnsafeMutableRawBufferPointer(rebasing: destination[written..<(written + piece)])
            .copyMemory(from: source)
        }
        written += piece
      }
    }
    return data
  }
}
