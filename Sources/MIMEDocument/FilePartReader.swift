import Foundation

/// Reads one file part: exactly the number of bytes the file had when the document was generated,
/// through a POSIX descriptor straight into the caller's buffer, so nothing of the file is kept in
/// memory. The descriptor is closed when the reader is released.
///
/// Opening uses `O_NONBLOCK` and then insists on a regular file, so a FIFO swapped in for a part can
/// never block the reading thread.
final class FilePartReader {
  let url: URL
  let expectedLength: Int64
  private let descriptor: CInt
  private var remaining: Int64

  /// Opens `url` for reading `expectedLength` bytes; throws ``MIMEDocumentError`` when the file is
  /// gone, unreadable, not a regular file, or already shorter than `expectedLength`.
  init(url: URL, expectedLength: Int64) throws {
    self.url = url
    self.expectedLength = expectedLength
    self.remaining = expectedLength
    let descriptor = try Self.withPath(of: url) { open($0, O_RDONLY | O_CLOEXEC | O_NONBLOCK) }
    guard descriptor >= 0 else { throw MIMEDocumentError.unreadableFile(url, errno: errno) }
    do {
      try Self.checkOpenedFile(descriptor, url: url, expectedLength: expectedLength)
    } catch {
      close(descriptor)
      throw error
    }
    self.descriptor = descriptor
  }

  private static func checkOpenedFile(_ descriptor: CInt, url: URL, expectedLength: Int64) throws {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else {
      throw MIMEDocumentError.unreadableFile(url, errno: errno)
    }
    guard isRegularFile(info) else { throw MIMEDocumentError.notARegularFile(url) }
    guard Int64(info.st_size) >= expectedLength else {
      throw MIMEDocumentError.fileChanged(url, expectedLength: expectedLength)
    }
  }

  deinit {
    close(descriptor)
  }

  /// Whether all `expectedLength` bytes have been read.
  var isFinished: Bool { remaining == 0 }

  /// Reads up to `buffer.count` of the remaining bytes into `buffer`; returns how many it read (0 only
  /// once finished). Throws ``MIMEDocumentError/fileChanged(_:expectedLength:)`` when the file ends
  /// early.
  func readChunk(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard remaining > 0, let base = buffer.baseAddress, !buffer.isEmpty else { return 0 }
    let wanted = Int(min(Int64(buffer.count), remaining))
    while true {
      let count = read(descriptor, base, wanted)
      if count > 0 {
        remaining -= Int64(count)
        return count
      }
      if count == 0 { throw MIMEDocumentError.fileChanged(url, expectedLength: expectedLength) }
      if errno != EINTR { throw MIMEDocumentError.unreadableFile(url, errno: errno) }
    }
  }

  /// The size of the regular file at `url`, following symbolic links.
  static func size(of url: URL) throws -> Int64 {
    var info = stat()
    guard try withPath(of: url, { stat($0, &info) }) == 0 else {
      throw MIMEDocumentError.unreadableFile(url, errno: errno)
    }
    guard isRegularFile(info) else { throw MIMEDocumentError.notARegularFile(url) }
    return Int64(info.st_size)
  }

  private static func isRegularFile(_ info: stat) -> Bool {
    (info.st_mode & S_IFMT) == S_IFREG
  }

  private static func withPath(of url: URL, _ body: (UnsafePointer<CChar>) -> CInt) throws -> CInt {
    guard url.isFileURL else { throw MIMEDocumentError.unreadableFile(url, errno: EINVAL) }
    guard let result = url.withUnsafeFileSystemRepresentation({ $0.map(body) }) else {
      throw MIMEDocumentError.unreadableFile(url, errno: EINVAL)
    }
    return result
  }
}
