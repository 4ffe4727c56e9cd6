import Foundation

/// One contiguous piece of a generated document.
enum DocumentSegment: Sendable {
  /// Bytes in memory: boundaries, header blocks, `Data` bodies.
  case data(Data)
  /// A file part's body: exactly `length` bytes, the file's size when the document was generated.
  case file(URL, length: Int64)

  var length: Int64 {
    switch self {
    case .data(let data): return Int64(data.count)
    case .file(_, let length): return length
    }
  }
}

/// The stream ``MIMEDocument/generateInputStream()`` returns: it gathers the document's segments
/// (the original's `GTMGatherInputStream`), copying `Data` segments and reading file segments from
/// disk only as the reader asks, so memory stays bounded whatever the files' sizes.
///
/// It is synchronous: `read` returns data (or end of stream, or an error) at once and never blocks
/// waiting for more, so run-loop scheduling and delegate events are not needed and are not sent.
/// Like any `InputStream` it is used from one thread at a time; every call to
/// ``MIMEDocument/generateInputStream()`` makes a fresh one.
///
/// A file part is opened when the stream reaches it. Deleting the file before then makes the stream
/// fail; deleting it after its reading has begun does not, since the open descriptor still reads
/// every byte of it (on POSIX systems the data lives until the descriptor closes), and the document
/// sent is complete and consistent.
///
/// Failure: when a file part cannot be opened or turns out shorter than when the document was
/// generated, `read` returns -1, `streamStatus` becomes `.error` and `streamError` is the
/// ``MIMEDocumentError``. `hasBytesAvailable` stays `true` in that state so that readers which ask it
/// first (FoundationNetworking's upload code does) go on to `read` and see the error rather than
/// taking the stream as complete.
final class MIMEInputStream: InputStream {
  private let segments: [DocumentSegment]
  private var segmentIndex = 0
  /// Bytes of the current `.data` segment already delivered.
  private var offsetInSegment = 0
  /// The open file of the current `.file` segment.
  private var fileReader: FilePartReader?
  private var status: Stream.Status = .notOpen
  private var failure: Error?

  init(segments: [DocumentSegment]) {
    self.segments = segments
    super.init(data: Data())
  }

  override var streamStatus: Stream.Status { status }

  override var streamError: Error? { failure }

  override var hasBytesAvailable: Bool {
    switch status {
    case .open, .reading, .error: return true
    default: return false
    }
  }

  override func open() {
    guard status == .notOpen else { return }
    status = .open
  }

  override func close() {
    fileReader = nil
    if status != .error { status = .closed }
  }

  override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
    switch status {
    case .open, .reading: break
    case .atEnd: return 0
    default: return -1
    }
    guard length > 0 else { return 0 }
    let destination = UnsafeMutableRawBufferPointer(start: buffer, count: length)
    var copied = 0
    do {
      while copied < length, segmentIndex < segments.count {
        copied += try readCurrentSegment(
          into: UnsafeMutableRawBufferPointer(rebasing: destination[copied...]))
      }
    } catch {
      fileReader = nil
      failure = error
      status = .error
      return copied > 0 ? copied : -1
    }
    if segmentIndex == segments.count { status = .atEnd }
    return copied
  }

  override func getBuffer(
    _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
  ) -> Bool {
    false
  }

  override func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}

  override func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}

  /// Copies from the current segment into `destination` (not empty); moves to the next segment when
  /// this one is used up.
  private func readCurrentSegment(into destination: UnsafeMutableRawBufferPointer) throws -> Int {
    switch segments[segmentIndex] {
    case .data(let data):
      let count = min(destination.count, data.count - offsetInSegment)
      if count > 0 {
        data.withUnsafeBytes { source in
          destination.baseAddress!.copyMemory(
            from: source.baseAddress! + offsetInSegment, byteCount: count)
        }
      }
      offsetInSegment += count
      if offsetInSegment == data.count { advance() }
      return count

    case .file(let url, let length):
      let reader = try fileReader ?? FilePartReader(url: url, expectedLength: length)
      fileReader = reader
      let count = try reader.readChunk(into: destination)
      if reader.isFinished { advance() }
      return count
    }
  }

  private func advance() {
    segmentIndex += 1
    offsetInSegment = 0
    fileReader = nil
  }
}
