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
  /// A number the server sent cannot be true: fail with
  /// ``SessionUploadFetcherError/invalidServerValue(header:value:reason:)``.
  case invalidValue(header: String, value: String, reason: String)
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

  /// What an answer's `X-Goog-Upload-Size-Received` says, checked.
  package enum ReceivedSize: Equatable, Sendable {
    case absent
    case size(Int64)
    /// Not a number the server could truly hold; the decision that ends the upload.
    case invalid(UploadDecision)
  }

  /// The bytes the server says it holds (`X-Goog-Upload-Size-Received`), checked: absent, else
  /// a whole number from `lowest` to `highest` (`highest` nil: no bound known), or invalid.
  ///
  /// The offset comes from outside the process and decides which bytes are read and sent next: a
  /// negative, non-numeric or impossible value must end the upload with an error, never reach the
  /// source (a negative slice traps) nor skip bytes the server never received.
  package static func sizeReceived(
    _ response: HTTPURLResponse?, lowest: Int64, highest: Int64?
  ) -> ReceivedSize {
    guard let raw = header(UploadHeader.sizeReceived, in: response) else { return .absent }
    let text = raw.trimmingCharacters(in: .whitespaces)
    func invalid(_ reason: String) -> ReceivedSize {
      .invalid(.invalidValue(header: UploadHeader.sizeReceived, value: raw, reason: reason))
    }
    func isDigits(_ characters: Substring) -> Bool {
      !characters.isEmpty && characters.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
    if text.hasPrefix("-"), isDigits(text.dropFirst()) {
      return invalid("a byte count below 0")
    }
    guard isDigits(Substring(text)) else { return invalid("not a whole number") }
    guard let size = Int64(text) else { return invalid("beyond any upload's length") }
    if size < lowest {
      return invalid("going back before the \(lowest) bytes the server had acknowledged")
    }
    if let highest, size > highest {
      return invalid("beyond the \(highest) bytes sent")
    }
    return .size(size)
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
    let granularity = header(UploadHeader.granularity, in: response).flatMap {
      Int64($0.trimmingCharacters(in: .whitespaces))
    }
    return .uploadFrom(offset: 0, location: location, granularity: granularity.flatMap { $0 > 0 ? $0 : nil })
  }

  /// The answer to a chunk of `length` bytes sent at `offset` (the bytes the server had
  /// acknowledged before it): the size it says it received lies between the two ends of the chunk.
  package static func chunk(
    _ response: HTTPURLResponse?, offset: Int64, length: Int64, wasFinal: Bool
  ) -> UploadDecision {
    switch status(response) {
    case "final"?:
      return .done
    case "cancelled"?:
      return .protocolError("the server cancelled the upload")
    default:
      let received: Int64?
      switch sizeReceived(response, lowest: offset, highest: offset + length) {
      case .absent: received = nil
      case .size(let size): received = size
      case .invalid(let decision): return decision
      }
      let next = received ?? offset + length
      if wasFinal && next >= offset + length {
        return .protocolError("the server did not finalize the upload")
      }
      return .uploadFrom(offset: next, location: nil, granularity: nil)
    }
  }

  /// The answer to `query`, asked when the server had acknowledged `acknowledged` bytes of an
  /// upload of `totalLength` bytes (nil: not known yet).
  package static func query(
    _ response: HTTPURLResponse?, acknowledged: Int64 = 0, totalLength: Int64? = nil
  ) -> UploadDecision {
    switch status(response) {
    case "final"?:
      return .done
    case "active"?:
      switch sizeReceived(response, lowest: acknowledged, highest: totalLength) {
      case .size(let size):
        return .uploadFrom(offset: size, location: nil, granularity: nil)
      case .absent:
        return .protocolError("the query answer has no size received")
      case .invalid(let decision):
        return decision
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
