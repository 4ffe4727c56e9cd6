import Foundation

/// A part's header block as the original writes it: `Name: value\r\n` per header, names sorted
/// case-insensitively, then the empty line that ends the headers.
enum HeaderBlock {
  /// The header names in the order they are written: case-insensitive order as Foundation's
  /// `caseInsensitiveCompare:` (the original's sort), ties broken by the exact string so the order
  /// never depends on dictionary iteration.
  static func sortedNames(_ headers: [String: String]) -> [String] {
    headers.keys.sorted { lhs, rhs in
      switch lhs.compare(rhs, options: .caseInsensitive) {
      case .orderedAscending: return true
      case .orderedDescending: return false
      case .orderedSame: return lhs < rhs
      }
    }
  }

  /// The bytes of the header block, ending with the blank line (`\r\n` alone for no headers).
  static func encode(_ headers: [String: String]) -> Data {
    var text = ""
    for name in sortedNames(headers) {
      text += "\(name): \(headers[name]!)\r\n"
    }
    text += "\r\n"
    return Data(text.utf8)
  }

  /// Throws ``MIMEDocumentError/invalidHeader(name:)`` for a name with a colon, CR or LF, or a value
  /// with CR or LF: the original asserts on these in debug builds; here they fail generation instead of
  /// producing a document whose framing a reader would misparse.
  static func validate(_ headers: [String: String]) throws {
    for (name, value) in headers {
      if name.utf8.contains(where: { $0 == UInt8(ascii: ":") || isLineBreak($0) })
        || value.utf8.contains(where: isLineBreak)
      {
        throw MIMEDocumentError.invalidHeader(name: name)
      }
    }
  }

  /// CR or LF: the bytes that would end a header line or a boundary line early.
  static func isLineBreak(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")
  }
}
