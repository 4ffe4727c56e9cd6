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
}
