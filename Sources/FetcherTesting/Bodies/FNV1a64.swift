import Foundation

/// The 64-bit FNV-1a hash, computed incrementally: the checksum ``TestServer`` reports for request
/// bodies (``RecordedRequest/bodyChecksum``, the `X-Body-Checksum` header, `/upload`'s JSON).
///
/// Use it to check a large download or upload without holding it in memory:
///
/// ```swift
/// var hash = FNV1a64()
/// hash.update(firstPiece)
/// hash.update(secondPiece)
/// #expect(hash.hexDigest == TestServer.checksum(TestServer.patternBytes(count: total)))
/// ```
public struct FNV1a64: Sendable, Hashable {
  /// The hash of everything passed to `update(_:)` so far (the FNV offset basis when empty).
  public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

  /// Creates the hash of no bytes.
  public init() {}

  /// Adds `data` to the hash.
  public mutating func update(_ data: Data) {
    data.withUnsafeBytes { update($0) }
  }

  /// Adds `bytes` to the hash.
  public mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
    // An index loop over a typed pointer: several times faster than iterating the buffer in the
    // unoptimised builds that `swift test` makes, which matters at a gigabyte.
    var hash = value
    var index = 0
    let count = bytes.count
    while index < count {
      hash = (hash ^ UInt64(base[index])) &* 0x0000_0100_0000_01b3
      index &+= 1
    }
    value = hash
  }

  /// ``value`` as 16 lowercase hexadecimal digits.
  public var hexDigest: String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }
}
