import FetcherTesting
import Foundation
import Testing

@Suite("ContentCoding")
struct ContentCodingTests {
  @Test func checksumsMatchTheirStandardCheckValues() {
    #expect(ContentCoding.crc32(Data("123456789".utf8)) == 0xCBF4_3926)
    #expect(ContentCoding.adler32(Data("Wikipedia".utf8)) == 0x11E6_0398)
    #expect(ContentCoding.crc32(Data()) == 0)
    #expect(ContentCoding.adler32(Data()) == 1)
  }

  @Test(arguments: [(0, 2 + 5 + 4), (1, 10 + 5 + 1 + 8), (70_000, 10 + 2 * 5 + 70_000 + 8)])
  func gzipFramesStoredBlocks(_ count: Int, _ expectedLength: Int) {
    let coding: ContentCoding = count == 0 ? .deflate : .gzip
    let body = coding.encode(TestServer.patternBytes(count: count))
    #expect(body.count == expectedLength)
    if coding == .gzip {
      #expect(body.prefix(3) == Data([0x1F, 0x8B, 0x08]))
      // ISIZE, the last four bytes, little-endian.
      let size = body.suffix(4).reversed().reduce(0) { $0 << 8 | Int($1) }
      #expect(size == count)
    } else {
      #expect((Int(body[0]) << 8 | Int(body[1])) % 31 == 0)
    }
  }

  @Test func aBombUnitIsThirteenBytesOfEightBackReferences() {
    for coding in ContentCoding.allCases {
      let bomb = coding.bomb
      #expect(bomb.unit.count == 13)
      #expect(ContentCoding.bombDecodedLength(units: 0) == 259)
      #expect(ContentCoding.bombDecodedLength(units: 1) == 1 + 258 * 9)
    }
  }
}
