import Foundation
import SessionFetcher

/// What a command's answer means for the upload: pure decisions on status and headers.
package enum UploadDecision: Equatable, Sendable {
  /// The upload URL is known: send chunks from `offset` (0 after a start).
  case uploadFrom(offset: Int64, location: URL?, granularity: Int64?)
  /// The upload is complete.
  case done
  /// The server broke the protocol or cancelled the upload: fail with status 501.
  case protocolError(String)
  /// A byte count in the answer cannot be acted on (see ``UploadNumber``): fail with
  /// ``SessionUploadFetcherError/invalidProtocolValue(header:value:)``.
  case invalidNumber(header: String, value: String)
  /// A chunk was refused with a 4xx (not 404): ask the server where it stands.
  case query
  /// A failure worth a query-and-resume after the backoff, when retrying is enabled.
  case retry
  /// Any other failure: pass it through.
  case fail
}

/// Interprets the answers of the protocol's commands.
package enum UploadResponse {
  /// The value of `name` in `response`'s headers (case-insensitive).
  package static func header(_ name: String, in response: HTTPURLResponse?) -> String? {
    response?.value(forHTTPHeaderField: name)
  }

  /// The upload status header, lowercased.
  static func status(_ response: HTTPURLResponse?) -> String? {
    header(UploadHeader.status, in: response)?.trimmingCharacters(in: .whitespaces).lowercased()
  }

  static func sizeReceived(_ response: HTTPURLResponse?, acknowledged: Int64, ceiling: Int64?)
    -> UploadNumber.Checked
  {
    UploadNumber.sizeReceived(
      header(UploadHeader.sizeReceived, in: response), acknowledged: acknowledged, ceiling: ceiling)
  }

  /// A failed command: query after a chunk's 4xx (not 404), retry after a transient failure,
  /// else fail.
  package static func failure(
    of command: UploadCommand, statusCode: Int?, error: any Error
  ) -> UploadDecision {
    let isChunk = command == .upload || command == .uploadAndFinalize || command == .finalize
    if isChunk, let statusCode, (400..<500).contains(statusCode), statusCode != 404 {
      return .query
    }
    return RetryPolicy.isRetryable(statusCode: statusCode, error: error, method: "PUT") ? .retry : .fail
  }

  /// The answer to `start`.
  package static func start(_ response: HTTPURLResponse?) -> UploadDecision {
    guard status(response) == "active",
      let location = header(UploadHeader.url, in: response).flatMap({ URL(string: $0) })
    else {
      return .protocolError("the start answer has no active status and upload URL")
    }
    switch UploadNumber.granularity(header(UploadHeader.granularity, in: response)) {
    case .absent, .valid(0):
      return .uploadFrom(offset: 0, location: location, granularity: nil)
    case .valid(let granularity):
      return .uploadFrom(offset: 0, location: location, granularity: granularity)
    case .invalid(let header, let value):
      return .invalidNumber(header: header, value: value)
    }
  }

  /// The answer to a chunk of `length` bytes sent at `offset`. A chunk is sent where the server
  /// said it stood, so the size received is from `offset` (acknowledged) through `offset + length`
  /// (all that was sent).
  package static func chunk(
    _ response: HTTPURLResponse?, offset: Int64, length: Int64, wasFinal: Bool
  ) -> UploadDecision {
    switch status(response) {
    case "final"?:
      return .done
    case "cancelled"?:
      return .protocolError("the server cancelled the upload")
    default:
      let next: Int64
      switch sizeReceived(response, acknowledged: offset, ceiling: offset + length) {
      case .absent: next = offset + length
      case .valid(let size): next = size
      case .invalid(let header, let value): return .invalidNumber(header: header, value: value)
      }
      if wasFinal && next >= offset + length {
        return .protocolError("the server did not finalize the upload")
      }
      return .uploadFrom(offset: next, location: nil, granularity: nil)
    }
  }

  /// The answer to `query`. `acknowledged`: the most the server said it held before; `ceiling`:
  /// the most it can hold (the upload's length, or the bytes sent), nil when unknown.
  package static func query(_ response: HTTPURLResponse?, acknowledged: Int64 = 0, ceiling: Int64? = nil)
    -> UploadDecision
  {
    switch status(response) {
    case "final"?:
      return .done
    case "active"?:
      switch sizeReceived(response, acknowledged: acknowledged, ceiling: ceiling) {
      case .absent: return .protocolError("the query answer has no size received")
      case .valid(let size): return .uploadFrom(offset: size, location: nil, granularity: nil)
      case .invalid(let header, let value): return .invalidNumber(header: header, value: value)
      }
    case "cancelled"?:
      return .protocolError("the server cancelled the upload")
    default:
      return .protocolError("the query answer has no upload status")
    }
  }
}

/// The upload URLs commands may go to. An upload URL comes from outside the process (a server's
/// answer, or a file an app stored it in): only an absolute `http` or `https` URL with a host and
/// without user information is used, never a `file:` or other scheme the engines could read or
/// write locally.
package enum UploadLocation {
  package static func isAcceptable(_ url: URL) -> Bool {
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
      let host = url.host, !host.isEmpty, url.user == nil, url.password == nil
    else { return false }
    return true
  }
}
