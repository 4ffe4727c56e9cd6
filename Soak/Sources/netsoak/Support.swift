import Foundation
import SoakSupport

/// A file the soak made, and its digest.
struct ServedFile {
  var path: String
  var url: URL
  var length: Int
  var sha256: String
}

/// Writes `count` bytes of a seeded pseudo-random stream to `url` and returns its sha256.
func writeRandomFile(_ url: URL, count: Int, seed: UInt64) throws -> String {
  var generator = SplitMix64(seed: seed)
  guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
    throw SoakError.setup("cannot write \(url.path)")
  }
  let handle = try FileHandle(forWritingTo: url)
  defer { try? handle.close() }
  var hash = SHA256()
  var remaining = count
  while remaining > 0 {
    let piece = generator.bytes(min(remaining, 1 << 20))
    hash.update(piece)
    try handle.write(contentsOf: piece)
    remaining -= piece.count
  }
  return hash.finalize()
}
