import Foundation

/// The errors a ``SessionUploadFetcher`` reports itself.
///
/// Besides these, an upload fails with the error of the command that failed: a
/// `SessionFetcherError.status(code:data:)` for an HTTP status (501 when the server breaks the
/// protocol: a start answer without an upload URL, an upload the server cancelled, a query answer
/// without the size received), a `URLError`, or the error a data provider gave.
public enum SessionUploadFetcherError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Retrying stopped: the next delay would have reached
  /// ``SessionUploadFetcher/maxRetryInterval``. `underlying` describes the last failure.
  case retryLimitReached(underlying: String)
  /// A chunk of the upload could not be read: the file shrank or could not be read at an offset,
  /// or a data provider gave fewer bytes than the known length promised.
  case chunkUnavailable(description: String)
  /// The upload URL (given to ``SessionUploadFetcher/init(location:uploadMIMEType:chunkSize:fetcherService:)``,
  /// perhaps restored from disk, or answered by the server's `start`) is not an absolute `http` or
  /// `https` URL with a host and without user information: nothing is sent to it.
  case invalidUploadLocation(String)
  /// The server answered a byte count the upload cannot act on: `header`
  /// (`X-Goog-Upload-Size-Received` or `X-Goog-Upload-Chunk-Granularity`) holds `value`, which is
  /// not a number, is negative, goes back past what the server acknowledged, or lies beyond the
  /// bytes to upload. Nothing more is sent; the server's upload is left as it is.
  case invalidProtocolValue(header: String, value: String)

  public var description: String {
    switch self {
    case .invalidUploadLocation(let location):
      return "The upload URL \(location) is not an http or https URL"
    case .invalidProtocolValue(let header, let value):
      return "The server's \(header) is \"\(value)\", which the upload cannot act on"
    case .retryLimitReached(let underlying):
      return "Retry Limit Reached (last failure: \(underlying))"
    case .chunkUnavailable(let description):
      return "The upload chunk is unavailable: \(description)"
    }
  }
}

extension SessionUploadFetcherError: LocalizedError {
  public var errorDescription: String? { description }
}
