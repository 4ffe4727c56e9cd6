import Foundation

/// The parts of a request-target: path and decoded query.
struct RequestTarget: Equatable {
  /// The path, as sent; `/` for an absolute-form target without one.
  var path: String
  /// The raw query after `?`, without the `#fragment`, or `nil` when there is no `?`.
  var rawQuery: String?
  var queryItems: [RecordedRequest.QueryItem]

  init(_ target: String) {
    var rest = Substring(target)
    if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
    // Absolute form (a proxy-style request): keep only what follows the authority.
    if let schemeEnd = rest.range(of: "://"), !rest[..<schemeEnd.lowerBound].contains("/") {
      let afterAuthority = rest[schemeEnd.upperBound...]
      if let slash = afterAuthority.firstIndex(where: { $0 == "/" || $0 == "?" }) {
        rest = afterAuthority[slash...]
      } else {
        rest = ""
      }
    }
    if let question = rest.firstIndex(of: "?") {
      path = String(rest[..<question])
      let query = rest[rest.index(after: question)...]
      rawQuery = String(query)
      queryItems = RequestTarget.parseQuery(query)
    } else {
      path = String(rest)
      rawQuery = nil
      queryItems = []
    }
    if path.isEmpty { path = "/" }
  }

  /// The query as a dictionary; the last of repeated names wins.
  var query: [String: String] {
    var result: [String: String] = [:]
    for item in queryItems { result[item.name] = item.value }
    return result
  }

  /// Splits `a=1&b=&c` into items, percent-decoding names and values. `+` stays `+`: URL
  /// builders such as `URLComponents` leave a literal `+` unescaped, and values like base64 or
  /// `Set-Cookie` strings must survive the trip.
  static func parseQuery(_ query: Substring) -> [RecordedRequest.QueryItem] {
    query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
      if let equals = pair.firstIndex(of: "=") {
        return RecordedRequest.QueryItem(
          name: percentDecoded(pair[..<equals]),
          value: percentDecoded(pair[pair.index(after: equals)...]))
      }
      return RecordedRequest.QueryItem(name: percentDecoded(pair), value: "")
    }
  }

  /// Decodes `%XX` escapes; malformed escapes are kept literally; invalid UTF-8 is repaired.
  static func percentDecoded(_ text: Substring) -> String {
    guard text.contains("%") else { return String(text) }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    let utf8 = Array(text.utf8)
    var index = 0
    while index < utf8.count {
      if utf8[index] == UInt8(ascii: "%"), index + 2 < utf8.count,
        let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
      {
        bytes.append(high << 4 | low)
        index += 3
      } else {
        bytes.append(utf8[index])
        index += 1
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
    default: return nil
    }
  }
}
