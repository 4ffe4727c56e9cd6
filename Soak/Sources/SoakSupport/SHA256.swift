import Foundation

/// SHA-256 (FIPS 180-4), incremental. The soak checks every body and file with it; Foundation on
/// Linux has no digest of its own and the soak package takes no dependencies.
public struct SHA256 {
  private static let k: [UInt32] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
    0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
    0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
    0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
    0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
    0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
    0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
    0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
  ]

  private var state: [UInt32] = [
    0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
  ]
  private var pending: [UInt8] = []
  private var length: UInt64 = 0

  public init() {}

  public mutating func update(_ data: Data) {
    data.withUnsafeBytes { update(UnsafeRawBufferPointer($0)) }
  }

  public mutating func update(_ bytes: UnsafeRawBufferPointer) {
    length &+= UInt64(bytes.count)
    var offset = 0
    if !pending.isEmpty {
      let take = min(64 - pending.count, bytes.count)
      pending.append(contentsOf: bytes[0..<take])
      offset = take
      if pending.count == 64 {
        pending.withUnsafeBytes { compress(UnsafeRawBufferPointer($0)) }
        pending.removeAll(keepingCapacity: true)
      }
    }
    while bytes.count - offset >= 64 {
      compress(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 64]))
      offset += 64
    }
    if offset < bytes.count { pending.append(contentsOf: bytes[offset...]) }
  }

  public mutating func finalize() -> String {
    let bitLength = length &* 8
    var tail: [UInt8] = [0x80]
    while (pending.count + tail.count) % 64 != 56 { tail.append(0) }
    for shift in stride(from: 56, through: 0, by: -8) {
      tail.append(UInt8(truncatingIfNeeded: bitLength >> shift))
    }
    let savedLength = length
    tail.withUnsafeBytes { update($0) }
    length = savedLength
    return state.map { String(format: "%08x", $0) }.joined()
  }

  private mutating func compress(_ block: UnsafeRawBufferPointer) {
    withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { compress(block, schedule: $0) }
  }

  private mutating func compress(
    _ block: UnsafeRawBufferPointer, schedule w: UnsafeMutableBufferPointer<UInt32>
  ) {
    for i in 0..<16 {
      w[i] =
        UInt32(block[i * 4]) << 24 | UInt32(block[i * 4 + 1]) << 16 | UInt32(block[i * 4 + 2]) << 8
        | UInt32(block[i * 4 + 3])
    }
    for i in 16..<64 {
      let s0 = w[i - 15].rotatedRight(7) ^ w[i - 15].rotatedRight(18) ^ (w[i - 15] >> 3)
      let s1 = w[i - 2].rotatedRight(17) ^ w[i - 2].rotatedRight(19) ^ (w[i - 2] >> 10)
      w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
    }
    var (a, b, c, d, e, f, g, h) = (
      state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7]
    )
    for i in 0..<64 {
      let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
      let choice = (e & f) ^ (~e & g)
      let t1 = h &+ s1 &+ choice &+ Self.k[i] &+ w[i]
      let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
      let majority = (a & b) ^ (a & c) ^ (b & c)
      let t2 = s0 &+ majority
      (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
    }
    state[0] &+= a
    state[1] &+= b
    state[2] &+= c
    state[3] &+= d
    state[4] &+= e
    state[5] &+= f
    state[6] &+= g
    state[7] &+= h
  }

  /// The digest of `data` (by libcrypto where it loads: several times faster).
  public static func hex(of data: Data) -> String {
    if let crypto = LibCrypto.shared { return crypto.hex { update in update(data) } }
    var hash = SHA256()
    hash.update(data)
    return hash.finalize()
  }

  /// The digest of a file, read in 1 MiB pieces; nil if it cannot be read.
  public static func hex(ofFile url: URL) -> String? {
    guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
    defer { try? handle.close() }
    func chunks(_ body: (Data) -> Void) {
      while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty { body(chunk) }
    }
    if let crypto = LibCrypto.shared { return crypto.hex(chunks) }
    var hash = SHA256()
    chunks { hash.update($0) }
    return hash.finalize()
  }
}

/// SHA-256 from the system's libcrypto (OpenSSL 3, which libcurl already brings), loaded at run
/// time: the soak checks gigabytes of bodies and files, and must check them as fast as the engines
/// fetch them. Used only after it gave the same digest as ``SHA256`` on a test input.
struct LibCrypto: Sendable {
  private typealias Initialize = @convention(c) (UnsafeMutableRawPointer) -> Int32
  private typealias Update = @convention(c) (UnsafeMutableRawPointer, UnsafeRawPointer?, Int) -> Int32
  private typealias Finish = @convention(c) (UnsafeMutablePointer<UInt8>, UnsafeMutableRawPointer) -> Int32
  private let initialize: Initialize
  private let update: Update
  private let finish: Finish

  static let shared: LibCrypto? = {
    guard let library = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL),
      let initialize = dlsym(library, "SHA256_Init"), let update = dlsym(library, "SHA256_Update"),
      let finish = dlsym(library, "SHA256_Final")
    else { return nil }
    let crypto = LibCrypto(
      initialize: unsafeBitCast(initialize, to: Initialize.self),
      update: unsafeBitCast(update, to: Update.self),
      finish: unsafeBitCast(finish, to: Finish.self))
    let sample = Data((0..<1000).map { UInt8($0 % 251) })
    var reference = SHA256()
    reference.update(sample)
    return crypto.hex { $0(sample) } == reference.finalize() ? crypto : nil
  }()

  /// The digest of the bytes `feed` passes to the function it is given.
  func hex(_ feed: ((Data) -> Void) -> Void) -> String {
    // SHA256_CTX is 112 bytes; room to spare.
    let context = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 16)
    defer { context.deallocate() }
    _ = initialize(context)
    feed { data in data.withUnsafeBytes { _ = update(context, $0.baseAddress, $0.count) } }
    var digest = [UInt8](repeating: 0, count: 32)
    _ = finish(&digest, context)
    return digest.map { String(format: "%02x", $0) }.joined()
  }
}

extension UInt32 {
  fileprivate func rotatedRight(_ count: UInt32) -> UInt32 { (self >> count) | (self << (32 - count)) }
}
