import Foundation
import SessionFetcher

/// Where the bytes of an upload come from.
enum UploadSource {
  case data(Data)
  case file(URL)
  case fileHandle(FileHandle)
  case provider(length: Int64?, SessionUploadFetcher.DataProvider)
  /// A provider that may tell the upload's full length with any chunk.
  case fullLengthProvider(length: Int64?, SessionUploadFetcher.FullLengthDataProvider)

  /// The body of one chunk: bytes in memory, or the whole file by URL (never read).
  enum ChunkBody {
    case data(Data)
    case file(URL)

    var length: Int64 {
      switch self {
      case .data(let data): return Int64(data.count)
      case .file(let url): return UploadSource.fileLength(url) ?? 0
      }
    }
  }

  static func fileLength(_ url: URL) -> Int64? {
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return nil }
    return (attributes[.size] as? NSNumber)?.int64Value
  }

  /// The upload's length (nil when unknown); throws when a file cannot be read.
  func totalLength() throws -> Int64? {
    switch self {
    case .data(let data):
      return Int64(data.count)
    case .file(let url):
      var isDirectory: ObjCBool = false
      guard url.isFileURL, FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory),
        !isDirectory.boolValue, FileManager.default.isReadableFile(atPath: url.path),
        let length = UploadSource.fileLength(url)
      else {
        throw SessionFetcherError.bodyUnavailable(description: "cannot read the file \(url.path)")
      }
      return length
    case .fileHandle(let handle):
      do {
        return Int64(try handle.seekToEnd())
      } catch {
        throw SessionFetcherError.bodyUnavailable(
          description: "cannot read the upload file handle (closed, or not readable): \(error)")
      }
    case .provider(let length, _), .fullLengthProvider(let length, _):
      return length
    }
  }

  var isFileURL: Bool {
    if case .file = self { return true }
    return false
  }

  /// A chunk read, and the upload's full length when a provider told it with this chunk.
  struct ReadChunk {
    var body: ChunkBody
    var reportedFullLength: Int64?
  }

  /// Reads `length` bytes at `offset` and calls `respond` (on any thread) with the chunk or an error.
  /// A file slice is read with a file handle at the offset; a file that is sent whole goes by URL.
  func readChunk(
    offset: Int64, length: Int64, totalLength: Int64?,
    respond: @escaping @Sendable (Result<ReadChunk, any Error>) -> Void
  ) {
    // The lifecycle checks the server's numbers before it reads; this keeps a slice or a file
    // offset that could not exist an error, not a trap, whatever asks for it.
    guard offset >= 0, length >= 0, !offset.addingReportingOverflow(length).overflow else {
      respond(
        .failure(
          SessionUploadFetcherError.chunkUnavailable(
            description: "no chunk of \(length) bytes at offset \(offset)")))
      return
    }
    if case .fullLengthProvider(_, let provider) = self {
      LockAudit.userBlock("the upload's data provider")
      provider(offset, length) { data, fullLength, error in
        if let error {
          respond(.failure(error))
          return
        }
        let reported = fullLength >= 0 && totalLength == nil ? fullLength : nil
        respond(
          Self.checkedProviderChunk(
            data, offset: offset, length: length, knownLength: totalLength ?? reported
          ).map { ReadChunk(body: $0, reportedFullLength: reported) })
      }
      return
    }
    readBody(offset: offset, length: length, totalLength: totalLength) { result in
      respond(result.map { ReadChunk(body: $0, reportedFullLength: nil) })
    }
  }

  /// A provider's answer as a chunk: at most `length` bytes; fewer only at the end of the upload
  /// (with a known length, exactly the bytes left).
  private static func checkedProviderChunk(
    _ data: Data?, offset: Int64, length: Int64, knownLength: Int64?
  ) -> Result<ChunkBody, any Error> {
    var data = data ?? Data()
    if Int64(data.count) > length { data = data.prefix(Int(length)) }
    if let knownLength, Int64(data.count) < min(length, max(0, knownLength - offset)) {
      return .failure(
        SessionUploadFetcherError.chunkUnavailable(
          description: "the provider gave \(data.count) of \(length) bytes at offset \(offset)"))
    }
    return .success(.data(data))
  }

  private func readBody(
    offset: Int64, length: Int64, totalLength: Int64?,
    respond: @escaping @Sendable (Result<ChunkBody, any Error>) -> Void
  ) {
    switch self {
    case .data(let data):
      let start = Int(min(offset, Int64(data.count)))
      let end = Int(min(offset + length, Int64(data.count)))
      respond(.success(.data(data.subdata(in: (data.startIndex + start)..<(data.startIndex + end)))))
    case .file(let url):
      if offset == 0, let totalLength, length == totalLength, totalLength > 0 {
        respond(.success(.file(url)))
        return
      }
      respond(Result { .data(try UploadSource.readSlice(of: url, offset: offset, length: length)) })
    case .fileHandle(let handle):
      respond(
        Result {
          .data(
            try UploadSource.readSlice(
              of: handle, offset: offset, length: length,
              name: "the upload file handle (closed, or not readable)"))
        })
    case .fullLengthProvider:
      preconditionFailure("read by readChunk")
    case .provider(let known, let provider):
      LockAudit.userBlock("the upload's data provider")
      provider(offset, length) { data, error in
        if let error {
          respond(.failure(error))
          return
        }
        var data = data ?? Data()
        if Int64(data.count) > length { data = data.prefix(Int(length)) }
        if known != nil && Int64(data.count) < length {
          respond(
            .failure(
              SessionUploadFetcherError.chunkUnavailable(
                description: "the provider gave \(data.count) of \(length) bytes at offset \(offset)")))
          return
        }
        respond(.success(.data(data)))
      }
    }
  }

  private static func readSlice(of url: URL, offset: Int64, length: Int64) throws -> Data {
    let handle: FileHandle
    do {
      handle = try FileHandle(forReadingFrom: url)
    } catch {
      throw SessionUploadFetcherError.chunkUnavailable(description: "cannot open \(url.path): \(error)")
    }
    defer { try? handle.close() }
    return try readSlice(of: handle, offset: offset, length: length, name: url.path)
  }

  /// Reads exactly `length` bytes of `handle` at `offset`; a handle closed meanwhile, or a file
  /// shorter than that, throws ``SessionUploadFetcherError/chunkUnavailable(description:)``.
  private static func readSlice(of handle: FileHandle, offset: Int64, length: Int64, name: String) throws
    -> Data
  {
    do {
      try handle.seek(toOffset: UInt64(offset))
      var slice = Data()
      while Int64(slice.count) < length {
        guard let piece = try handle.read(upToCount: Int(length) - slice.count), !piece.isEmpty else { break }
        slice.append(piece)
      }
      guard Int64(slice.count) == length else {
        throw SessionUploadFetcherError.chunkUnavailable(
          description: "\(name) has \(slice.count) bytes at offset \(offset), not \(length)")
      }
      return slice
    } catch let error as SessionUploadFetcherError {
      throw error
    } catch {
      throw SessionUploadFetcherError.chunkUnavailable(
        description: "cannot read \(name) at offset \(offset): \(error)")
    }
  }
}
