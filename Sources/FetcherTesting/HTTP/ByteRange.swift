/// A `Range: bytes=…` request header, resolved against a representation's length
/// (RFC 9110 §14.1). Only a single range is honoured; anything else is ignored.
enum ByteRange: Equatable {
  /// Ignore the header and send the whole representation (malformed, multiple ranges, other unit).
  case none
  /// No byte of the range exists: answer 416.
  case unsatisfiable
  /// Send these bytes with 206.
  case range(ClosedRange<Int>)

  static func parse(_ header: String, length: Int) -> ByteRange {
    let value = header.trimmingHTTPWhitespace()
    guard value.lowercased().hasPrefix("bytes=") else { return .none }
    let spec = value.dropFirst("bytes=".count).trimmingCharacters()
    guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .none }
    let firstText = spec[..<dash].trimmingCharacters()
    let lastText = spec[spec.index(after: dash)...].trimmingCharacters()
    if firstText.isEmpty {
      // Suffix range: the last N bytes.
      guard let suffix = Int(lastText), suffix >= 0 else { return .none }
      guard suffix > 0, length > 0 else { return .unsatisfiable }
      return .range(max(0, length - suffix)...(length - 1))
    }
    guard let first = Int(firstText), first >= 0 else { return .none }
    var last = length - 1
    if !lastText.isEmpty {
      guard let parsed = Int(lastText), parsed >= first else { return .none }
      last = min(parsed, length - 1)
    }
    guard first < length else { return .unsatisfiable }
    return .range(first...last)
  }
}

/// Entity-tag comparisons for conditional requests (RFC 9110 §8.8.3).
enum EntityTag {
  /// Whether an `If-None-Match` list contains `*` or a tag whose opaque part is `tag`
  /// (weak comparison: `W/` prefixes are ignored on both sides).
  static func list(_ list: String, weaklyMatches tag: String) -> Bool {
    for element in list.split(separator: ",") {
      var candidate = Substring(element.trimmingCharacters())
      if candidate == "*" { return true }
      if candidate.hasPrefix("W/") { candidate = candidate.dropFirst(2) }
      if candidate == "\"\(tag)\"" { return true }
    }
    return false
  }
}

extension StringProtocol {
  /// Removes leading and trailing spaces and tabs.
  fileprivate func trimmingCharacters() -> String {
    String(self).trimmingHTTPWhitespace()
  }
}
