import Foundation

/// The routes that answer with a `Content-Encoding` (see ``ContentCoding``): `coding` is `gzip`
/// (the default) or `deflate`.
enum EncodingRoutes {
  /// `/encoded?bytes=N&coding=…[&chunked=1]`: `patternBytes(count: N)` encoded.
  static func encoded(_ request: RecordedRequest) -> ResponsePlan {
    guard let coding = coding(of: request) else { return BuiltInRoutes.badRequest("unknown coding") }
    let count = max(0, request.intParameter("bytes", default: 1024))
    let body = coding.encode(TestServer.patternBytes(count: count))
    var plan = ResponsePlan(status: 200, headers: headers(coding), body: .data(body))
    if request.flagParameter("chunked") { plan.chunkSize = 4096 }
    return plan
  }

  /// `/bomb?decoded=N&coding=…[&chunked=1]`: a compression bomb that decodes to at least N zero
  /// bytes (default 1 GiB) from about N / 159 bytes.
  static func bomb(_ request: RecordedRequest) -> ResponsePlan {
    guard let coding = coding(of: request) else { return BuiltInRoutes.badRequest("unknown coding") }
    let decoded = max(0, request.intParameter("decoded", default: 1 << 30))
    let units = max(0, (decoded - ContentCoding.bombDecodedLength(units: 0) + 2063) / 2064)
    let parts = coding.bomb
    var plan = ResponsePlan(
      status: 200, headers: headers(coding),
      body: .repeating(prefix: parts.prefix, unit: parts.unit, times: units, suffix: parts.suffix))
    if request.flagParameter("chunked") { plan.chunkSize = 16_384 }
    return plan
  }

  /// `/gzip-members`: gzip members of one byte each (`a`), chunked, without end: the exchange ends
  /// when the client leaves or the server stops.
  static func endlessMembers() -> ResponsePlan {
    let member = ContentCoding.gzip.encode(Data("a".utf8))
    var plan = ResponsePlan(
      status: 200, headers: headers(.gzip),
      body: .repeating(prefix: Data(), unit: member, times: Int.max / (2 * member.count), suffix: Data()))
    plan.chunkSize = 16_384
    return plan
  }

  /// `/corrupt-encoding?coding=…[&truncate=1]`: a body that does not decode — a reserved block type
  /// after a correct header, or with `truncate=1` the first half of a valid 64 KiB body, as a
  /// complete HTTP message.
  static func corrupt(_ request: RecordedRequest) -> ResponsePlan {
    guard let coding = coding(of: request) else { return BuiltInRoutes.badRequest("unknown coding") }
    var body = coding.corrupt
    if request.flagParameter("truncate") {
      let whole = coding.encode(TestServer.patternBytes(count: 65_536))
      body = whole.prefix(whole.count / 2)
    }
    return ResponsePlan(status: 200, headers: headers(coding), body: .data(body))
  }

  private static func coding(of request: RecordedRequest) -> ContentCoding? {
    ContentCoding(rawValue: request.query["coding"]?.lowercased() ?? "gzip")
  }

  private static func headers(_ coding: ContentCoding) -> [HTTPHeader] {
    [
      HTTPHeader(name: "Content-Type", value: "application/octet-stream"),
      HTTPHeader(name: "Content-Encoding", value: coding.rawValue),
    ]
  }
}
