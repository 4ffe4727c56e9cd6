import Foundation

/// Byte searching over raw buffers: `memchr` to find candidate first bytes and `memcmp` to confirm
/// them, as the original library does, and Horspool's skips for long needles in long haystacks.
///
/// `memmem` would be the natural primitive, but it is a GNU extension that Glibc does not expose to
/// Swift.
enum ByteSearch {
  /// The original library's `FindBytes`: the first place where `needle` matches, or where a prefix of
  /// `needle` runs into the end of `haystack`.
  ///
  /// - Returns: `(needle.count, offset)` for a full match, `(k, offset)` when only the first `k`
  ///   bytes of the needle fit at the end of the haystack, and `(0, 0)` when neither occurs (also for
  ///   an empty needle).
  static func findPrefix(
    of needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer
  ) -> (matchedCount: Int, offset: Int) {
    guard !needle.isEmpty, let needleBase = needle.baseAddress, let base = haystack.baseAddress
    else { return (0, 0) }
    let firstByte = Int32(needle[0])
    var position = 0
    while position < haystack.count,
      let hit = memchr(base + position, firstByte, haystack.count - position)
    {
      let offset = base.distance(to: UnsafeRawPointer(hit))
      let compareCount = min(haystack.count - offset, needle.count)
      if memcmp(hit, needleBase, compareCount) == 0 { return (compareCount, offset) }
      position = offset + 1
    }
    return (0, 0)
  }

  /// The offset of the first complete occurrence of `needle` in `haystack` at or after `start`.
  static func firstOffset(
    of needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer, from start: Int = 0
  ) -> Int? {
    guard !needle.isEmpty, let needleBase = needle.baseAddress, let base = haystack.baseAddress
    else { return nil }
    if needle.count >= horspoolMinimumNeedle, haystack.count - start >= horspoolMinimumHaystack {
      return horspoolOffset(of: needle, in: haystack, from: max(start, 0))
    }
    let lastStart = haystack.count - needle.count
    let firstByte = Int32(needle[0])
    var position = max(start, 0)
    while position <= lastStart,
      let hit = memchr(base + position, firstByte, lastStart - position + 1)
    {
      let offset = base.distance(to: UnsafeRawPointer(hit))
      if memcmp(hit, needleBase, needle.count) == 0 { return offset }
      position = offset + 1
    }
    return nil
  }

  /// Needles at least this long, in haystacks at least this long, are searched with Horspool's
  /// skips: a boundary (24 bytes or more) in random bytes moves about its own length at each step,
  /// where a `memchr` for its first byte stops every 256 bytes on average.
  static let horspoolMinimumNeedle = 8
  static let horspoolMinimumHaystack = 4096

  /// Boyer–Moore–Horspool: compares the window's last byte first and, on any mismatch, moves the
  /// window by how far that byte is from the needle's end. At worst (a haystack of repeats of the
  /// needle's prefix) it compares `needle.count` bytes per position, as the `memchr` search does.
  static func horspoolOffset(
    of needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer, from start: Int
  ) -> Int? {
    let count = needle.count
    guard count > 0, haystack.count - start >= count, let needleBase = needle.baseAddress,
      let base = haystack.baseAddress
    else { return nil }
    let last = count - 1
    let lastByte = needle[last]
    return withUnsafeTemporaryAllocation(of: Int.self, capacity: 256) { skip -> Int? in
      skip.initialize(repeating: count)
      for index in 0..<last { skip[Int(needle[index])] = last - index }
      var position = start
      let lastStart = haystack.count - count
      while position <= lastStart {
        let byte = haystack[position + last]
        if byte == lastByte, memcmp(base + position, needleBase, last) == 0 { return position }
        position += skip[Int(byte)]
      }
      return nil
    }
  }

  /// Offsets of the non-overlapping occurrences of `needle` in `haystack`, left to right.
  static func offsets(of needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> [Int] {
    offsets(of: needle, inChunks: [haystack])
  }

  /// Offsets (in the concatenation) of the non-overlapping occurrences of `needle` in `chunks`,
  /// including occurrences that straddle chunk edges.
  static func offsets(of needle: [UInt8], inChunks chunks: [UnsafeRawBufferPointer]) -> [Int] {
    var search = ChunkedByteSearch(needle: needle)
    var found: [Int] = []
    for chunk in chunks {
      search.feed(chunk) { offset in
        found.append(offset)
        return true
      }
    }
    return found
  }
}

/// Finds a needle in a byte stream that arrives in chunks (a file read piece by piece), reporting
/// each non-overlapping occurrence once, also when it straddles two or more chunks.
///
/// It keeps only the last `needle.count - 1` bytes between chunks, so its memory does not grow with
/// the stream.
struct ChunkedByteSearch {
  let needle: [UInt8]
  /// The last bytes fed (at most `needle.count - 1`): where an occurrence may have begun.
  private var carry: [UInt8] = []
  /// How many bytes have been fed so far: the offset of the next chunk's first byte.
  private(set) var consumedCount = 0
  /// Occurrences starting before this offset would overlap one already reported.
  private var nextAllowedStart = 0

  init(needle: [UInt8]) {
    self.needle = needle
  }

  /// Searches the next chunk of the stream.
  ///
  /// - Parameter onMatch: called with the stream offset of each occurrence, in order; return
  ///   `false` to stop searching this chunk.
  /// - Returns: `false` when `onMatch` asked to stop.
  @discardableResult
  mutating func feed(_ chunk: UnsafeRawBufferPointer, onMatch: (Int) -> Bool) -> Bool {
    let chunkStart = consumedCount
    defer {
      rememberTail(of: chunk)
      consumedCount += chunk.count
    }
    guard !needle.isEmpty else { return true }
    return needle.withUnsafeBytes { needleBytes in
      searchStraddling(chunk, chunkStart: chunkStart, needle: needleBytes, onMatch: onMatch)
        && searchWithin(chunk, chunkStart: chunkStart, needle: needleBytes, onMatch: onMatch)
    }
  }

  /// Occurrences that begin in `carry` and continue into `chunk`.
  private mutating func searchStraddling(
    _ chunk: UnsafeRawBufferPointer, chunkStart: Int, needle needleBytes: UnsafeRawBufferPointer,
    onMatch: (Int) -> Bool
  ) -> Bool {
    guard !carry.isEmpty, !chunk.isEmpty else { return true }
    var junction = carry
    junction.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk.prefix(needle.count - 1)))
    let carryCount = carry.count
    let carryStart = chunkStart - carryCount
    return junction.withUnsafeBytes { junctionBytes in
      var start = 0
      while let found = ByteSearch.firstOffset(of: needleBytes, in: junctionBytes, from: start),
        found < carryCount
      {
        let offset = carryStart + found
        guard offset >= nextAllowedStart else {
          start = found + 1
          continue
        }
        nextAllowedStart = offset + needle.count
        guard onMatch(offset) else { return false }
        start = found + needle.count
      }
      return true
    }
  }

  /// Occurrences that lie entirely inside `chunk`.
  private mutating func searchWithin(
    _ chunk: UnsafeRawBufferPointer, chunkStart: Int, needle needleBytes: UnsafeRawBufferPointer,
    onMatch: (Int) -> Bool
  ) -> Bool {
    var start = max(0, nextAllowedStart - chunkStart)
    while let found = ByteSearch.firstOffset(of: needleBytes, in: chunk, from: start) {
      let offset = chunkStart + found
      nextAllowedStart = offset + needle.count
      guard onMatch(offset) else { return false }
      start = found + needle.count
    }
    return true
  }

  private mutating func rememberTail(of chunk: UnsafeRawBufferPointer) {
    let keep = max(needle.count - 1, 0)
    if chunk.count >= keep {
      carry = Array(UnsafeRawBufferPointer(rebasing: chunk.suffix(keep)))
    } else {
      carry.append(contentsOf: chunk)
      carry.removeFirst(max(carry.count - keep, 0))
    }
  }
}
