import Foundation

/// HTTP content codings (`Content-Encoding: gzip` and `deflate`, RFC 9110 §8.4.1) made without
/// zlib, for test servers: valid bodies of any bytes, and hostile ones — a compression bomb, an
/// endless run of gzip members, a corrupt stream.
///
/// Valid bodies use deflate's stored blocks (RFC 1951 §3.2.4): no compression, but every decoder
/// must take them, and the checksums are real, so a client that decodes gets the original bytes.
/// `deflate` in HTTP is the zlib format (RFC 1950) around a deflate stream.
///
/// ```swift
/// server.route("/report") { _ in
///   TestResponse(
///     headers: [("Content-Encoding", "gzip")],
///     body: ContentCoding.gzip.encode(Data("hello".utf8)))
/// }
/// ```
public enum ContentCoding: String, Sendable, CaseIterable {
  /// `Content-Encoding: gzip` (RFC 1952).
  case gzip
  /// `Content-Encoding: deflate`: the zlib format (RFC 1950).
  case deflate

  /// `data` in this coding (stored blocks, with the format's checksum and length).
  public func encode(_ data: Data) -> Data {
    var out = header
    var blocks = data.isEmpty ? [Data()] : []
    var start = data.startIndex
    while start < data.endIndex {
      let end = min(data.endIndex, start + 65_535)
      blocks.append(data[start..<end])
      start = end
    }
    for (index, block) in blocks.enumerated() {
      out.append(index == blocks.count - 1 ? 0x01 : 0x00)  // BFINAL, BTYPE 00 (stored), aligned
      let length = UInt16(block.count)
      out.append(contentsOf: [UInt8(length & 0xFF), UInt8(length >> 8)])
      out.append(contentsOf: [UInt8(~length & 0xFF), UInt8(~length >> 8)])
      out.append(block)
    }
    out.append(trailer(for: data))
    return out
  }

  /// The pieces of a compression bomb: `prefix`, then `unit` repeated any number of times `n`, then
  /// `suffix`, make a body that decodes to `1 + 258 × (1 + 8n)` zero bytes — about 159 decoded bytes
  /// per byte sent (one fixed-Huffman block of back-references of length 258 at distance 1).
  ///
  /// The trailer's checksum and length are not those of the decoded bytes (computing them would
  /// cost as much as decoding): a client must stop at its limit long before the end.
  public var bomb: (prefix: Data, unit: Data, suffix: Data) {
    var bits = BitWriter()
    bits.write(1, count: 1)  // BFINAL
    bits.write(1, count: 2)  // BTYPE 01: fixed Huffman codes
    bits.writeHuffman(0x30, count: 8)  // literal 0
    bits.writeBackReference258()  // the first 11 + 13 bits end on a byte boundary
    let prefix = header + bits.bytes
    var unitBits = BitWriter()
    for _ in 0..<8 { unitBits.writeBackReference258() }  // 8 × 13 bits = 13 bytes
    var endBits = BitWriter()
    endBits.writeHuffman(0, count: 7)  // end of block (256)
    let suffix = endBits.padded + Data(count: self == .gzip ? 8 : 4)
    return (prefix, unitBits.bytes, suffix)
  }

  /// How many zero bytes a bomb with `units` repeats of ``bomb``'s unit decodes to.
  public static func bombDecodedLength(units: Int) -> Int {
    1 + 258 * (1 + 8 * units)
  }

  /// A body that is not a valid stream of this coding: a correct header followed by a deflate block
  /// of the reserved type 11, which every decoder refuses at once.
  public var corrupt: Data {
    header + Data([0x07]) + Data(repeating: 0xA5, count: 64)
  }

  private var header: Data {
    switch self {
    case .gzip:
      // ID1 ID2, CM deflate, no flags, no mtime, no extra flags, OS unknown.
      return Data([0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF])
    case .deflate:
      return Data([0x78, 0x01])  // 32 KiB window, no dictionary, fastest (0x7801 % 31 == 0)
    }
  }

  private func trailer(for data: Data) -> Data {
    switch self {
    case .gzip:
      return Self.littleEndian(Self.crc32(data)) + Self.littleEndian(UInt32(truncatingIfNeeded: data.count))
    case .deflate:
      let adler = Self.adler32(data)
      return Data([
        UInt8(adler >> 24), UInt8((adler >> 16) & 0xFF), UInt8((adler >> 8) & 0xFF), UInt8(adler & 0xFF),
      ])
    }
  }

  private static func littleEndian(_ value: UInt32) -> Data {
    Data([UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)])
  }

  private static let crcTable: [UInt32] = (0..<256).map { index in
    var crc = UInt32(index)
    for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    return crc
  }

  /// The CRC-32 of gzip (ISO 3309).
  public static func crc32(_ data: Data) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in data { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    return ~crc
  }

  /// The Adler-32 of the zlib format.
  public static func adler32(_ data: Data) -> UInt32 {
    var a: UInt32 = 1
    var b: UInt32 = 0
    for byte in data {
      a = (a + UInt32(byte)) % 65_521
      b = (b + a) % 65_521
    }
    return b << 16 | a
  }
}

/// Deflate's bit order: fields from the least significant bit, Huffman codes from their most
/// significant bit.
private struct BitWriter {
  private(set) var bytes = Data()
  private var current: UInt8 = 0
  private var used = 0

  mutating func write(_ value: UInt32, count: Int) {
    for bit in 0..<count { push(UInt8((value >> UInt32(bit)) & 1)) }
  }

  mutating func writeHuffman(_ code: UInt32, count: Int) {
    for bit in (0..<count).reversed() { push(UInt8((code >> UInt32(bit)) & 1)) }
  }

  /// Length 258 (fixed code 285: 11000101) at distance 1 (fixed distance code 0: 00000).
  mutating func writeBackReference258() {
    writeHuffman(0b1100_0101, count: 8)
    writeHuffman(0, count: 5)
  }

  private mutating func push(_ bit: UInt8) {
    current |= bit << UInt8(used)
    used += 1
    if used == 8 {
      bytes.append(current)
      current = 0
      used = 0
    }
  }

  /// The bytes written, the last one padded with zero bits.
  var padded: Data { used == 0 ? bytes : bytes + Data([current]) }
}
