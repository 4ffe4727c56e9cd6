/// A JSON value written on one line, object keys sorted and slashes not escaped: the log's own
/// writer, for its HAR entries (see ``HAREntry``).
indirect enum JSONValue {
  case string(String)
  case integer(Int)
  /// A number; a value that is not finite is written as 0 (JSON has no infinity or NaN).
  case number(Double)
  case bool(Bool)
  case array([JSONValue])
  /// An object; members whose value is nil are left out. Written with its keys sorted (by their
  /// UTF-8 bytes); `KeyValuePairs`, not a dictionary, so that no key is hashed.
  case object(KeyValuePairs<String, JSONValue?>)

  /// The UTF-8 text of the value.
  var bytes: [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(1024)
    write(into: &output)
    return output
  }

  /// The text of the value, as ``bytes``.
  var text: String { String(decoding: bytes, as: UTF8.self) }

  func write(into output: inout [UInt8]) {
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
      var first = true
      let order = members.indices.sorted {
        members[$0].key.utf8.lexicographicallyPrecedes(members[$1].key.utf8)
      }
      for index in order {
        guard let value = members[index].value else { continue }
        if !first { output.append(UInt8(ascii: ",")) }
        first = false
        Self.write(members[index].key, into: &output)
        output.append(UInt8(ascii: ":"))
        value.write(into: &output)
      }
      output.append(UInt8(ascii: "}"))
    }
  }

  /// A whole number of small magnitude as an integer (`500`, not `500.0`); others in Swift's
  /// shortest form that reads back the same (`0.25`, `1e-05`), which is valid JSON.
  private static func write(_ value: Double, into output: inout [UInt8]) {
    guard value.isFinite else { return output.append(UInt8(ascii: "0")) }
    if value == value.rounded(), abs(value) < 1e15 {
      output.append(contentsOf: String(Int(value)).utf8)
    } else {
      output.append(contentsOf: String(value).utf8)
    }
  }

  /// A JSON string: `"` and `\` escaped, control characters as `\n`, `\r`, `\t`, `\b`, `\f` or
  /// `\u00XX`; everything else as it is (UTF-8).
  private static func write(_ string: String, into output: inout [UInt8]) {
    output.append(UInt8(ascii: "\""))
    defer { output.append(UInt8(ascii: "\"")) }
    // Most strings (names, URLs, dates) have nothing to escape: copied whole.
    guard string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
    else { return output.append(contentsOf: string.utf8) }
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
        let hex = Array("0123456789abcdef".utf8)
        output.append(contentsOf: #"\u00"#.utf8)
        output.append(hex[Int(byte >> 4)])
        output.append(hex[Int(byte & 0x0F)])
      default: output.append(byte)
      }
    }
  }
}
