import Foundation
import SessionFetcher

/// One HAR 1.2 entry, encoded with `JSONEncoder` (keys sorted). Optional fields that are nil are
/// left out.
///
/// A typed entry, not a `[String: Any]` through `JSONSerialization`: on Linux that cost about
/// 3.2 million instructions per entry, most of a logged fetch's cost.
struct HAREntry: Encodable {
  var startedDateTime: String
  var time: Double
  var request: Request
  var response: Response
  var cache = Cache()
  var timings: Timings
  var comment: String?
  /// The exchange's error (a custom field: HAR has none for a failed exchange).
  var error: String?

  enum CodingKeys: String, CodingKey {
    case startedDateTime, time, request, response, cache, timings, comment
    case error = "_error"
  }

  struct Request: Encodable {
    var method: String
    var url: String
    var httpVersion = "HTTP/1.1"
    var cookies: [Cookie]
    var headers: [NameValue]
    var queryString: [NameValue]
    var postData: PostData?
    var headersSize = -1
    var bodySize: Int
  }

  struct PostData: Encodable {
    var mimeType: String
    var text: String
    var comment: String?
  }

  struct Response: Encodable {
    var status: Int
    var statusText: String
    var httpVersion = "HTTP/1.1"
    var cookies: [Cookie]
    var headers: [NameValue]
    var content: Content
    var redirectURL: String
    var headersSize = -1
    var bodySize: Int
  }

  struct Content: Encodable {
    var size: Int
    var mimeType: String
    var text: String?
    var comment: String?
  }

  struct NameValue: Encodable, Equatable {
    var name: String
    var value: String
  }

  struct Cookie: Encodable, Equatable {
    var name: String
    var value: String
    var path: String?
    var domain: String?
    var expires: String?
    var httpOnly: Bool?
    var secure: Bool?
  }

  /// HAR's `cache` object, empty: the fetcher's ETag cache is not described per exchange.
  struct Cache: Encodable {}

  struct Timings: Encodable {
    var send: Double
    var wait: Double
    var receive: Double
  }
}

extension HAREntry.Cookie {
  /// The cookies of a request's `Cookie` header: `a=1; b=2`.
  static func fromCookieHeader(_ value: String) -> [HAREntry.Cookie] {
    value.split(separator: ";").compactMap { pair in
      guard let (name, value) = nameAndValue(pair) else { return nil }
      return HAREntry.Cookie(name: name, value: value)
    }
  }

  /// The cookies a response's `Set-Cookie` header sets (several may be joined with commas), with
  /// the attributes HAR describes. `Expires` is given in ISO 8601 when it is a valid cookie date.
  static func fromSetCookieHeader(_ value: String) -> [HAREntry.Cookie] {
    SetCookieParser.splitJoinedHeader(value).compactMap { line in
      let parts = line.split(separator: ";", omittingEmptySubsequences: false)
      guard let first = parts.first, let (name, value) = nameAndValue(first) else { return nil }
      var cookie = HAREntry.Cookie(name: name, value: value)
      for attribute in parts.dropFirst() {
        let (key, argument) = nameAndValue(attribute) ?? (trimmed(attribute), "")
        switch key.lowercased() {
        case "path": cookie.path = argument
        case "domain": cookie.domain = argument
        case "expires": cookie.expires = CookieDate.parse(argument).map(LogDates.iso8601)
        case "httponly": cookie.httpOnly = true
        case "secure": cookie.secure = true
        default: break
        }
      }
      return cookie
    }
  }

  /// `name=value` split at the first `=`, both trimmed; nil without `=` or with an empty name.
  private static func nameAndValue(_ pair: Substring) -> (String, String)? {
    guard let equals = pair.firstIndex(of: "=") else { return nil }
    let name = trimmed(pair[..<equals])
    guard !name.isEmpty else { return nil }
    return (name, trimmed(pair[pair.index(after: equals)...]))
  }

  private static func trimmed(_ text: Substring) -> String {
    text.trimmingCharacters(in: .whitespaces)
  }
}
