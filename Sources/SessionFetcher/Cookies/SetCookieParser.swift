import Foundation

/// Parses `Set-Cookie` header values into ``SessionCookie`` values, following RFC 6265 §5.2 (the
/// parsing algorithm) and §5.3 (the storage model), with the RFC 6265bis refinements.
///
/// ```swift
/// let url = URL(string: "https://www.example.com/account/login")!
/// let cookie = SetCookieParser.parse("id=a3fWa; Domain=example.com; Max-Age=3600; Secure", from: url)
/// // cookie?.domain == "example.com", cookie?.isHostOnly == false, cookie?.path == "/account"
/// ```
///
/// The rules applied, beyond the grammar:
/// - A header with a control character (other than tab) is ignored whole, as is one without "=" in
///   its first part, one whose name and value are both empty, and one whose name and value
///   together exceed 4096 bytes. An attribute value over 1024 bytes is ignored.
/// - Attribute names are case-insensitive; the last occurrence of an attribute wins, except that
///   any valid `Max-Age` wins over `Expires`. `Max-Age` of zero or less gives an expired cookie
///   (which deletes a stored one). An unparseable `Expires` or `Max-Age` is ignored. Expiry is
///   capped at 400 days from `now`, as RFC 6265bis asks.
/// - `Expires` accepts every format of the cookie-date algorithm of §5.1.1.
/// - Without `Domain` the cookie is host-only for the request host. With `Domain` (a leading dot
///   ignored) the request host must domain-match it, else the header is rejected; on an IP-address
///   host only the identical address is accepted (and the cookie stays host-only). A `Domain` that
///   is a public suffix of the Public Suffix List (`com`, `co.uk`, `s3.amazonaws.com`,
///   `myshopify.com`, and any single label such as `localhost`), or lies above the host's public
///   suffix (`amazonaws.com` from `b1.s3.amazonaws.com`), is rejected unless it equals the request
///   host, in which case the cookie is host-only (RFC 6265 §5.3 step 5). The list is the system's
///   libpsl (`libpsl.so.5`, ICANN and private rules), or ``knownPublicSuffixes`` when libpsl is
///   missing; ``publicSuffixListSource`` says which.
/// - Without a `Path` starting with "/", the path is the default path of §5.1.4.
/// - `Secure` cookies are accepted only from https URLs. The `__Secure-` name prefix needs
///   `Secure`; `__Host-` needs `Secure`, no `Domain` and `Path=/`.
public enum SetCookieParser {
  /// The largest name plus value, in UTF-8 bytes, of an accepted cookie.
  public static let maximumNameValueBytes = 4096
  /// The largest attribute value, in UTF-8 bytes; a longer one is ignored.
  public static let maximumAttributeValueBytes = 1024
  /// How far in the future an expiry may lie (400 days); a later one is brought back to it.
  public static let maximumLifetime: TimeInterval = 400 * 86_400

  /// The plain rules of the Public Suffix List built into the library (`co.uk`, `com.au`,
  /// `github.io`, `s3.amazonaws.com`, … about 9,800; its wildcard and exception rules, such as
  /// `*.ck` and `!www.ck`, apply too but are not in this set), which a `Domain` attribute may not
  /// name when the system's libpsl cannot be loaded (Apple platforms, Linux without `libpsl5`).
  ///
  /// With libpsl the system's copy of the list applies instead. See ``publicSuffixListSource``.
  public static var knownPublicSuffixes: Set<String> { PublicSuffixList.builtInSuffixes }

  /// Which public suffix list cookie domains are checked against: `"libpsl 0.21.2 (…)"` when the
  /// system's libpsl was loaded, `"built-in list"` (``knownPublicSuffixes``) when it was not.
  public static var publicSuffixListSource: String { PublicSuffixList.current.source }

  /// Parses one Set-Cookie header value as received from `url`.
  ///
  /// - Parameters:
  ///   - headerValue: One header value (not several joined with ", "; see
  ///     ``splitJoinedHeader(_:)``).
  ///   - url: The URL of the response that carried the header.
  ///   - now: The current time, for Max-Age and the creation date.
  /// - Returns: The cookie, possibly already expired (so that storing it deletes an existing one),
  ///   or nil for malformed input or a cookie that `url` may not set.
  public static func parse(_ headerValue: String, from url: URL, now: Date = Date()) -> SessionCookie? {
    parse(headerValue, from: url, now: now, publicSuffixes: .current)
  }

  /// ``parse(_:from:now:)`` with the public suffix list given (tests use the built-in one).
  static func parse(
    _ headerValue: String, from url: URL, now: Date, publicSuffixes: PublicSuffixList
  ) -> SessionCookie? {
    guard let host = CookieRules.canonicalHost(of: url) else { return nil }
    // RFC 6265bis ignores a Set-Cookie with a control character, which also keeps CR/LF out of
    // the Cookie header we send back.
    guard HeaderValue.isPlain(headerValue) else { return nil }

    let bytes = Array(headerValue.utf8)
    var parts = bytes.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)[...]
    guard let nameValuePair = parts.popFirst(), let equals = nameValuePair.firstIndex(of: UInt8(ascii: "="))
    else { return nil }
    let name = trimmedString(nameValuePair[..<equals])
    let value = trimmedString(nameValuePair[(equals + 1)...])
    guard !(name.isEmpty && value.isEmpty),
      name.utf8.count + value.utf8.count <= maximumNameValueBytes
    else { return nil }

    let attributes = parseAttributes(parts, now: now)

    var expiresDate = attributes.maxAgeExpiry ?? attributes.expires
    if let date = expiresDate, date > now.addingTimeInterval(maximumLifetime) {
      expiresDate = now.addingTimeInterval(maximumLifetime)
    }

    let isHostOnly: Bool
    let domain: String
    if let domainAttribute = attributes.domain {
      // An IP-address host domain-matches only itself.
      guard CookieRules.domainMatches(host: host, domain: domainAttribute) else { return nil }
      if CookieRules.isIPAddress(host)
        || CookieRules.isPublicSuffix(domainAttribute, forHost: host, in: publicSuffixes)
      {
        guard domainAttribute == host else { return nil }
        isHostOnly = true
      } else {
        isHostOnly = false
      }
      domain = domainAttribute
    } else {
      isHostOnly = true
      domain = host
    }

    let isSecureOrigin = url.scheme?.lowercased() == "https"
    if attributes.isSecure, !isSecureOrigin { return nil }
    let lowercasedName = name.lowercased().utf8
    if lowercasedName.starts(with: "__secure-".utf8), !attributes.isSecure { return nil }
    if lowercasedName.starts(with: "__host-".utf8),
      !attributes.isSecure || attributes.domain != nil || attributes.path != "/"
    {
      return nil
    }

    return SessionCookie(
      name: name,
      value: value,
      domain: domain,
      path: attributes.path ?? CookieRules.defaultPath(of: url),
      expiresDate: expiresDate,
      isSecure: attributes.isSecure,
      isHTTPOnly: attributes.isHTTPOnly,
      isHostOnly: isHostOnly,
      sameSite: attributes.sameSite,
      creationDate: now)
  }

  /// Splits a header value in which several Set-Cookie values were joined with ", " (as
  /// `HTTPURLResponse.allHeaderFields` does) back into single values.
  ///
  /// A comma starts a new cookie only when the text after it (past spaces) reaches "=" before any
  /// ";" or ",", so the comma in `Expires=Wed, 09 Jun 2021 10:18:14 GMT` and one inside a value
  /// do not split. Empty pieces (", ," or a trailing ",") are dropped.
  ///
  /// ```swift
  /// SetCookieParser.splitJoinedHeader("a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT, b=2")
  /// // ["a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT", "b=2"]
  /// ```
  public static func splitJoinedHeader(_ joined: String) -> [String] {
    let bytes = Array(joined.utf8)
    var pieces: [String] = []
    var start = 0
    for index in bytes.indices where bytes[index] == UInt8(ascii: ",") {
      if startsNewCookie(bytes, after: index) {
        pieces.append(trimmedString(bytes[start..<index]))
        start = index + 1
      }
    }
    pieces.append(trimmedString(bytes[start...]))
    return pieces.filter { !$0.isEmpty }
  }

  // MARK: - Attributes

  private struct Attributes {
    var expires: Date?
    var maxAgeExpiry: Date?
    var domain: String?
    var path: String?
    var isSecure = false
    var isHTTPOnly = false
    var sameSite: String?
  }

  private static func parseAttributes(_ parts: ArraySlice<ArraySlice<UInt8>>, now: Date) -> Attributes {
    var attributes = Attributes()
    for part in parts {
      let name: String
      let value: String
      if let equals = part.firstIndex(of: UInt8(ascii: "=")) {
        name = trimmedString(part[..<equals]).lowercased()
        value = trimmedString(part[(equals + 1)...])
      } else {
        name = trimmedString(part).lowercased()
        value = ""
      }
      guard value.utf8.count <= maximumAttributeValueBytes else { continue }

      switch name {
      case "expires":
        if let date = CookieDate.parse(value) {
          attributes.expires = date
        }
      case "max-age":
        if let seconds = parseMaxAge(value) {
          attributes.maxAgeExpiry = seconds <= 0 ? Date.distantPast : now.addingTimeInterval(seconds)
        }
      case "domain":
        // An empty Domain is ignored (§5.2.3), so the cookie stays host-only.
        let domain = CookieRules.canonicalDomain(value)
        if !domain.isEmpty {
          attributes.domain = domain
        }
      case "path":
        attributes.path = value.utf8.first == UInt8(ascii: "/") ? value : nil
      case "secure":
        attributes.isSecure = true
      case "httponly":
        attributes.isHTTPOnly = true
      case "samesite":
        switch value.lowercased() {
        case "strict": attributes.sameSite = "Strict"
        case "lax": attributes.sameSite = "Lax"
        case "none": attributes.sameSite = "None"
        default: attributes.sameSite = nil
        }
      default:
        break
      }
    }
    return attributes
  }

  /// Max-Age (§5.2.2): an optional "-" and at least one digit, nothing else. Large values are
  /// clamped rather than overflowing; the lifetime cap applies later anyway.
  private static func parseMaxAge(_ value: String) -> TimeInterval? {
    var digits = value.utf8[...]
    let isNegative = digits.first == UInt8(ascii: "-")
    if isNegative {
      digits = digits.dropFirst()
    }
    guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
    var seconds: Int64 = 0
    for digit in digits {
      seconds = min(seconds * 10 + Int64(digit - 0x30), 1_000_000_000_000)
    }
    return TimeInterval(isNegative ? -seconds : seconds)
  }

  // MARK: - Helpers

  /// The bytes without leading and trailing space and tab (the WSP of RFC 6265), as a string.
  ///
  /// The parser works on UTF-8 bytes, not characters: a combining mark after ";" or " " would
  /// otherwise form one grapheme with it and hide the delimiter. Cutting at ASCII bytes keeps the
  /// UTF-8 of the original string valid.
  private static func trimmedString(_ bytes: ArraySlice<UInt8>) -> String {
    let isWhitespace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
    guard let first = bytes.firstIndex(where: { !isWhitespace($0) }),
      let last = bytes.lastIndex(where: { !isWhitespace($0) })
    else { return "" }
    return String(decoding: bytes[first...last], as: UTF8.self)
  }

  /// Whether the comma at `commaIndex` separates cookies: past spaces, either nothing or another
  /// comma follows (an empty piece), or a run without ";" or "," that ends in "=".
  private static func startsNewCookie(_ bytes: [UInt8], after commaIndex: Int) -> Bool {
    var index = commaIndex + 1
    while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") {
      index += 1
    }
    if index == bytes.count || bytes[index] == UInt8(ascii: ",") { return true }
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: "="): return true
      case UInt8(ascii: ";"), UInt8(ascii: ","): return false
      default: index += 1
      }
    }
    return false
  }
}
