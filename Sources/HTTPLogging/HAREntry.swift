import Foundation
import SessionFetcher

/// One HAR 1.2 entry. Optional fields that are nil are left out of its JSON.
///
/// Typed values written straight into the package's `JSONWriter`, not a `[String: Any]` through
/// `JSONSerialization` (on Linux most of a logged fetch's cost, and `JSONEncoder` still several
/// times this) nor a `JSONValue` tree built first.
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
    /// The status the caller got (not the last Range window's `206`), when a response came.
    var status: Int?
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

/// Each part writes itself straight into a ``JSONWriter``, fields in the order HAR 1.2 lists them,
/// optional fields left out when nil.
extension HAREntry {
  /// The entry as JSON, one line.
  var jsonData: Data {
    var writer = JSONWriter(capacity: 2048)
    write(to: &writer)
    return Data(writer.bytes)
  }

  func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.field("startedDateTime", string: startedDateTime)
    writer.field("time", number: time)
    writer.key("request")
    request.write(to: &writer)
    writer.key("response")
    response.write(to: &writer)
    writer.key("cache")
    writer.beginObject()
    writer.endObject()
    writer.key("timings")
    timings.write(to: &writer)
    writer.field("serverIPAddress", string: serverIPAddress)
    writer.field("comment", string: comment)
    writer.field("_error", string: error)
    if let viewer {
      writer.field("_fetch", integer: viewer.fetch)
      writer.field("_kind", string: viewer.kind)
      writer.field("_startedTime", number: viewer.startedTime)
      writer.field("_retryDelay", number: viewer.retryDelay)
      if let summary = viewer.summary {
        writer.key("_fetchSummary")
        summary.write(to: &writer)
      }
    }
    writer.endObject()
  }

  /// `name` as an array of `elements`, each written by `write`.
  fileprivate static func array<Element>(
    _ name: String, _ elements: [Element], to writer: inout JSONWriter,
    _ write: (Element, inout JSONWriter) -> Void
  ) {
    writer.key(name)
    writer.beginArray()
    for element in elements { write(element, &writer) }
    writer.endArray()
  }
}

extension HAREntry.FetchSummary {
  func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.field("startedTime", number: startedTime)
    writer.field("time", number: time)
    writer.field("throttled", number: throttled)
    writer.field("log", string: log)
    writer.field("error", string: error)
    writer.field("cancelled", bool: cancelled ? true : nil)
    writer.field("status", integer: status)
    writer.field("entries", integer: entries)
    writer.endObject()
  }
}

extension HAREntry.Request {
  func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.field("method", string: method)
    writer.field("url", string: url)
    writer.field("httpVersion", string: httpVersion)
    HAREntry.array("cookies", cookies, to: &writer) { $0.write(to: &$1) }
    HAREntry.array("headers", headers, to: &writer) { $0.write(to: &$1) }
    HAREntry.array("queryString", queryString, to: &writer) { $0.write(to: &$1) }
    if let postData {
      writer.key("postData")
      postData.write(to: &writer)
    }
    writer.field("headersSize", integer: headersSize)
    writer.field("bodySize", integer: bodySize)
    writer.endObject()
  }
}

extension HAREntry.PostData {
  func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.field("mimeType", string: mimeType)
    writer.field("text", string: text)
    writer.field("comment", string: comment)
    writer.field("_file", string: file)
    writer.endObject()
  }
}

extension HAREntry.Response {
  func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.field("status", integer: status)
    writer.field("statusText", string: statusText)
    writer.field("httpVersion", string: httpVersion)
    HAREntry.array("cookies", cookies, to: &writer) { $0.write(to: &$1) }
    HAREntry.array("headers", headers, to: &writer) { $0.write(to: &$1) }
    writer.key("content")
    content.write(to: &writer)
    writer.field("redirectURL", string: redirectURL)
    writer.field("headersSize", integer: headersSize)
    writer.field("bodySize", integer: bodySize)
    writer.endObject()
  }
}

extension HAREntry.Content {
  func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.field("size", integer: size)
    writer.field("mimeType", string: mimeType)
    writer.field("text", string: text)
    writer.field("encoding", string: encoding)
    writer.field("comment", string: comment)
    writer.field("_file", string: file)
    writer.endObject()
  }
}

extension HAREntry.NameValue {
  func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.field("name", string: name)
    writer.field("value", string: value)
    writer.endObject()
  }
}

extension HAREntry.Cookie {
  func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.field("name", string: name)
    writer.field("value", string: value)
    writer.field("path", string: path)
    writer.field("domain", string: domain)
    writer.field("expires", string: expires)
    writer.field("httpOnly", bool: httpOnly)
    writer.field("secure", bool: secure)
    writer.endObject()
  }
}

extension HAREntry.Timings {
  func write(to writer: inout JSONWriter) {
    writer.beginObject()
    writer.field("blocked", number: blocked)
    writer.field("dns", number: dns)
    writer.field("connect", number: connect)
    writer.field("send", number: send)
    writer.field("wait", number: wait)
    writer.field("receive", number: receive)
    writer.field("ssl", number: ssl)
    writer.endObject()
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
