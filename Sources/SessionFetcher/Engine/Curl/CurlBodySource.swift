#if LIBCURL_ENGINE
  import Foundation

  #if canImport(Glibc)
    import Glibc
  #elseif canImport(Darwin)
    import Darwin
  #endif

  // The C library's close and read, which CurlBodySource's methods of the same names would shadow.
  @discardableResult
  private func systemClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
      Glibc.close(descriptor)
    #else
      Darwin.close(descriptor)
    #endif
  }

  private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
      Glibc.read(descriptor, buffer, count)
    #else
      Darwin.read(descriptor, buffer, count)
    #endif
  }

  /// The request body of one transfer, read by libcurl's read callback on the loop thread.
  ///
  /// Owned by one ``CurlTransfer``; opened when the transfer is set up, closed when it ends. Not
  /// thread-safe: only the loop thread touches it (a stream is read by a ``StreamPump`` thread of
  /// its own, which the loop only takes bytes from).
  final class CurlBodySource {
    private enum Source {
      case data(Data)
      case file(descriptor: Int32)
      case stream(StreamPump)
    }

    /// What one read gave.
    enum ReadResult: Equatable {
      /// Bytes copied (0: the body is over).
      case bytes(Int)
      /// A stream has nothing yet: pause sending; ``StreamPump/onReadable`` tells when it has.
      case wouldBlock
      /// Reading failed (see ``failure``).
      case failed
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
        systemClose(descriptor)
        throw URLError(.cannotOpenFile, userInfo: [NSURLErrorFailingURLErrorKey: url])
      }
      source = .file(descriptor: descriptor)
      length = Int64(status.st_size)
      isFile = true
    }

    /// The stream, read on a thread of its own from now on (a stream that blocks must not hold up
    /// the loop's other transfers); closed by ``close()``. `onReadable` is called on that thread
    /// when bytes (or the end) arrive after a read found none.
    ///
    /// With `exactLength`, the body goes with that `Content-Length`, and a stream that ends before
    /// it or runs past it fails the transfer (its last byte is never handed to libcurl, so the
    /// server never sees a complete request of the wrong content); without, it goes chunked.
    init(stream: InputStream, exactLength: Int64? = nil, onReadable: @escaping @Sendable () -> Void) {
      source = .stream(StreamPump(stream: stream, onReadable: onReadable))
      length = exactLength
      isFile = false
    }

    /// Copies up to `capacity` bytes into `buffer`.
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> ReadResult {
      if case .stream(let pump) = source {
        let result =
          if let length {
            readExactly(length, from: pump, into: buffer, capacity: capacity)
          } else {
            pump.read(into: buffer, capacity: capacity)
          }
        switch result {
        case .bytes(let count):
          bytesRead += Int64(count)
        case .failed:
          if failure == nil { failure = RequestBodyStreamError.failed(pump.streamError) }
        case .wouldBlock: break
        }
        return result
      }
      guard let count = readFromSource(into: buffer, capacity: capacity) else { return .failed }
      bytesRead += Int64(count)
      return .bytes(count)
    }

    /// The last byte of a stream of exact length, read but not handed to libcurl until the stream
    /// has shown that it ends there.
    private var heldLastByte: UInt8?

    /// Reads a stream that must be `length` bytes long. Its last byte goes to libcurl only once the
    /// stream has ended right after it: with every byte of the `Content-Length` sent the request
    /// would be complete, so a stream that turns out longer (or fails) must be cut before.
    private func readExactly(
      _ length: Int64, from pump: StreamPump, into buffer: UnsafeMutableRawPointer, capacity: Int
    ) -> ReadResult {
      let remaining = length - bytesRead
      if remaining <= 0 { return .bytes(0) }
      if remaining > 1 {
        let result = pump.read(into: buffer, capacity: Int(min(Int64(capacity), remaining - 1)))
        if result == .bytes(0) {
          failure = RequestBodyStreamError.lengthMismatch(expected: length, read: bytesRead)
          return .failed
        }
        return result
      }
      var probe: UInt8 = 0
      if heldLastByte == nil {
        switch pump.read(into: &probe, capacity: 1) {
        case .bytes(0):
          failure = RequestBodyStreamError.lengthMismatch(expected: length, read: bytesRead)
          return .failed
        case .bytes:
          heldLastByte = probe
        case .wouldBlock:
          return .wouldBlock
        case .failed:
          return .failed
        }
      }
      switch pump.read(into: &probe, capacity: 1) {
      case .bytes(0):
        buffer.storeBytes(of: heldLastByte!, as: UInt8.self)
        heldLastByte = nil
        return .bytes(1)
      case .bytes:
        failure = RequestBodyStreamError.lengthMismatch(expected: length, read: length + 1)
        return .failed
      case .wouldBlock:
        return .wouldBlock
      case .failed:
        return .failed
      }
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
          let count = systemRead(descriptor, buffer, capacity)
          if count >= 0 { return count }
          if errno == EINTR { continue }
          failure = URLError(.cannotOpenFile)
          return nil
        }
      case .stream:
        return nil
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
        if offset >= 0 { _ = systemClose(descriptor) }
        offset = -1
      case .stream(let pump):
        if offset >= 0 { pump.close() }
        offset = -1
      }
    }

    deinit {
      close()
    }
  }

  /// Reads an `InputStream` on a thread of its own into a bounded buffer that the loop thread
  /// takes from, so that a stream that blocks (a pipe, a bound pair fed by a slow producer) pauses
  /// only its own transfer.
  ///
  /// `@unchecked Sendable`: every mutable field is guarded by `condition`; the stream is touched
  /// by the pump thread only.
  final class StreamPump: @unchecked Sendable {
    /// At most this many bytes wait in the buffer; the pump stops reading until the loop takes some.
    static let bufferLimit = 256 * 1024
    private static let chunk = 64 * 1024

    private let condition = NSCondition()
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false
    private var failed = false
    /// The stream's error, once it failed.
    private var failure: (any Error)?
    private var closed = false
    /// A read found the buffer empty: the next bytes (or the end) call `onReadable`.
    private var waiting = false
    private let onReadable: @Sendable () -> Void

    init(stream: InputStream, onReadable: @escaping @Sendable () -> Void) {
      self.onReadable = onReadable
      buffer.reserveCapacity(Self.bufferLimit)
      // Handed over: from here on only the pump thread touches the stream.
      nonisolated(unsafe) let stream = stream
      let thread = Thread { [self] in pump(stream) }
      thread.name = "SessionFetcher.body-stream"
      thread.start()
    }

    private func pump(_ stream: InputStream) {
      stream.open()
      defer { stream.close() }
      var chunk = [UInt8](repeating: 0, count: Self.chunk)
      while true {
        condition.lock()
        while buffer.count - start >= Self.bufferLimit && !closed { condition.wait() }
        let stop = closed
        condition.unlock()
        if stop { return }
        let count = chunk.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: $0.count) }
        condition.lock()
        if count > 0 {
          // `read` empties the buffer whenever it takes the last byte, so bytes go on at the end.
          buffer.append(contentsOf: chunk[0..<count])
        } else if count == 0 {
          ended = true
        } else {
          failed = true
          failure = stream.streamError
        }
        let wake = waiting && !closed
        waiting = false
        condition.unlock()
        if wake { onReadable() }
        if count <= 0 { return }
      }
    }

    /// Takes up to `capacity` buffered bytes (loop thread).
    func read(into destination: UnsafeMutableRawPointer, capacity: Int) -> CurlBodySource.ReadResult {
      condition.lock()
      defer { condition.unlock() }
      let available = buffer.count - start
      if available > 0 {
        let count = min(capacity, available)
        buffer.withUnsafeBytes { destination.copyMemory(from: $0.baseAddress! + start, byteCount: count) }
        start += count
        if start == buffer.count {
          buffer.removeAll(keepingCapacity: true)
          start = 0
        }
        condition.signal()
        return .bytes(count)
      }
      if failed { return .failed }
      if ended { return .bytes(0) }
      waiting = true
      return .wouldBlock
    }

    /// The stream's error, once reading it failed.
    var streamError: (any Error)? {
      condition.lock()
      defer { condition.unlock() }
      return failure
    }

    /// Stops the pump: it closes the stream once a read in progress returns.
    func close() {
      condition.lock()
      closed = true
      condition.signal()
      condition.unlock()
    }
  }
#endif
