import Foundation

/// Responses that no request of the fetcher can have asked for: a `101 Switching Protocols` to a
/// request without `Upgrade` (the bytes after it are not HTTP), and a `206 Partial Content` to a
/// request without `Range` (a part of the resource, not the resource). Either fails the attempt
/// with `URLError(.badServerResponse)` before a byte of its body is used or written.
package enum ResponseSanity {
  /// The error of `status` answered to `request`, nil when the answer is acceptable.
  package static func error(status: Int, request: URLRequest?) -> URLError? {
    switch status {
    case 101 where request?.value(forHTTPHeaderField: "Upgrade") == nil:
      return URLError(
        .badServerResponse, userInfo: info(request, "a 101 Switching Protocols to a request without Upgrade"))
    case 206 where request?.value(forHTTPHeaderField: "Range") == nil:
      return URLError(
        .badServerResponse, userInfo: info(request, "a 206 Partial Content to a request without Range"))
    default:
      return nil
    }
  }

  private static func info(_ request: URLRequest?, _ description: String) -> [String: Any] {
    var info: [String: Any] = [NSLocalizedDescriptionKey: "The server answered with \(description)."]
    if let url = request?.url {
      info[NSURLErrorFailingURLErrorKey] = url
      info[EngineErrorKeys.failingURLString] = url.absoluteString
    }
    return info
  }
}
