import Foundation

/// One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1): its scheme and parameters.
package struct AuthenticateChallenge: Sendable, Equatable {
  /// The scheme as the server spelled it (`Basic`, `Digest`, `Bearer`).
  package var scheme: String
  /// The `name=value` parameters, names lowercased, quoted values unquoted.
  package var parameters: [String: String]

  package init(scheme: String, parameters: [String: String] = [:]) {
    self.scheme = scheme
    self.parameters = parameters
  }

  /// Whether the scheme is `name`, ignoring case.
  package func isScheme(_ name: String) -> Bool { scheme.equalsIgnoringASCIICase(name) }
}

/// Reads `WWW-Authenticate` values: a list of challenges, each a scheme followed by
/// comma-separated `name=value` parameters (token or quoted string) or a token68.
package enum AuthenticateHeader {
  /// The challenges of `value`, in order. Whatever cannot be read is skipped, never trusted: a
  /// parameter without a name, an unterminated quoted string (the challenge is dropped).
  package static func challenges(_ value: String) -> [AuthenticateChallenge] {
    var scanner = Scanner(Array(value.utf8))
    var result: [AuthenticateChallenge] = []
    while true {
      scanner.skip { $0 == UInt8(ascii: ",") || isWhitespace($0) }
      guard !scanner.isAtEnd else { break }
      let scheme = scanner.token()
      guard !scheme.isEmpty else {
        // Not a token where a scheme must be: drop up to the next comma.
        scanner.skip { $0 != UInt8(ascii: ",") }
        continue
      }
      var challenge = AuthenticateChallenge(scheme: scheme)
      var malformed = false
      parameters: while true {
        scanner.skip(isWhitespace)
        let mark = scanner.position
        let name = scanner.token()
        if name.isEmpty { break }
        scanner.skip(isWhitespace)
        guard scanner.peek == UInt8(ascii: "=") else {
          // The next challenge's scheme.
          scanner.position = mark
          break
        }
        scanner.advance()
        scanner.skip(isWhitespace)
        if scanner.peek == UInt8(ascii: "\"") {
          guard let quoted = scanner.quotedString() else {
            malformed = true
            break parameters
          }
          challenge.parameters[name.lowercased()] = quoted
        } else {
          let token = scanner.token()
          if token.isEmpty,
            scanner.peek == UInt8(ascii: "=") || scanner.peek == nil
              || scanner.peek == UInt8(ascii: ",")
          {
            // A token68 (`Negotiate abc==`): not a parameter.
            scanner.skip { $0 == UInt8(ascii: "=") }
          } else {
            challenge.parameters[name.lowercased()] = token
          }
        }
        scanner.skip(isWhitespace)
        guard scanner.peek == UInt8(ascii: ",") else { break }
        scanner.advance()
      }
      if malformed {
        scanner.skip { $0 != UInt8(ascii: ",") }
        continue
      }
      result.append(challenge)
    }
    return result
  }

  static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

  /// RFC 9110 `tchar`.
  static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default:
      return Array("!#$%&'*+-.^_`|~/".utf8).contains(byte)
    }
  }

  private struct Scanner {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position >= bytes.count }
    var peek: UInt8? { isAtEnd ? nil : bytes[position] }
    mutating func advance() { position += 1 }

    mutating func skip(_ predicate: (UInt8) -> Bool) {
      while let byte = peek, predicate(byte) { position += 1 }
    }

    /// A token (the `/` of token68 included); empty when none is here.
    mutating func token() -> String {
      let start = position
      skip(AuthenticateHeader.isTokenByte)
      return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// A quoted string after its opening quote's position, escapes resolved; nil if unterminated.
    mutating func quotedString() -> String? {
      advance()
      var value: [UInt8] = []
      while let byte = peek {
        advance()
        switch byte {
        case UInt8(ascii: "\""):
          return String(decoding: value, as: UTF8.self)
        case UInt8(ascii: "\\"):
          guard let escaped = peek else { return nil }
          advance()
          value.append(escaped)
        default:
          value.append(byte)
        }
      }
      return nil
    }
  }
}
