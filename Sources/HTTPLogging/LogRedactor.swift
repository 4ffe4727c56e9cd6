import Foundation

/// Decides which parts of a logged fetch are secrets and replaces them with a marker.
///
/// Redaction works in two passes over one fetch:
/// 1. **Find and replace by name**: values of sensitive headers (``sensitiveHeaderNames``, and any
///    header whose name looks like a secret), query items, `application/x-www-form-urlencoded`
///    fields, JSON keys (at any depth), `multipart/…` parts (by their `Content-Disposition` name), XML
///    elements and XML attributes whose names look like secrets (see ``isSensitiveName(_:)``), and
///    parameters named exactly as in ``sensitiveExactNames`` (`code`). `Authorization` keeps its
///    scheme (`Bearer _snip_`), `Cookie` and `Set-Cookie` keep cookie names and attributes. A JSON
///    Web Token is a secret wherever it is, whatever its name. A URL that does not parse keeps only
///    its scheme, host and path.
/// 2. **Scrub**: every secret value found in pass 1 (at least ``minimumScrubbedLength`` characters)
///    is replaced wherever else it appears in that fetch's output — URLs, other headers, request and
///    response bodies, error text — because servers echo what they are sent.
///
/// A value type without I/O; ``SessionFetcher/SessionFetcher/logRedactor`` holds the one logging uses.
public struct LogRedactor: Sendable, Equatable {
  /// What replaces a secret. Default `_snip_`, as in the original GTMSessionFetcher logs.
  public var marker: String = "_snip_"

  /// Header names (case-insensitive) whose values are always secrets. Default: `Authorization`,
  /// `Proxy-Authorization`, `Cookie`, `Set-Cookie`, `X-Api-Key`, `X-Auth-Token`, `X-Access-Token`,
  /// `X-CSRF-Token`, `X-XSRF-Token`, `X-Goog-Api-Key`, `X-Amz-Security-Token`, `Api-Key`.
  public var sensitiveHeaderNames: Set<String> = [
    "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token",
    "x-access-token", "x-csrf-token", "x-xsrf-token", "x-goog-api-key", "x-amz-security-token", "api-key",
  ]

  /// Name parts that mark a query item, form field, JSON key, multipart part, XML element or
  /// attribute, or header as secret (lowercase).
  ///
  /// An entry of five or more characters matches anywhere in the name with separators removed
  /// (`token` matches `access_token` and `idToken`); a shorter entry must be a whole word of the
  /// name (`key` matches `api_key` and `apiKey`, not `monkey`). See ``isSensitiveName(_:)``.
  public var sensitiveNames: Set<String> = LogRedactor.defaultSensitiveNames {
    didSet { nameMatcher = NameMatcher(sensitiveNames) }
  }

  // Beyond the obvious words, the credentials of the common flows, as HAR sanitizers (Cloudflare's
  // har-sanitizer, Google's) and OpenTelemetry's URL redaction name them:
  // - OAuth 2.0 / OpenID Connect: `access_token`, `refresh_token`, `id_token` (RFC 6749, OIDC Core)
  //   by `token`; `client_secret` by `secret`; `assertion`, `client_assertion` (RFC 7523) by
  //   `assertion`; `code_verifier` (RFC 7636); `device_code` (RFC 8628 §3.2: it alone lets the device
  //   poll for the tokens). `oauth_verifier` is OAuth 1's answer to the same question.
  // - SAML 2.0 bindings: `SAMLRequest`, `SAMLResponse` (a response is a bearer assertion) and
  //   `SAMLart` (exchanged for one); `Signature` by `signature`.
  // - Sessions: `sessionid` (`session_id`, `JSESSIONID`, `ASP.NET_SessionId`), `sessid` (`PHPSESSID`).
  // - Signed URLs: `X-Amz-Signature`, `X-Goog-Signature`, `sig` (Azure SAS), `Signature`;
  //   `X-Amz-Credential`, `X-Goog-Credential` by `credential`; `X-Amz-Security-Token` by `token`.
  // - `bearer`, `jwt`: a credential by their name.
  // Not secret, and kept because they are what a failed flow is debugged by: `state`, `nonce`,
  // `RelayState` (bound to the user agent's own session, RFC 6749 §10.12; they grant nothing alone),
  // `code_challenge` (a hash of the verifier, public by design, RFC 7636 §7.2), `user_code` (shown
  // to the user, RFC 8628 §3.3), `client_id`. (`SigAlg`, `token_type` and `client_assertion_type`
  // name no secret but contain `sig`, `token`, `assertion`: they are cut too, which costs little.)
  private static let defaultSensitiveNames: Set<String> = [
    "token", "secret", "password", "passwd", "pwd", "pass", "key", "apikey", "auth", "authorization",
    "signature", "sig", "credential", "cookie", "sessionid", "otp", "assertion", "privatekey",
    "codeverifier", "devicecode", "oauthverifier", "samlrequest", "samlresponse", "samlart", "sessid",
    "bearer", "jwt",
  ]

  /// Names (case-insensitive) that mark a query item, fragment parameter, form field or JSON string
  /// as secret only when they are the whole name. Default: `code`, `ticket`, `sid`, `session`.
  ///
  /// These are credentials in the flows that use them — the OAuth 2.0 authorization `code`
  /// (RFC 6749 §4.1.2), a CAS or Kerberos `ticket`, a session's `sid` — and everyday words
  /// elsewhere, so a name that only contains them (`country_code`, `ticket_count`) is kept. Under a
  /// JSON key only a string is secret: `{"error": {"code": 404}}` and `{"ticket": {…}}` keep their
  /// numbers and objects.
  /// Entries are lowercase.
  public var sensitiveExactNames: Set<String> = ["code", "ticket", "sid", "session"]

  /// ``sensitiveNames`` as bytes, sorted into the two kinds of entry once, not per name asked
  /// about (redaction asks about every header name, query item and JSON key of a logged fetch).
  private var nameMatcher = NameMatcher(LogRedactor.defaultSensitiveNames)

  private struct NameMatcher: Sendable, Equatable {
    /// Entries of five characters or more: they match anywhere in the joined words.
    var inside: [[UInt8]] = []
    /// Shorter entries: they match a whole word, or the whole name.
    var whole: [[UInt8]] = []

    init(_ names: Set<String>) {
      for name in names {
        if name.count >= 5 {
          inside.append(Array(name.utf8))
        } else {
          whole.append(Array(name.utf8))
        }
      }
    }
  }

  /// Secrets shorter than this are replaced where they were found but not scrubbed from the rest of
  /// the output (a cookie value `1` would otherwise erase every `1`). Default 4.
  public var minimumScrubbedLength: Int = 4

  /// The default redactor.
  public init() {}

  // MARK: - Names

  /// Whether `name` (a header name, case-insensitive) always holds a secret: it is one of
  /// ``sensitiveHeaderNames`` or looks like a secret by ``isSensitiveName(_:)``.
  public func isSensitiveHeader(_ name: String) -> Bool {
    sensitiveHeaderNames.contains(name.lowercased()) || isSensitiveName(name)
  }

  /// Whether a parameter or key called `name` looks like it holds a secret (see ``sensitiveNames``).
  ///
  /// The name is split into words at `_`, `-`, `.`, spaces and lower-to-upper case changes.
  public func isSensitiveName(_ name: String) -> Bool {
    let words = Self.asciiWords(of: name) ?? Self.words(of: name).map { Array($0.utf8) }
    let joined = Array(words.joined())
    if nameMatcher.inside.contains(where: { Self.bytes(joined, contain: $0) }) { return true }
    return nameMatcher.whole.contains { entry in words.contains(entry) || joined == entry }
  }

  /// Whether a query item, fragment parameter or form field called `name` holds a secret: it looks
  /// like one (``isSensitiveName(_:)``) or is one of ``sensitiveExactNames``.
  func isSensitiveParameter(_ name: String) -> Bool {
    isSensitiveExactName(name) || isSensitiveName(name)
  }

  func isSensitiveExactName(_ name: String) -> Bool {
    !sensitiveExactNames.isEmpty && sensitiveExactNames.contains(name.lowercased())
  }

  /// Whether `needle` occurs in `haystack`.
  private static func bytes(_ haystack: [UInt8], contain needle: [UInt8]) -> Bool {
    guard let first = needle.first, needle.count <= haystack.count else { return needle.isEmpty }
    var start = 0
    while start + needle.count <= haystack.count {
      if haystack[start] == first, haystack[start..<(start + needle.count)].elementsEqual(needle) {
        return true
      }
      start += 1
    }
    return false
  }

  /// ``words(of:)`` for an ASCII name, as lowercase bytes, without a `Character` or a `String` per
  /// letter; nil when the name has other characters. Redaction asks this of every header name,
  /// query item and JSON key of a logged fetch.
  static func asciiWords(of name: String) -> [[UInt8]]? {
    var words: [[UInt8]] = []
    var current: [UInt8] = []
    var previousWasLower = false
    for byte in name.utf8 {
      guard byte < 0x80 else { return nil }
      let isUpper = byte >= 0x41 && byte <= 0x5A
      let isLower = byte >= 0x61 && byte <= 0x7A
      let isDigit = byte >= 0x30 && byte <= 0x39
      if isUpper || isLower || isDigit {
        if isUpper && previousWasLower && !current.isEmpty {
          words.append(current)
          current = []
        }
        current.append(isUpper ? byte + 0x20 : byte)
        previousWasLower = isLower || isDigit
      } else {
        if !current.isEmpty { words.append(current) }
        current = []
        previousWasLower = false
      }
    }
    if !current.isEmpty { words.append(current) }
    return words
  }

  /// The words of `name`, lowercase: split at characters that are neither letters nor digits and
  /// before an uppercase letter that follows a lowercase one or a digit.
  static func words(of name: String) -> [String] {
    var words: [String] = []
    var current = ""
    var previousWasLower = false
    for character in name {
      if character.isLetter || character.isNumber {
        if character.isUppercase && previousWasLower && !current.isEmpty {
          words.append(current)
          current = ""
        }
        current.append(contentsOf: character.lowercased())
        previousWasLower = character.isLowercase || character.isNumber
      } else {
        if !current.isEmpty { words.append(current) }
        current = ""
        previousWasLower = false
      }
    }
    if !current.isEmpty { words.append(current) }
    return words
  }

  // MARK: - The original's snipping

  /// The original's `snipSubstringOfString`: replaces the part of `string` between the first
  /// `start` and the next `end` with `marker`; without `end`, up to the end; without `start`,
  /// `string` is unchanged.
  ///
  /// `snipSubstring(of: "abcdefg", between: "abcd", and: "fg")` is `"abcd_snip_fg"`.
  static func snipSubstring(of string: String, between start: String, and end: String?, marker: String)
    -> String
  {
    guard let startRange = string.range(of: start) else { return string }
    let tail = string[startRange.upperBound...]
    let endIndex = end.flatMap { tail.range(of: $0)?.lowerBound } ?? string.endIndex
    return String(string[..<startRange.upperBound]) + marker + String(string[endIndex...])
  }
}

// MARK: - Pass 1: values by name

/// Secrets found in one fetch; they are scrubbed from all of its output.
struct SecretSet: Sendable, Equatable {
  private(set) var values: Set<String> = []

  mutating func insert(_ value: String) {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    guard !trimmed.isEmpty else { return }
    values.insert(trimmed)
  }

  mutating func formUnion(_ other: SecretSet) {
    values.formUnion(other.values)
  }
}

extension LogRedactor {
  /// The redacted value of header `name`, adding its secrets to `secrets`. Values of other headers
  /// are returned unchanged (they are scrubbed later).
  func redactHeader(name: String, value: String, secrets: inout SecretSet) -> String {
    collectTokens(in: value, secrets: &secrets)
    let lower = name.lowercased()
    if lower == "cookie" {
      return redactCookiePairs(value, separators: [";"], attributeNames: [], secrets: &secrets)
    }
    if lower == "set-cookie" {
      return redactCookiePairs(
        value, separators: [";", ","], attributeNames: Self.cookieAttributes, secrets: &secrets)
    }
    if Self.urlHeaders.contains(lower) {
      return redactURLString(value, secrets: &secrets)
    }
    guard isSensitiveHeader(name) else { return value }
    return redactCredentials(value, secrets: &secrets)
  }

  /// `Scheme credentials` keeps the scheme; Basic credentials add the decoded password as a secret;
  /// OAuth 1 parameters add each quoted value.
  func redactCredentials(_ value: String, secrets: inout SecretSet) -> String {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    guard !trimmed.isEmpty else { return value }
    secrets.insert(trimmed)
    guard let space = trimmed.firstIndex(of: " ") else { return marker }
    let scheme = String(trimmed[..<space])
    guard scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else { return marker }
    let credentials = trimmed[trimmed.index(after: space)...].trimmingCharacters(in: .whitespaces)
    secrets.insert(credentials)
    if scheme.lowercased() == "basic", let data = Data(base64Encoded: credentials),
      let decoded = String(data: data, encoding: .utf8)
    {
      secrets.insert(decoded)
      if let colon = decoded.firstIndex(of: ":") {
        secrets.insert(String(decoded[decoded.index(after: colon)...]))
      }
    }
    // OAuth 1 / GoogleLogin: `k="v", k2="v2"` or `auth=v`.
    for part in credentials.split(separator: ",") {
      guard let equals = part.firstIndex(of: "=") else { continue }
      let raw = part[part.index(after: equals)...].trimmingCharacters(in: .whitespaces)
      let unquoted = raw.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
      secrets.insert(unquoted)
      secrets.insert(unquoted.removingPercentEncoding ?? unquoted)
    }
    return scheme + " " + marker
  }

  /// Headers whose value is one URL.
  static let urlHeaders: Set<String> = ["location", "content-location", "referer"]

  static let cookieAttributes: Set<String> = [
    "path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority", "partitioned",
    "version", "comment",
  ]

  /// `a=1; b=2` → `a=_snip_; b=_snip_`; with `Set-Cookie` attributes kept.
  func redactCookiePairs(
    _ value: String, separators: Set<Character>, attributeNames: Set<String>, secrets: inout SecretSet
  ) -> String {
    var output = ""
    var segment = ""
    func flush() {
      if let equals = segment.firstIndex(of: "=") {
        let name = segment[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
        if !attributeNames.contains(name) {
          let cookieValue = String(segment[segment.index(after: equals)...])
          secrets.insert(cookieValue.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")))
          segment = String(segment[...equals]) + marker
        }
      }
      output += segment
      segment = ""
    }
    for character in value {
      if separators.contains(character) {
        flush()
        output.append(character)
      } else {
        segment.append(character)
      }
    }
    flush()
    return output
  }

  /// Query items, fragment parameters and the password of the user info whose names look like
  /// secrets. A string that `URLComponents` cannot parse is cut down by
  /// ``redactUnparsedURL(_:secrets:)``, never kept as it is.
  func redactURLString(_ string: String, secrets: inout SecretSet) -> String {
    collectTokens(in: string, secrets: &secrets)
    guard var components = URLComponents(string: string) else {
      return redactUnparsedURL(string, secrets: &secrets)
    }
    var changed = false
    if let password = components.password, !password.isEmpty {
      secrets.insert(password)
      secrets.insert(components.percentEncodedPassword ?? password)
      components.password = marker
      changed = true
    }
    if let query = components.percentEncodedQuery {
      let redacted = redactFormEncoded(query, secrets: &secrets)
      if redacted != query {
        components.percentEncodedQuery = redacted
        changed = true
      }
    }
    if let fragment = components.percentEncodedFragment, fragment.contains("=") {
      let redacted = redactFormEncoded(fragment, secrets: &secrets)
      if redacted != fragment {
        components.percentEncodedFragment = redacted
        changed = true
      }
    }
    guard changed else { return string }
    return components.string ?? redactUnparsedURL(string, secrets: &secrets)
  }

  /// A URL that does not parse keeps its scheme, host and path; its user info, query and fragment
  /// each become the marker. Secrets named in the query and fragment are still collected, to be
  /// scrubbed where they are echoed.
  ///
  /// `https://u:pw@h/p?q=a b#f` → `https://_snip_@h/p?_snip_#_snip_`.
  func redactUnparsedURL(_ string: String, secrets: inout SecretSet) -> String {
    var rest = Substring(string)
    var output = ""
    if let separator = rest.range(of: "//") {
      output += rest[..<separator.upperBound]
      rest = rest[separator.upperBound...]
      let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
      if let at = rest[..<authorityEnd].lastIndex(of: "@") {
        let userInfo = rest[..<at]
        if let colon = userInfo.firstIndex(of: ":") {
          let password = String(userInfo[userInfo.index(after: colon)...])
          secrets.insert(password)
          secrets.insert(password.removingPercentEncoding ?? password)
        }
        output += marker + "@"
        rest = rest[rest.index(after: at)...]
      }
    }
    let pathEnd = rest.firstIndex { $0 == "?" || $0 == "#" } ?? rest.endIndex
    output += rest[..<pathEnd]
    rest = rest[pathEnd...]
    if rest.first == "?" {
      let queryEnd = rest.firstIndex(of: "#") ?? rest.endIndex
      _ = redactFormEncoded(String(rest.dropFirst()[..<queryEnd]), secrets: &secrets)
      output += "?" + marker
      rest = rest[queryEnd...]
    }
    if rest.first == "#" {
      _ = redactFormEncoded(String(rest.dropFirst()), secrets: &secrets)
      output += "#" + marker
    }
    return output
  }

  /// `a=1&token=xyz` → `a=1&token=_snip_` (names decoded before matching, `+` as space).
  func redactFormEncoded(_ text: String, secrets: inout SecretSet) -> String {
    collectTokens(in: text, secrets: &secrets)
    let fields = text.split(separator: "&", omittingEmptySubsequences: false)
    let redacted = fields.map { field -> String in
      guard let equals = field.firstIndex(of: "=") else { return String(field) }
      let rawName = String(field[..<equals])
      let name = Self.formDecoded(rawName)
      guard isSensitiveParameter(name) else { return String(field) }
      let rawValue = String(field[field.index(after: equals)...])
      guard !rawValue.isEmpty else { return String(field) }
      secrets.insert(rawValue)
      secrets.insert(Self.formDecoded(rawValue))
      return rawName + "=" + marker
    }
    return redacted.joined(separator: "&")
  }

  static func formDecoded(_ text: String) -> String {
    let spaced = text.replacingOccurrences(of: "+", with: " ")
    return spaced.removingPercentEncoding ?? spaced
  }

  /// Whether `text` has the shape of a form body (`name=value&…`, no whitespace).
  static func looksFormEncoded(_ text: String) -> Bool {
    guard !text.isEmpty, text.contains("="), text.count < 1_000_000 else { return false }
    if text.contains(where: { $0.isWhitespace || $0 == "<" || $0 == "{" || $0 == "\"" }) { return false }
    return text.split(separator: "&").allSatisfy { field in
      guard let equals = field.firstIndex(of: "=") else { return false }
      return equals != field.startIndex
    }
  }

  /// Replaces the values of secret-looking keys at any depth of a parsed JSON value.
  func redactJSON(_ value: Any, secrets: inout SecretSet) -> Any {
    if let dictionary = value as? [String: Any] {
      var result: [String: Any] = [:]
      for (key, element) in dictionary {
        if isSensitiveName(key) {
          result[key] = redactJSONSecret(element, secrets: &secrets)
        } else if isSensitiveExactName(key), let string = element as? String, !string.isEmpty {
          secrets.insert(string)
          result[key] = marker
        } else {
          result[key] = redactJSON(element, secrets: &secrets)
        }
      }
      return result
    }
    if let array = value as? [Any] {
      return array.map { redactJSON($0, secrets: &secrets) }
    }
    return value
  }

  /// Everything under a secret key is secret; `null` and booleans say nothing and are kept.
  private func redactJSONSecret(_ value: Any, secrets: inout SecretSet) -> Any {
    if let string = value as? String {
      if string.isEmpty { return string }
      secrets.insert(string)
      if string.contains(" ") { _ = redactCredentials(string, secrets: &secrets) }
      return marker
    }
    if let dictionary = value as? [String: Any] {
      return dictionary.mapValues { redactJSONSecret($0, secrets: &secrets) }
    }
    if let array = value as? [Any] {
      return array.map { redactJSONSecret($0, secrets: &secrets) }
    }
    if value is NSNull { return value }
    if let number = value as? NSNumber {
      if Self.isBoolean(number) { return value }
      secrets.insert(number.stringValue)
      return marker
    }
    return marker
  }

  static func isBoolean(_ number: NSNumber) -> Bool {
    #if canImport(Darwin)
      return CFGetTypeID(number) == CFBooleanGetTypeID()
    #else
      return String(cString: number.objCType) == "c"
        && (number == NSNumber(value: true) || number == NSNumber(value: false))
    #endif
  }

  /// In free text: `name=value` pairs and `"name": "value"` pairs with secret-looking names, and
  /// `Bearer`/`OAuth`/`Basic` credentials.
  func redactFreeText(_ text: String, secrets: inout SecretSet) -> String {
    collectTokens(in: text, secrets: &secrets)
    var output = text
    for match in text.matches(of: /([A-Za-z0-9_.\-]+)=([^&\s"'<>;,]+)/) {
      let name = String(match.output.1)
      let value = match.output.2
      // Prose says `status code=5000`: a number under an exact name is no credential, and scrubbing
      // it would cut the same number from every header and body of the fetch.
      if isSensitiveName(name) || (isSensitiveExactName(name) && !value.allSatisfy(\.isNumber)) {
        secrets.insert(String(match.output.2))
        secrets.insert(Self.formDecoded(String(match.output.2)))
      }
    }
    for match in text.matches(of: /"([^"\\]{1,100})"\s*:\s*"((?:[^"\\]|\\.)*)"/) {
      if isSensitiveName(String(match.output.1)) { secrets.insert(String(match.output.2)) }
    }
    // The scheme and its credentials are separated by white space (`Bearer abc`). A `=` after the
    // scheme's name is a `name=value` pair instead: the value alone is the secret, which must not
    // begin with the `=`, or scrubbing it leaves `bearer_snip_`.
    for match in text.matches(
      of:
        /(?i:\b(?:(?:Bearer|OAuth|Basic)(?:\s+|\s*=\s*)|GoogleLogin\s+auth=))([A-Za-z0-9._~+\/\-][A-Za-z0-9._~+\/=\-]{3,})/
    ) {
      secrets.insert(String(match.output.1))
    }
    output = scrub(output, secrets: secrets)
    return output
  }

  /// Adds every JSON Web Token in `text` to `secrets`, whatever name it has or where it is: a
  /// compact JWS or JWE (RFC 7515 §7.1, RFC 7516 §7.1) begins with its base64url-encoded header,
  /// and `{"` encodes as `eyJ`.
  func collectTokens(in text: String, secrets: inout SecretSet) {
    guard text.utf8.count >= 16, text.contains("eyJ") else { return }
    for match in text.matches(
      of: /eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{2,}\.[A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+)?/)
    {
      secrets.insert(String(match.output))
    }
  }

  // MARK: - Pass 2: scrubbing

  /// The forms a secret may take in output: as is, percent-encoded, form-encoded, JSON-escaped.
  func scrubPatterns(_ secrets: SecretSet) -> [String] {
    var patterns: Set<String> = []
    for secret in secrets.values where secret.count >= minimumScrubbedLength && !marker.contains(secret) {
      patterns.insert(secret)
      if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) {
        patterns.insert(encoded)
      }
      if let encoded = secret.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) {
        patterns.insert(encoded)
      }
      patterns.insert(secret.replacingOccurrences(of: "/", with: "\\/"))
      patterns.insert(secret.replacingOccurrences(of: " ", with: "+"))
    }
    // Longest first, so a secret containing another is replaced whole.
    return patterns.sorted { $0.count != $1.count ? $0.count > $1.count : $0 < $1 }
  }

  /// `text` with every secret (and its encoded forms) replaced by ``marker``.
  func scrub(_ text: String, secrets: SecretSet) -> String {
    scrub(text, patterns: scrubPatterns(secrets))
  }

  func scrub(_ text: String, patterns: [String]) -> String {
    var output = text
    for pattern in patterns where output.contains(pattern) {
      output = output.replacingOccurrences(of: pattern, with: marker)
    }
    return output
  }

  /// `data` with every secret's bytes replaced by the marker's; when `truncated`, a tail that
  /// begins a secret is replaced as well.
  func scrub(_ data: Data, patterns: [String], truncated: Bool) -> Data {
    var output = data
    let markerBytes = Data(marker.utf8)
    for pattern in patterns {
      let needle = Data(pattern.utf8)
      var searchStart = output.startIndex
      while searchStart < output.endIndex,
        let range = output.range(of: needle, options: [], in: searchStart..<output.endIndex)
      {
        output.replaceSubrange(range, with: markerBytes)
        searchStart = range.lowerBound + markerBytes.count
      }
    }
    if truncated {
      for pattern in patterns {
        let needle = Array(pattern.utf8)
        for length in stride(
          from: min(needle.count - 1, output.count), through: minimumScrubbedLength, by: -1)
        where output.suffix(length).elementsEqual(needle.prefix(length)) {
          output.replaceSubrange((output.endIndex - length)..<output.endIndex, with: markerBytes)
          break
        }
      }
    }
    return output
  }
}
