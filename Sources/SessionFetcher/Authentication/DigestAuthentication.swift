import Foundation

/// HTTP Digest authentication (RFC 7616): a server's Digest challenge read, and the `Authorization`
/// value that answers it with a user name and password.
///
/// Supported: `MD5`, `MD5-sess`, `SHA-256` and `SHA-256-sess`; `qop=auth` (and no `qop`, RFC 2069);
/// `userhash`. Not supported, so the challenge cannot be answered: `qop=auth-int` alone, any other
/// algorithm, a challenge without `realm` or `nonce`.
package struct DigestChallenge: Sendable, Equatable {
  /// The hash of a Digest challenge.
  package enum Algorithm: String, Sendable, CaseIterable {
    case md5 = "MD5"
    case md5Session = "MD5-sess"
    case sha256 = "SHA-256"
    case sha256Session = "SHA-256-sess"

    /// Whether A1 is hashed again with the nonces (the `-sess` variants).
    package var isSession: Bool { self == .md5Session || self == .sha256Session }

    /// The algorithm named `name` (case-insensitive), or nil.
    package init?(named name: String) {
      guard let match = Self.allCases.first(where: { $0.rawValue.equalsIgnoringASCIICase(name) }) else {
        return nil
      }
      self = match
    }

    /// The lowercase hexadecimal digest of `text`'s UTF-8 bytes.
    package func hash(_ text: String) -> String {
      switch self {
      case .md5, .md5Session: MessageDigest.md5Hex(text.utf8)
      case .sha256, .sha256Session: MessageDigest.sha256Hex(text.utf8)
      }
    }

    /// Preference when a server offers several: the stronger hash first.
    var strength: Int {
      switch self {
      case .sha256, .sha256Session: 2
      case .md5, .md5Session: 1
      }
    }
  }

  package var realm: String
  package var nonce: String
  package var opaque: String?
  package var algorithm: Algorithm
  /// Whether the server asked for `qop=auth` (else the RFC 2069 answer, without nonce counts).
  package var usesQualityOfProtection: Bool
  /// The server's earlier nonce expired: the credentials were right (`stale=true`).
  package var isStale: Bool
  /// Whether the user name goes hashed (`userhash=true`).
  package var hashesUserName: Bool

  /// The Digest challenge `challenge` describes, or nil when it is not one that can be answered:
  /// another scheme, no realm or nonce, an unknown algorithm, a `qop` without `auth`.
  package init?(_ challenge: AuthenticateChallenge) {
    guard challenge.isScheme("Digest") else { return nil }
    let parameters = challenge.parameters
    guard let realm = parameters["realm"], let nonce = parameters["nonce"], !nonce.isEmpty else { return nil }
    guard let algorithm = Algorithm(named: parameters["algorithm"] ?? "MD5") else { return nil }
    if let qop = parameters["qop"] {
      let options = qop.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
      guard options.contains("auth") else { return nil }
      usesQualityOfProtection = true
    } else {
      // RFC 2069 has no -sess: its A1 needs a cnonce.
      guard !algorithm.isSession else { return nil }
      usesQualityOfProtection = false
    }
    self.realm = realm
    self.nonce = nonce
    self.opaque = parameters["opaque"]
    self.algorithm = algorithm
    self.isStale = parameters["stale"]?.equalsIgnoringASCIICase("true") ?? false
    self.hashesUserName = parameters["userhash"]?.equalsIgnoringASCIICase("true") ?? false
  }

  /// The `response` parameter: the proof that the client knows `password`.
  ///
  /// - Parameters:
  ///   - method: the request's method.
  ///   - uri: the request target as sent (path and query).
  ///   - nonceCount: how many requests this nonce has answered, this one included (from 1).
  ///   - clientNonce: the client's nonce (`cnonce`).
  package func response(
    user: String, password: String, method: String, uri: String, nonceCount: Int, clientNonce: String
  ) -> String {
    var a1 = algorithm.hash("\(user):\(realm):\(password)")
    if algorithm.isSession { a1 = algorithm.hash("\(a1):\(nonce):\(clientNonce)") }
    let a2 = algorithm.hash("\(method):\(uri)")
    guard usesQualityOfProtection else { return algorithm.hash("\(a1):\(nonce):\(a2)") }
    return algorithm.hash("\(a1):\(nonce):\(Self.nonceCountText(nonceCount)):\(clientNonce):auth:\(a2)")
  }

  /// The `Authorization` header value that answers this challenge; nil when the user name or URI
  /// cannot go in a header (a quote-escaped control character).
  package func authorization(
    user: String, password: String, method: String, uri: String, nonceCount: Int, clientNonce: String
  ) -> String? {
    let response = response(
      user: user, password: password, method: method, uri: uri, nonceCount: nonceCount,
      clientNonce: clientNonce)
    let userName = hashesUserName ? algorithm.hash("\(user):\(realm)") : user
    var fields = [
      "username=\(Self.quoted(userName))", "realm=\(Self.quoted(realm))", "nonce=\(Self.quoted(nonce))",
      "uri=\(Self.quoted(uri))", "algorithm=\(algorithm.rawValue)", "response=\(Self.quoted(response))",
    ]
    if usesQualityOfProtection {
      fields += ["qop=auth", "nc=\(Self.nonceCountText(nonceCount))", "cnonce=\(Self.quoted(clientNonce))"]
    }
    if let opaque { fields.append("opaque=\(Self.quoted(opaque))") }
    if hashesUserName { fields.append("userhash=true") }
    let value = "Digest " + fields.joined(separator: ", ")
    return HeaderValue.isPlain(value) ? value : nil
  }

  /// A fresh client nonce: 16 random bytes in hexadecimal.
  package static func makeClientNonce() -> String {
    var generator = SystemRandomNumberGenerator()
    return MessageDigest.hex((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
  }

  static func nonceCountText(_ count: Int) -> String {
    let hex = String(count, radix: 16)
    return String(repeating: "0", count: max(0, 8 - hex.count)) + hex
  }

  static func quoted(_ value: String) -> String {
    var escaped = "\""
    for character in value {
      if character == "\"" || character == "\\" { escaped.append("\\") }
      escaped.append(character)
    }
    return escaped + "\""
  }
}
