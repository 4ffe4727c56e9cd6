import Foundation

/// The rule every request passes before any byte of it is sent, on every engine: its method and
/// header names are RFC 9110 tokens, and its header values hold no control character.
///
/// Both engines write a request's method and header lines as they are, so a CR or LF in any of them
/// would end the line early and let the rest become another header, or another request (request
/// splitting); a `:` in a header name would make the rest of the name a value. Nothing is rewritten
/// or dropped: a request that breaks the rule fails when the fetch begins with
/// ``SessionFetcherError/invalidConfiguration(_:)`` naming the field, before any connection.
///
/// - A **method** and a **header name** are non-empty tokens: ASCII letters, digits and
///   ``tokenSymbols`` only (RFC 9110 §5.6.2). Case is kept as given.
/// - A **header value** holds no ASCII control character (U+0000–U+001F, among them CR, LF and
///   NUL) other than horizontal tab, no DEL (U+007F) and no C1 control (U+0080–U+009F). Other
///   non-ASCII characters are sent as UTF-8.
///
/// The checks work on Unicode scalars: `"\r\n"` is one `Character` in Swift, which a test of
/// `Character`s against `"\r"` and `"\n"` misses.
public enum RequestValidation {
  /// The symbols a token may hold besides ASCII letters and digits (RFC 9110 `tchar`).
  public static let tokenSymbols = "!#$%&'*+-.^_`|~"

  /// Whether `string` is a non-empty RFC 9110 token, as a method or header name must be.
  public static func isToken(_ string: String) -> Bool {
    guard !string.utf8.isEmpty else { return false }
    return string.utf8.allSatisfy(isTokenByte)
  }

  /// Whether `value` may be sent as a header value: no control character but horizontal tab.
  public static func isValidHeaderValue(_ value: String) -> Bool {
    // Fast path: printable ASCII and tab, what nearly every value is.
    if value.utf8.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 }) { return true }
    return value.unicodeScalars.allSatisfy { scalar in
      let code = scalar.value
      return code == 0x09 || (code >= 0x20 && code < 0x7F) || code > 0x9F
    }
  }

  /// The problem with `request`'s method or headers, naming the field, or nil when it may be sent.
  ///
  /// A header value is never quoted in the text (it may be a secret); a name or method is, with its
  /// control characters escaped and cut to 64 characters.
  public static func problem(in request: URLRequest) -> String? {
    if let method = request.httpMethod, !isToken(method) {
      return "the HTTP method \(quoted(method)) is not an RFC 9110 token"
    }
    guard let headers = request.allHTTPHeaderFields else { return nil }
    for (name, value) in headers {
      if !isToken(name) {
        return "the header name \(quoted(name)) is not an RFC 9110 token"
      }
      if !isValidHeaderValue(value) {
        return "the value of header \(quoted(name)) holds a control character (CR, LF, NUL or another)"
      }
    }
    return nil
  }

  /// Throws ``SessionFetcherError/invalidConfiguration(_:)`` when `request` breaks the rule (see
  /// ``problem(in:)``).
  public static func check(_ request: URLRequest) throws(SessionFetcherError) {
    if let problem = problem(in: request) { throw SessionFetcherError.invalidConfiguration(problem) }
  }

  private static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default:
      return tokenSymbols.utf8.contains(byte)
    }
  }

  /// `text` in double quotes for an error message: controls, quotes and backslashes escaped, at
  /// most 64 scalars.
  static func quoted(_ text: String) -> String {
    var result = "\""
    for (index, scalar) in text.unicodeScalars.enumerated() {
      if index == 64 {
        result += "…"
        break
      }
      switch scalar.value {
      case 0x0D: result += "\\r"
      case 0x0A: result += "\\n"
      case 0x09: result += "\\t"
      case 0x22: result += "\\\""
      case 0x5C: result += "\\\\"
      case 0..<0x20, 0x7F...0x9F: result += "\\u{" + String(scalar.value, radix: 16) + "}"
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result + "\""
  }
}
