import Foundation

/// Assembles ``ParsedResponseHead``s from the lines of libcurl's header callback (each line with its
/// `\r\n`, the blank line ending a head). A value type used by one transfer on the loop thread.
package struct CurlResponseHeadParser {
  private var statusLine: (code: Int, version: String)?
  private var fields: [ParsedResponseHead.Field] = []
  private var namesAreASCII = true

  package init() {}

  /// How many fields a head is given room for when its status line comes.
  static let usualFieldCount = 16

  /// Takes one line; returns the head it completes (interim or final), or nil.
  ///
  /// A line that is not a status line when one is expected is ignored (libcurl only passes lines it
  /// parsed). Folded continuation lines (starting with a space or tab) extend the previous value.
  package mutating func consume(line rawLine: String) -> ParsedResponseHead? {
    var bytes = Array(rawLine.utf8)
    return bytes.withUnsafeMutableBytes { consume(bytes: UnsafeRawBufferPointer($0)) }
  }

  /// ``consume(line:)`` on the bytes libcurl hands over (the engine's path: no `String` is made
  /// of the line, only of the name and the value, and trimming works on bytes).
  package mutating func consume(bytes: UnsafeRawBufferPointer) -> ParsedResponseHead? {
    var end = bytes.count
    while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
    let line = UnsafeRawBufferPointer(rebasing: bytes[0..<end])
    guard let status = statusLine else {
      statusLine = Self.parseStatusLine(line)
      // Room for a usual head's fields at once, not grown one doubling at a time.
      if statusLine != nil { fields.reserveCapacity(Self.usualFieldCount) }
      return nil
    }
    if line.isEmpty {
      let head = ParsedResponseHead(
        statusCode: status.code, httpVersion: status.version, fields: fields, namesAreASCII: namesAreASCII)
      statusLine = nil
      fields = []
      namesAreASCII = true
      return head
    }
    if line[0] == 0x20 || line[0] == 0x09 {
      if !fields.isEmpty {
        let continuation = Self.trimmed(line, from: 0, to: line.count)
        fields[fields.count - 1].value +=
          fields[fields.count - 1].value.isEmpty ? continuation : " " + continuation
      }
      return nil
    }
    guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
    let nameBytes = UnsafeRawBufferPointer(rebasing: line[0..<colon])
    var folder = ParsedResponseHead.NameKeyFolder()
    for byte in nameBytes { folder.add(byte) }
    if !folder.isASCII { namesAreASCII = false }
    let name = String(decoding: nameBytes, as: UTF8.self)
    // A name that is not ASCII may not be valid UTF-8: its key is the decoded name's, as a lookup
    // by that name makes it.
    let nameKey = folder.isASCII ? folder.key : ParsedResponseHead.nameKey(name).key
    fields.append(
      ParsedResponseHead.Field(
        name: name, value: Self.trimmed(line, from: colon + 1, to: line.count), nameKey: nameKey))
    return nil
  }

  /// The bytes of `line[start..<end]` without leading and trailing spaces and tabs, as a string.
  private static func trimmed(_ line: UnsafeRawBufferPointer, from start: Int, to end: Int) -> String {
    var first = start
    var last = end
    while first < last, line[first] == 0x20 || line[first] == 0x09 { first += 1 }
    while last > first, line[last - 1] == 0x20 || line[last - 1] == 0x09 { last -= 1 }
    return String(decoding: UnsafeRawBufferPointer(rebasing: line[first..<last]), as: UTF8.self)
  }

  /// `HTTP/1.1 200 OK`, `HTTP/2 200`, `HTTP/1.0 404 Not Found`: the version (`HTTP/2.0` read as
  /// `HTTP/2`, `HTTP/3.0` as `HTTP/3`) and the status code, read from the bytes; nil for anything
  /// else. Spaces between the parts may repeat; the reason phrase is not needed.
  static func parseStatusLine(_ line: UnsafeRawBufferPointer) -> (code: Int, version: String)? {
    let space = UInt8(ascii: " ")
    var index = 0
    while index < line.count, line[index] != space { index += 1 }
    let version = UnsafeRawBufferPointer(rebasing: line[0..<index])
    guard version.starts(with: "HTTP/".utf8) else { return nil }
    while index < line.count, line[index] == space { index += 1 }
    var code = 0
    var digits = 0
    while index < line.count, line[index] != space {
      let digit = line[index] &- UInt8(ascii: "0")
      // A status code has three digits; nine keep any number well inside `Int`.
      guard digit < 10, digits < 9 else { return nil }
      code = code * 10 + Int(digit)
      digits += 1
      index += 1
    }
    guard digits > 0 else { return nil }
    switch version.count {
    case 6 where version[5] == UInt8(ascii: "2"), 8 where version.elementsEqual("HTTP/2.0".utf8):
      return (code, "HTTP/2")
    case 6 where version[5] == UInt8(ascii: "3"), 8 where version.elementsEqual("HTTP/3.0".utf8):
      return (code, "HTTP/3")
    default:
      return (code, String(decoding: version, as: UTF8.self))
    }
  }
}
