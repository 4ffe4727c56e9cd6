import Foundation

/// A resumable upload as ``TestServer`` holds it: what its `*.location` start declared and the
/// bytes its chunks delivered, assembled in offset order.
///
/// ```swift
/// let upload = try #require(server.resumableUpload(path: "/file.upload"))
/// #expect(upload.status == .final)
/// #expect(upload.checksum == TestServer.checksum(sentData))
/// ```
public struct ResumableUpload: Sendable, Equatable {
  /// The state of an upload, as `X-Goog-Upload-Status` reports it.
  public enum Status: String, Sendable, Equatable {
    /// Started, taking chunks.
    case active
    /// Finalized: complete.
    case final
    /// Cancelled by a `cancel` command.
    case cancelled
  }

  /// The upload's path, ending in `.upload` (the start's path with `.location` replaced).
  public var path: String
  /// The start's `X-Goog-Upload-Content-Type`.
  public var contentType: String
  /// The start's `X-Goog-Upload-Content-Length`; -1 when the length was unknown.
  public var declaredLength: Int64
  /// The granularity the server announced (from the start's `GTM-Upload-Granularity-Request`).
  public var granularity: Int64?
  /// The body of the start request (the upload's metadata).
  public var metadata: Data
  /// The bytes received so far, in offset order.
  public var body = Data()
  /// Where the upload stands.
  public var status = Status.active
  /// How many chunk commands (`upload`, `finalize`) arrived, accepted or not.
  public var chunkRequests = 0

  /// The FNV-1a 64 checksum of ``body`` (see ``TestServer/checksum(_:)``).
  public var checksum: String { TestServer.checksum(body) }

  init(path: String, contentType: String, declaredLength: Int64, granularity: Int64?, metadata: Data) {
    self.path = path
    self.contentType = contentType
    self.declaredLength = declaredLength
    self.granularity = granularity
    self.metadata = metadata
  }
}

extension TestServer {
  /// The resumable upload whose upload path (ending in `.upload`) is `path`, or `nil` when no
  /// `*.location` start created it. A query in `path` is ignored.
  public func resumableUpload(path: String) -> ResumableUpload? {
    core.resumableUploads[RequestTarget(path).path]
  }

  /// The `X-Goog-Upload-Command` of every recorded request to `path` (a query is ignored), in
  /// arrival order, with the request's `X-Goog-Upload-Offset` (nil when absent) and body length.
  public func uploadCommands(path: String) -> [(command: String, offset: Int64?, length: Int)] {
    requests(path: path).compactMap { request in
      guard let command = request.header("X-Goog-Upload-Command") else { return nil }
      return (command, request.header("X-Goog-Upload-Offset").flatMap { Int64($0) }, request.bodyLength)
    }
  }
}
