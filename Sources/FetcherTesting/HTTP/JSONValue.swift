/// A tiny JSON builder with deterministic key order (insertion order), for the built-in routes'
/// bodies. Tests compare these bodies textually, so the order matters.
enum JSONValue: Equatable {
  case string(String)
  case int(Int)
  case bool(Bool)
  case object([(String, JSONValue)])

  static func == (left: JSONValue, right: JSONValue) -> Bool { left.text == right.text }

  /// Compact JSON text.
  var text: String {
    switch self {
    case .string(let string): return JSONValue.quoted(string)
    case .int(let int): return String(int)
    case .bool(let bool): return bool ? "true" : "false"
    case .object(let members):
      return "{" + members.map { JSONValue.quoted($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
    }
  }

  private static func quoted(_ string: String) -> String {
    var result = "\""
    for scalar in string.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result + "\""
  }
}
