import FetcherTesting
import Foundation
import TestTraits
import Testing

@testable import MIMEDocument

/// The original's testFindBytes and testSearchDataForBytes, on the chunked search that replaces its
/// dispatch_data walk, plus a randomized check of the chunked search against a naive one.
@Suite("Byte search")
struct ByteSearchTests {
  private func find(_ needle: Data, in haystack: Data) -> (matchedCount: Int, offset: Int) {
    needle.withUnsafeBytes { n in haystack.withUnsafeBytes { h in ByteSearch.findPrefix(of: n, in: h) } }
  }

  @Test func findBytes() {
    let needle = "catpaw".utf8Data
    // At the beginning, in the middle, at the end.
    #expect(find(needle, in: needle + patternData(count: 1000)) == (6, 0))
    #expect(find(needle, in: patternData(count: 1000) + needle + patternData(count: 1000)) == (6, 1000))
    #expect(find(needle, in: patternData(count: 1000) + needle) == (6, 1000))
    // A partial needle in the middle is no match.
    #expect(find(needle, in: patternData(count: 100) + needle.prefix(1) + patternData(count: 100)) == (0, 0))
    #expect(find(needle, in: patternData(count: 100) + needle.prefix(5) + patternData(count: 100)) == (0, 0))
    // A partial needle at the end is reported with its length.
    #expect(find(needle, in: patternData(count: 1000) + needle.prefix(1)) == (1, 1000))
    #expect(find(needle, in: patternData(count: 1000) + needle.prefix(5)) == (5, 1000))
    // Empty haystack, empty needle, a haystack that is a partial needle.
    #expect(find(needle, in: Data()) == (0, 0))
    #expect(find(Data(), in: patternData(count: 1000)) == (0, 0))
    #expect(find(needle, in: needle.prefix(3)) == (3, 0))
  }

  /// Searches `chunks` as one chunked stream; returns each match's offset and the chunk it starts in.
  private func search(_ chunks: [Data], for target: String) -> (offsets: [Int], blocks: [Int]) {
    let offsets = withUnsafeBuffers(chunks) { ByteSearch.offsets(of: Array(target.utf8), inChunks: $0) }
    var starts: [Int] = []
    var position = 0
    for chunk in chunks {
      starts.append(position)
      position += chunk.count
    }
    let blocks = offsets.map { offset in
      chunks.indices.first { starts[$0] <= offset && offset < starts[$0] + chunks[$0].count }!
    }
    return (offsets, blocks)
  }

  private func withUnsafeBuffers<R>(_ chunks: [Data], _ body: ([UnsafeRawBufferPointer]) -> R) -> R {
    let copies = chunks.map { Array($0) }
    var pointers: [UnsafeMutableRawBufferPointer] = []
    for copy in copies {
      let pointer = UnsafeMutableRawBufferPointer.allocate(byteCount: copy.count, alignment: 1)
      pointer.copyBytes(from: copy)
      pointers.append(pointer)
    }
    defer { pointers.forEach { $0.deallocate() } }
    return body(pointers.map { UnsafeRawBufferPointer($0) })
  }

  @Test func searchDataForBytes() {
    let catpaw = "catpaw".utf8Data
    let cat = "cat".utf8Data
    let paw = "paw".utf8Data
    let catpawPlusTest = catpaw + patternData(count: 100)
    let testPlusCatpaw = patternData(count: 100) + catpaw
    let testPlusCat = patternData(count: 100) + cat
    let pawPlusTest = paw + patternData(count: 100)
    let testPlusPaw = patternData(count: 100) + paw

    func check(_ chunks: [Data], _ target: String = "catpaw", offsets: [Int], blocks: [Int]) {
      let result = search(chunks, for: target)
      #expect(result.offsets == offsets)
      #expect(result.blocks == blocks)
    }
    // One range: no target, target alone, at the beginning, at the end.
    check([patternData(count: 100)], offsets: [], blocks: [])
    check([catpaw], offsets: [0], blocks: [0])
    check([catpawPlusTest], offsets: [0], blocks: [0])
    check([testPlusCatpaw], offsets: [100], blocks: [0])
    // Five ranges, targets in the middle; once in the first and twice in the last.
    check(
      [patternData(count: 100), catpaw, patternData(count: 100), catpaw, patternData(count: 100)],
      offsets: [100, 206], blocks: [1, 3])
    check(
      [
        catpaw, patternData(count: 100), patternData(count: 100), patternData(count: 100),
        catpaw + patternData(count: 100) + catpaw,
      ], offsets: [0, 306, 412], blocks: [0, 4, 4])
    // Spanning the first and second blocks; interrupted at the start of the second.
    check([testPlusCat, pawPlusTest], offsets: [100], blocks: [0])
    check([testPlusCat, testPlusPaw], offsets: [], blocks: [])
    // Spanning the second and third; finishing the first, spanning, and starting the fourth.
    check([patternData(count: 100), testPlusCat, pawPlusTest], offsets: [200], blocks: [1])
    check(
      [testPlusCatpaw, testPlusCat, pawPlusTest, catpawPlusTest], offsets: [100, 206, 312], blocks: [0, 1, 3])
    // Spanning the second, third and fourth, plus one in the fifth.
    check(
      [
        patternData(count: 100), patternData(count: 100) + catpaw.prefix(2), catpaw.dropFirst(2).prefix(2),
        catpaw.suffix(2) + patternData(count: 100), catpaw,
      ], offsets: [200, 306], blocks: [1, 4])
    // Starting but not completing; partial matches across blocks are ignored.
    check([testPlusCat, patternData(count: 100), testPlusCat], offsets: [], blocks: [])
    check([cat, testPlusPaw], offsets: [], blocks: [])
    check([cat, patternData(count: 1), paw], offsets: [], blocks: [])
    // Overlapping targets are ignored, also across blocks.
    let catscats = "catscats".utf8Data
    check(
      [patternData(count: 100) + catscats + catscats.prefix(4) + patternData(count: 100)], "catscats",
      offsets: [100], blocks: [0])
    check(
      [patternData(count: 100) + "zzzz".utf8Data, "zzzz".utf8Data + patternData(count: 100)], "zz",
      offsets: [100, 102, 104, 106], blocks: [0, 0, 1, 1])
    // Empty buffer.
    check([Data()], offsets: [], blocks: [])
  }

  @Test func selfOverlappingNeedleAcrossChunks() {
    // The original's continuation check misses "aab" split as "a|a|b"; the carry-based search does not.
    #expect(search(["xa".utf8Data, "ab".utf8Data], for: "aab").offsets == [1])
    #expect(search(["xa".utf8Data, "a".utf8Data, "b".utf8Data], for: "aab").offsets == [1])
    #expect(search(["aa".utf8Data, "aab".utf8Data], for: "aab").offsets == [2])
  }

  /// Leftmost non-overlapping occurrences, the slow obvious way.
  private func naiveOffsets(of needle: [UInt8], in haystack: [UInt8]) -> [Int] {
    guard !needle.isEmpty, haystack.count >= needle.count else { return [] }
    var found: [Int] = []
    var index = 0
    while index + needle.count <= haystack.count {
      if Array(haystack[index..<(index + needle.count)]) == needle {
        found.append(index)
        index += needle.count
      } else {
        index += 1
      }
    }
    return found
  }

  @Test func chunkedSearchMatchesNaiveSearch() {
    var generator = SeededGenerator(seed: 42)
    for _ in 0..<500 {
      // A small alphabet makes matches, partial matches and overlaps frequent.
      let haystack = (0..<Int.random(in: 0...200, using: &generator)).map { _ in
        UInt8.random(in: 0...2, using: &generator)
      }
      let needle = (0..<Int.random(in: 1...5, using: &generator)).map { _ in
        UInt8.random(in: 0...2, using: &generator)
      }
      var chunks: [Data] = []
      var position = 0
      while position < haystack.count {
        let size = Int.random(in: 0...7, using: &generator)
        let end = min(position + size, haystack.count)
        chunks.append(Data(haystack[position..<end]))
        position = end
      }
      let chunked = withUnsafeBuffers(chunks) { ByteSearch.offsets(of: needle, inChunks: $0) }
      let contiguous = haystack.withUnsafeBytes { ByteSearch.offsets(of: needle, in: $0) }
      let expected = naiveOffsets(of: needle, in: haystack)
      #expect(chunked == expected, "needle \(needle) haystack \(haystack) chunks \(chunks.map(\.count))")
      #expect(contiguous == expected)
    }
  }

  /// The Horspool search (long needles in long haystacks) against the naive one: small alphabets for
  /// partial matches and self-overlapping needles, matches at the start and at the very end.
  @Test(.singleThreadedSkippedUnderThreadSanitizer) func horspoolSearchMatchesNaiveSearch() {
    var generator = SeededGenerator(seed: 7)
    for round in 0..<300 {
      let alphabet = UInt8(round % 3 == 0 ? 1 : 3)
      let length = Int.random(
        in: ByteSearch.horspoolMinimumHaystack...(3 * ByteSearch.horspoolMinimumHaystack), using: &generator)
      var haystack = (0..<length).map { _ in UInt8.random(in: 0...alphabet, using: &generator) }
      let needle = (0..<Int.random(in: ByteSearch.horspoolMinimumNeedle...40, using: &generator)).map { _ in
        UInt8.random(in: 0...alphabet, using: &generator)
      }
      switch round % 4 {
      case 1: haystack.replaceSubrange(0..<needle.count, with: needle)
      case 2: haystack.replaceSubrange((haystack.count - needle.count)..., with: needle)
      default: break
      }
      let start = round % 5 == 0 ? Int.random(in: 0..<64, using: &generator) : 0
      let expected = naiveOffsets(of: needle, in: Array(haystack[start...])).first.map { $0 + start }
      let found = needle.withUnsafeBytes { n in
        haystack.withUnsafeBytes { h in ByteSearch.horspoolOffset(of: n, in: h, from: start) }
      }
      #expect(found == expected, "round \(round): needle \(needle.count) bytes")
    }
  }
}
