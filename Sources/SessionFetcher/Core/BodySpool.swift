import Foundation

/// Turns a stream of known length into a body that the URLSession engine sends with a
/// `Content-Length`.
///
/// FoundationNetworking sends a stream body only chunked: given a `Content-Length` as well, it sends
/// both headers and frames the body twice (corelibs #4818; nginx answers 400). Many servers do not
/// read chunked request bodies (Python's `http.server`, S3 POST form uploads, embedded servers) and
/// see an empty body. So a stream whose length is known before it is read (a `MIMEDocument`, see
/// ``SessionFetcher/setBodyStream(_:exactLength:)``) is read first, off the caller's thread, and
/// sent as what URLSession frames with a length: the bytes, up to
/// `FileBodyInMemory.inMemoryLimit` (16 MiB), or beyond that a temporary file (deleted when
/// the fetch ends or the next attempt replaces it). The libcurl engine and Apple's URLSession need
/// none of this: they stream the body with the length (`EngineBody.sizedStream`), and their
/// sessions say so (`EngineSession.sendsSizedStreams(for:)`), so the spool runs only on
/// FoundationNetworking.
///
/// Reading it all before sending is also what makes a body that changes while it is read (a file
/// part that grows or shrinks) fail cleanly: nothing is sent at all.
enum BodySpool {
  /// The bytes read in one piece.
  private static let chunkSize = 256 * 1024

  /// Where the body of one attempt ended up.
  enum Prepared {
    case data(Data)
    case file(URL)
  }

  /// Reads `stream` whole: exactly `length` bytes, into memory when `length` is at most
  /// `inMemoryLimit`, else into a new file in `folder`.
  ///
  /// - Throws: ``SessionFetcherError/bodyUnavailable(description:)`` when the stream fails, ends
  ///   before `length` bytes or goes past them, or the file cannot be written (a file is then
  ///   deleted).
  static func prepare(
    _ stream: InputStream, length: Int64, inMemoryLimit: Int64 = FileBodyInMemory.inMemoryLimit,
    folder: URL = FileManager.default.temporaryDirectory
  ) throws -> Prepared {
    stream.open()
    defer { stream.close() }
    if length <= inMemoryLimit {
      var data = Data()
      data.reserveCapacity(Int(length))
      try read(stream, length: length) { data.append($0) }
      return .data(data)
    }
    let url = folder.appendingPathComponent(".SessionFetcher-body-\(UUID().uuidString)")
    guard FileManager.default.createFile(atPath: url.path, contents: nil),
      let handle = FileHandle(forWritingAtPath: url.path)
    else {
      throw SessionFetcherError.bodyUnavailable(
        description: "cannot create a temporary file for the body in \(folder.path)")
    }
    do {
      defer { try? handle.close() }
      try read(stream, length: length) { chunk in
        do {
          try handle.write(contentsOf: chunk)
        } catch {
          throw SessionFetcherError.bodyUnavailable(
            description: "cannot write the body's temporary file: \(error)")
        }
      }
    } catch {
      try? FileManager.default.removeItem(at: url)
      throw error
    }
    return .file(url)
  }

  /// Reads exactly `length` bytes of `stream`, handing them to `consume` in pieces.
  private static func read(_ stream: InputStream, length: Int64, consume: (Data) throws -> Void) throws {
    var buffer = [UInt8](repeating: 0, count: chunkSize)
    var total: Int64 = 0
    while true {
      // One byte more than what is left, so that a stream running long is seen.
      let wanted = Int(min(Int64(buffer.count), length - total + 1))
      let count = buffer.withUnsafeMutableBufferPointer { stream.read($0.baseAddress!, maxLength: wanted) }
      if count < 0 {
        let reason = stream.streamError?.localizedDescription ?? "an unknown error"
        throw SessionFetcherError.bodyUnavailable(description: "the body stream failed: \(reason)")
      }
      if count == 0 { break }
      total += Int64(count)
      if total > length {
        throw SessionFetcherError.bodyUnavailable(
          description: "the body stream ran past its announced \(length) bytes")
      }
      try consume(Data(buffer[0..<count]))
    }
    guard total == length else {
      throw SessionFetcherError.bodyUnavailable(
        description: "the body stream ended after \(total) of its announced \(length) bytes")
    }
  }
}

extension SessionFetcher {
  /// Sends the streams `provider` makes with a `Content-Length` of `exactLength`: for bodies whose
  /// length is known before they are read (a `MIMEDocument` of data and file parts).
  ///
  /// FoundationNetworking frames a stream body that has a `Content-Length` twice (corelibs #4818),
  /// so the URLSession engine reads each attempt's stream first and sends the bytes: from memory up
  /// to 16 MiB, from a temporary file beyond (see `BodySpool`). The libcurl engine streams it with
  /// the length. A stream that ends before `exactLength` bytes, or goes past them, fails the
  /// attempt with ``SessionFetcherError/bodyUnavailable(description:)``, before its end goes out.
  /// Setting ``bodyStreamProvider`` or ``bodyLength`` afterwards sends streams chunked again.
  package func setBodyStream(_ provider: @escaping BodyStreamProvider, exactLength: Int64) {
    storage.withLock {
      $0.config.bodyStreamProvider = provider
      $0.config.bodyLength = exactLength
      $0.config.bodyStreamHasExactLength = true
    }
  }
}

extension FetcherStorage {
  /// Takes the attempt's body spool file, for the caller to delete after the lock.
  mutating func takeBodySpoolFile() -> URL? {
    let file = run.bodySpoolFile
    run.bodySpoolFile = nil
    return file
  }
}
