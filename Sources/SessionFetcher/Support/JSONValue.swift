/// A JSON value written compactly on one line, object members in the order given: the package's
/// own small writer, for the test server's bodies and the HAR log. Values compare by their text.
///
/// Written by hand, not with `JSONSerialization` or `JSONEncoder`: on Linux either costs several
/// times as much for one HAR entry.
package indirect enum JSONValue: Equatable, Sendable {
  case string(String)
  case integer(Int)
  /// A number; a value that is not finite is written as 0 (JSON has no infinity or NaN).
  case number(Double)
  case bool(Bool)
  case array([JSONValue])
  /// An object; its members in this order.
  case object([(String, JSONValue)])

  /// An object of the members whose value is not nil, in order (HAR leaves absent fields out).
  package static func compactObject(_ members: [(String, JSONValue?)]) -> JSONValue {
    .object(members.compactMap { name, value in value.map { (name, $0) } })
  }

  package static func == (left: JSONValue, right: JSONValue) -> Bool { left.bytes == right.bytes }

  /// The UTF-8 text of the value.
  package var bytes: [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(1024)
    write(into: &output)
    return output
  }

  /// The text of the value, as ``bytes``.
  package var text: String { String(decoding: bytes, as: UTF8.self) }

  fileprivate func write(into output: inout [UInt8]) {
    switch self {
    case .string(let string):
      Self.write(string, into: &output)
    case .integer(let value):
      output.append(contentsOf: String(value).utf8)
    case .number(let value):
      Self.write(value, into: &output)
    case .bool(let value):
      output.append(contentsOf: (value ? "true" : "false").utf8)
    case .array(let elements):
      output.append(UInt8(ascii: "["))
      for (index, element) in elements.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        element.write(into: &output)
      }
      output.append(UInt8(ascii: "]"))
    case .object(let members):
      output.append(UInt8(ascii: "{"))
      for (index, (name, value)) in members.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        Self.write(name, into: &output)
        output.append(UInt8(ascii: ":"))
        value.write(into: &output)
      }
      output.append(UInt8(ascii: "}"))
    }
  }

  /// A whole number of small magnitude as an integer (`500`, not `500.0`); others in Swift's
  /// shortest form that reads back the same (`0.25`, `1e-05`), which is valid JSON.
  fileprivate static func write(_ value: Double, into output: inout [UInt8]) {
    guard value.isFinite else { return output.append(UInt8(ascii: "0")) }
    if value == value.rounded(), abs(value) < 1e15 {
      output.append(contentsOf: String(Int(value)).utf8)
    } else {
      output.append(contentsOf: String(value).utf8)
    }
  }

  private static let hexDigits = Array("0123456789abcdef".utf8)

  /// A JSON string: `"` and `\` escaped, control characters as `\n`, `\r`, `\t`, `\b`, `\f` or
  /// `\u00XX`; everything else as it is (UTF-8, `/` included).
  fileprivate static func write(_ string: String, into output: inout [UInt8]) {
    output.append(UInt8(ascii: "\""))
    defer { output.append(UInt8(ascii: "\"")) }
    // Most strings (names, URLs, dates) have nothing to escape: copied whole. Scanned through a
    // buffer pointer: through `String.UTF8View`, the scan cost more than the rest of the writer.
    var copied = string
    let isPlain = copied.withUTF8 { bytes -> Bool in
      for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
        return false
      }
      output.append(contentsOf: bytes)
      return true
    }
    if isPlain { return }
    for byte in string.utf8 {
      switch byte {
      case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
      case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
      case 0x0A: output.append(contentsOf: #"\n"#.utf8)
      case 0x0D: output.append(contentsOf: #"\r"#.utf8)
      case 0x09: output.append(contentsOf: #"\t"#.utf8)
      case 0x08: output.append(contentsOf: #"\b"#.utf8)
      case 0x0C: output.append(contentsOf: #"\f"#.utf8)
      case 0..<0x20:
        output.append(contentsOf: #"\u00"#.utf8)
        output.append(hexDigits[Int(byte >> 4)])
        output.append(hexDigits[Int(byte & 0x0F)])
      default: output.append(byte)
      }
    }
  }
}

/// Writes JSON text value by value, as ``JSONValue`` would write the same value, without building
/// a ``JSONValue`` first: for the HAR log, where making and freeing the tree of each entry cost more
/// than writing it. Commas between members and elements are written for you.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.field("status", integer: 200)
/// writer.field("comment", string: nil)  // left out
/// writer.endObject()
/// // writer.bytes: {"status":200}
/// ```
package struct JSONWriter {
  /// The text written so far.
  package private(set) var bytes: [UInt8] = []
  /// Whether the next value or member follows another in the same object or array.
  private var needsComma = false

  package init(capacity: Int = 1024) {
    bytes.reserveCapacity(capacity)
  }

  private mutating func separate() {
    if needsComma { bytes.append(UInt8(ascii: ",")) }
  }

  package mutating func beginObject() {
    separate()
    bytes.append(UInt8(ascii: "{"))
    needsComma = false
  }

  package mutating func endObject() {
    bytes.append(UInt8(ascii: "}"))
    needsComma = true
  }

  package mutating func beginArray() {
    separate()
    bytes.append(UInt8(ascii: "["))
    needsComma = false
  }

  package mutating func endArray() {
    bytes.append(UInt8(ascii: "]"))
    needsComma = true
  }

  /// A member's name; its value follows.
  package mutating func key(_ name: String) {
    separate()
    JSONValue.write(name, into: &bytes)
    bytes.append(UInt8(ascii: ":"))
    needsComma = false
  }

  package mutating func string(_ value: String) {
    separate()
    JSONValue.write(value, into: &bytes)
    needsComma = true
  }

  package mutating func integer(_ value: Int) {
    separate()
    bytes.append(contentsOf: String(value).utf8)
    needsComma = true
  }

  package mutating func number(_ value: Double) {
    separate()
    JSONValue.write(value, into: &bytes)
    needsComma = true
  }

  package mutating func bool(_ value: Bool) {
    separate()
    bytes.append(contentsOf: (value ? "true" : "false").utf8)
    needsComma = true
  }

  package mutating func value(_ value: JSONValue) {
    separate()
    value.write(into: &bytes)
    needsComma = true
  }

  /// The member `name` when `value` is not nil; nothing otherwise.
  package mutating func field(_ name: String, string value: String?) {
    guard let value else { return }
    key(name)
    string(value)
  }

  /// The member `name` when `value` is not nil; nothing otherwise.
  package mutating func field(_ name: String, integer value: Int?) {
    guard let value else { return }
    key(name)
    integer(value)
  }

  /// The member `name` when `value` is not nil; nothing otherwise.
  package mutating func field(_ name: String, number value: Double?) {
    guard let value else { return }
    key(name)
    number(value)
  }

  /// The member `name` when `value` is not nil; nothing otherwise.
  package mutating func field(_ name: String, bool value: Bool?) {
    guard let value else { return }
    key(name)
    bool(value)
  }
}
