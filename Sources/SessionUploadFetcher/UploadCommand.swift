import Foundation

/// A command of the resumable upload protocol, sent as `X-Goog-Upload-Command`.
public enum UploadCommand: String, Sendable, Hashable, CaseIterable {
  /// Creates the upload; the answer carries the upload URL.
  case start
  /// Sends a chunk that is not the last.
  case upload
  /// Sends the last chunk and completes the upload.
  case uploadAndFinalize = "upload, finalize"
  /// Completes the upload without bytes (everything was already sent).
  case finalize
  /// Asks how many bytes the server holds.
  case query
  /// Abandons the upload.
  case cancel
}

/// The header names of the protocol.
enum UploadHeader {
  static let protocolName = "X-Goog-Upload-Protocol"
  static let command = "X-Goog-Upload-Command"
  static let contentType = "X-Goog-Upload-Content-Type"
  static let contentLength = "X-Goog-Upload-Content-Length"
  static let offset = "X-Goog-Upload-Offset"
  static let url = "X-Goog-Upload-URL"
  static let status = "X-Goog-Upload-Status"
  static let sizeReceived = "X-Goog-Upload-Size-Received"
  static let granularity = "X-Goog-Upload-Chunk-Granularity"
}
