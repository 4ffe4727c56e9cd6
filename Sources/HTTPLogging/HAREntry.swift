import Foundation
import SessionFetcher

/// One HAR 1.2 entry. Optional fields that are nil are left out of its JSON.
///
/// Typed values written by the package's `JSONValue`, not a `[String: Any]` through
/// `JSONSerialization`: on Linux that cost about 3.2 million instructions per entry (and
/// `JSONEncoder` 0.32 million), most of a logged fetch's cost.
struct HAREntry {
  var startedDateTime: String
  var time: Double
  var request: Request
  var response: Response
  var timings: Timings
  var comment: String?
  /// The exchange's error (a custom field: HAR has none for a failed exchange).
  var error: String?
  /// Where the exchange belongs in its run (custom fields for the run's viewer page); nil for an
  /// entry made outside a run.
  var viewer: Viewer?
  /// The server's address (libcurl engine).
  var serverIPAddress: String?

  /// The custom fields the run's viewer page reads (HAR 1.2 allows fields that begin with `_`).
  struct Viewer {
    /// `_fetch`: the fetch's number in the run (its text log is `fetch_<N>.txt`).
    var fetch: Int
    /// `_kind`: `first`, `redirect`, `retry`, `continuation`, or `none` for a fetch that ended
    /// before sending anything.
    var kind: String
    /// `_startedTime`: `startedDateTime` in milliseconds since 1970, to the microsecond.
    var startedTime: Double
    /// `_retryDelay`: the delay in milliseconds before the next attempt, when this one was retried.
    var retryDelay: Double?
    /// `_fetchSummary`: on the first entry of each fetch.
    var summary: FetchSummary?
  }

  /// What a fetch's first entry says about the whole fetch.
  struct FetchSummary {
    /// When the fetch began, in milliseconds since 1970.
    var startedTime: Double
    /// From begin to end, in milliseconds.
    var time: Double
    /// Milliseconds spent waiting for a slot of the service's per-host throttle, when it waited.
    var throttled: Double?
    /// The fetch's text log in the run folder.
    var log: String?
    /// The fetch's error.
    var error: String?
    /// Whether the fetch was stopped.
    var cancelled: Bool
    /// How many entries the fetch has.
    var entries: Int
  }

  struct Request {
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

  struct PostData {
    var mimeType: String
    var text: String
    var comment: String?
    /// `_file`: the body's file in the run folder.
    var file: String?
  }

  struct Response {
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

  struct Content {
    var size: Int
    var mimeType: String
    var text: String?
    /// `base64` when ``text`` holds a binary body's bytes in base64.
    var encoding: String?
    var comment: String?
    /// `_file`: the body's file in the run folder.
    var file: String?
  }

  struct NameValue: Equatable {
    var name: String
    var value: String
  }

  struct Cookie: Equatable {
    var name: String
    var value: String
    var path: String?
    var domain: String?
    var expires: String?
    var httpOnly: Bool?
    var secure: Bool?
  }

  struct Timings {
    /// Waiting for a throttle slot; nil leaves the field out.
    var blocked: Double?
    /// -1 where not applicable, as HAR 1.2 has it; nil leaves the field out (not measured).
    var dns: Double?
    var connect: Double?
    var ssl: Double?
    var send: Double
    var wait: Double
    var receive: Double
  }
}

// MARK: - JSON

extension HAREntry {
  /// The entry as JSON, one line, fields in the order HAR 1.2 lists them.
  var jsonData: Data { Data(json.bytes) }

  var json: JSONValue {
    .compactObject([
      ("startedDateTime", .string(startedDateTime)), ("time", .number(time)), ("request", request.json),
      ("response", response.json), ("cache", .object([])), ("timings", timings.json),
      ("serverIPAddress", serverIPAddress.map(JSONValue.string)),
      ("comment", comment.map(JSONValue.string)), ("_error", error.map(JSONValue.string)),
      ("_fetch", viewer.map { .integer($0.fetch) }), ("_kind", viewer.map { .string($0.kind) }),
      ("_startedTime", viewer.map { .number($0.startedTime) }),
      ("_retryDelay", viewer?.retryDelay.map(JSONValue.number)),
      ("_fetchSummary", viewer?.summary?.json),
    ])
  }
}

extension HAREntry.FetchSummary {
  var json: JSONValue {
    .compactObject([
      ("startedTime", .number(startedTime)), ("time", .number(time)),
      ("throttled", throttled.map(JSONValue.number)), ("log", log.map(JSONValue.string)),
      ("error", error.map(JSONValue.string)), ("cancelled", cancelled ? .bool(true) : nil),
      ("entries", .integer(entries)),
    ])
  }
}

extension HAREntry.Request {
  var json: JSONValue {
    .compactObject([
      ("method", .string(method)), ("url", .string(url)), ("httpVersion", .string(httpVersion)),
      ("cookies", .array(cookies.map(\.json))), ("headers", .array(headers.map(\.json))),
      ("queryString", .array(queryString.map(\.json))), ("postData", postData?.json),
      ("headersSize", .integer(headersSize)), ("bodySize", .integer(bodySize)),
    ])
  }
}

extension HAREntry.PostData {
  var json: JSONValue {
    .compactObject([
      ("mimeType", .string(mimeType)), ("text", .string(text)), ("comment", comment.map(JSONValue.string)),
      ("_file", file.map(JSONValue.string)),
    ])
  }
}

extension HAREntry.Response {
  var json: JSONValue {
    .object([
      ("status", .integer(status)), ("statusText", .string(statusText)),
      ("httpVersion", .string(httpVersion)),
      ("cookies", .array(cookies.map(\.json))), ("headers", .array(headers.map(\.json))),
      ("content", content.json), ("redirectURL", .string(redirectURL)),
      ("headersSize", .integer(headersSize)),
      ("bodySize", .integer(bodySize)),
    ])
  }
}

extension HAREntry.Content {
  var json: JSONValue {
    .compactObject([
      ("size", .integer(size)), ("mimeType", .string(mimeType)), ("text", text.map(JSONValue.string)),
      ("encoding", encoding.map(JSONValue.string)), ("comment", comment.map(JSONValue.string)),
      ("_file", file.map(JSONValue.string)),
    ])
  }
}

extension HAREntry.NameValue {
  var json: JSONValue { .object([("name", .string(name)), ("value", .string(value))]) }
}

extension HAREntry.Cookie {
  var json: JSONValue {
    .compactObject([
      ("name", .string(name)), ("value", .string(value)), ("path", path.map(JSONValue.string)),
      ("domain", domain.map(JSONValue.string)), ("expires", expires.map(JSONValue.string)),
      ("httpOnly", httpOnly.map(JSONValue.bool)), ("secure", secure.map(JSONValue.bool)),
    ])
  }
}

extension HAREntry.Timings {
  var json: JSONValue {
    .compactObject([
      ("blocked", blocked.map(JSONValue.number)), ("dns", dns.map(JSONValue.number)),
      ("connect", connect.map(JSONValue.number)),
      ("send", .number(send)), ("wait", .number(wait)), ("receive", .number(receive)),
      ("ssl", ssl.map(JSONValue.number)),
    ])
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
