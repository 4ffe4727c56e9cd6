/// What may go in an HTTP header value as it is.
package enum HeaderValue {
  /// CTL characters other than HTAB (%x00-08, %x0A-1F, %x7F). CR or LF in a value would start
  /// another header line.
  private static func isForbiddenControl(_ byte: UInt8) -> Bool {
    byte < 0x20 && byte != 0x09 || byte == 0x7F
  }

  /// Whether `value` can be sent in a header as it is: no forbidden control character.
  package static func isPlain(_ value: String) -> Bool {
    !value.utf8.contains(where: isForbiddenControl)
  }

  /// Whether two header names (or other HTTP tokens) are equal, ASCII case-insensitively, as HTTP
  /// compares them. Foundation's `caseInsensitiveCompare` folds all of Unicode and costs thousands
  /// of instructions per call on Linux; header names are ASCII.
  package static func namesEqual(_ left: String, _ right: String) -> Bool {
    guard left.utf8.count == right.utf8.count else { return false }
    return zip(left.utf8, right.utf8).allSatisfy { lowercased($0) == lowercased($1) }
  }

  private static func lowercased(_ byte: UInt8) -> UInt8 {
    byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
  }
}
