#if canImport(FoundationNetworking)
  import Foundation

  import Glibc

  /// The request body of one transfer, read by libcurl's read callback on the loop thread.
  ///
  /// Owned by one ``CurlTransfer``; opened when the transfer is set up, closed when it ends. Not
  /// thread-safe: only the loop thread touches it.
  final class CurlBodySource {
    private enum Source {
      case data(Data)
      case file(descriptor: Int32)
      case stream(InputStream)
    }

    private let source: Source
    private var offset = 0
    /// The body's length, sent as `Content-Length`; nil for a stream (sent chunked).
    let length: Int64?
    /// Whether the body comes from a file (its read errors map to `cannotReadFile`).
    let isFile: Bool
    /// Set when reading failed; the transfer then fails with it.
    private(set) var failure: URLError?

    /// The body of `data`, never copied whole: each read copies the next piece into libcurl's buffer.
    init(data: Data) {
      source = .data(data)
      length = Int64(data.count)
      isFile = false
    }

    /// The file at `url`, opened now for reading.
    init(fileURL url: URL) throws(URLError) {
      let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else {
        let code: URLError.Code = errno == ENOENT ? .fileDoesNotExist : .cannotOpenFile
        throw URLError(code, userInfo: [NSURLErrorFailingURLErrorKey: url])
      }
      var status = stat()
      guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
        Glibc.close(descriptor)
        throw URLError(.cannotOpenFile, userInfo: [NSURLErrorFailingURLErrorKey: url])
      }
      source = .file(descriptor: descriptor)
      length = Int64(status.st_size)
      isFile = true
    }

    /// The stream, opened now; closed by ``close()``.
    init(stream: InputStream) {
      stream.open()
      source = .stream(stream)
      length = nil
      isFile = false
    }

    /// Copies up to `capacity` bytes into `buffer`: the count, 0 at the end, or nil when reading
    /// failed (see ``failure``).
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int? {
      let count = readFromSource(into: buffer, capacity: capacity)
      if let count { bytesRead += Int64(count) }
      return count
    }

    /// Body bytes handed to libcurl so far (libcurl's own upload count includes chunk framing).
    private(set) var bytesRead: Int64 = 0

    private func readFromSource(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int? {
      switch source {
      case .data(let data):
        let count = min(capacity, data.count - offset)
        guard count > 0 else { return 0 }
        data.withUnsafeBytes { bytes in
          buffer.copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
      case .file(let descriptor):
        while true {
          let count = Glibc.read(descriptor, buffer, capacity)
          if count >= 0 { return count }
          if errno == EINTR { continue }
          failure = URLError(.cannotOpenFile)
          return nil
        }
      case .stream(let stream):
        let count = stream.read(buffer.assumingMemoryBound(to: UInt8.self), maxLength: capacity)
        guard count >= 0 else {
          failure = URLError(.requestBodyStreamExhausted)
          return nil
        }
        return count
      }
    }

    /// Goes back to the start, for libcurl to send the body again on another connection. A stream
    /// cannot.
    func rewind() -> Bool {
      switch source {
      case .data:
        offset = 0
        return true
      case .file(let descriptor):
        return lseek(descriptor, 0, SEEK_SET) == 0
      case .stream:
        return false
      }
    }

    /// Releases the file or stream. Idempotent.
    func close() {
      switch source {
      case .data:
        break
      case .file(let descriptor):
        if offset >= 0 { _ = Glibc.close(descriptor) }
        offset = -1
      case .stream(let stream):
        if offset >= 0 { stream.close() }
        offset = -1
      }
    }

    deinit {
      close()
    }
  }
#endif
