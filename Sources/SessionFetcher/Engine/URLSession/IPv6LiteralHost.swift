import Foundation

/// Lets FoundationNetworking fetch a URL whose host is an IPv6 literal (`http://[::1]:8080/`).
///
/// FoundationNetworking (swift-corelibs-foundation 6.3) refuses every such URL with `-1000`
/// (`.badURL`) before a byte is sent: it checks that `URL.host` and libcurl's own parse of the URL
/// name the same host, and `URL.host` is `::1` where libcurl says `[::1]` (corelibs #5496, fixed
/// after 6.3 by #5498). The same host with its brackets and colons percent-encoded,
/// `http://%5B%3A%3A1%5D:8080/`, is a registered name to Foundation, whose `host` decodes it to
/// `[::1]`; libcurl decodes it the same way, so the two agree, and libcurl connects to the literal
/// and sends `Host: [::1]:8080`. So the URLSession engine hands FoundationNetworking that spelling
/// (``encoded(_:)``) and turns every URL FoundationNetworking reports back (``decoded(_:)``): a
/// response's, a redirect's, a failure's, so the fetcher sees the URL as the caller wrote it. On a
/// FoundationNetworking with the fix, the encoded spelling is fetched all the same. Apple's
/// URLSession takes literals as they are: nothing is changed there.
enum IPv6LiteralHost {
  /// Whether URLs are respelled: where URLSession is FoundationNetworking.
  #if FOUNDATION_NETWORKING
    static let isNeeded = true
  #else
    static let isNeeded = false
  #endif

  /// `url` with its IPv6-literal host percent-encoded, brackets included, and its scheme in lower
  /// case (see `URLSessionEngineSession.lowercasingSchemeAndHost(_:)`); nil when the host is not an
  /// IPv6 literal.
  static func encoded(_ url: URL) -> URL? {
    // Every request's URL comes here: without a `[` the host is no literal, and no `URLComponents`
    // is made.
    guard isNeeded, contains(url, "[") else { return nil }
    guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
      let scheme = components.scheme, let host = components.host, isLiteral(host),
      components.percentEncodedHost?.hasPrefix("[") == true
    else { return nil }
    var text = scheme.lowercased() + "://"
    if let user = components.percentEncodedUser {
      text += user + (components.percentEncodedPassword.map { ":" + $0 } ?? "") + "@"
    }
    text += percentEncodedEveryByte(host)
    if let port = components.port { text += ":\(port)" }
    text += components.percentEncodedPath
    if let query = components.percentEncodedQuery { text += "?" + query }
    if let fragment = components.percentEncodedFragment { text += "#" + fragment }
    return URL(string: text)
  }

  /// `url` with a host that ``encoded(_:)`` spelled written as an IPv6 literal again; nil for any
  /// other URL.
  static func decoded(_ url: URL) -> URL? {
    // Every response's URL comes here: without a `%5B` no host was spelled by `encoded(_:)`.
    guard isNeeded, contains(url, "%5B") else { return nil }
    guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
      let host = components.host, isLiteral(host),
      components.percentEncodedHost?.uppercased().hasPrefix("%5B") == true
    else { return nil }
    // A zone's `%` is the one character of a literal that is percent-encoded in a URL (RFC 6874).
    components.percentEncodedHost = host.replacingOccurrences(of: "%", with: "%25")
    return components.url
  }

  /// `response` with its URL decoded (see ``decoded(_:)``), or itself.
  static func decoded(_ response: URLResponse) -> URLResponse {
    guard let http = response as? HTTPURLResponse, let url = http.url, let original = decoded(url) else {
      return response
    }
    var fields: [String: String] = [:]
    for case let (name as String, value as String) in http.allHeaderFields { fields[name] = value }
    return HTTPURLResponse(
      url: original, statusCode: http.statusCode, httpVersion: "HTTP/1.1", headerFields: fields)
      ?? response
  }

  /// `request` with its URL decoded (see ``decoded(_:)``), or itself.
  static func decoded(_ request: URLRequest) -> URLRequest {
    guard let url = request.url, let original = decoded(url) else { return request }
    var decoded = request
    decoded.url = original
    return decoded
  }

  /// `error` with the failing URL in its `userInfo` decoded (see ``decoded(_:)``), or itself.
  static func decoded(_ error: any Error) -> any Error {
    guard let urlError = error as? URLError,
      let url = urlError.userInfo[NSURLErrorFailingURLErrorKey] as? URL, let original = decoded(url)
    else { return error }
    var userInfo = urlError.userInfo
    userInfo[NSURLErrorFailingURLErrorKey] = original
    userInfo[EngineErrorKeys.failingURLString] = original.absoluteString
    return URLError(urlError.code, userInfo: userInfo)
  }

  /// Whether `url`, as written in full, holds `text` (ASCII; letters in either case).
  private static func contains(_ url: URL, _ text: StaticString) -> Bool {
    let pattern = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    var written = url.absoluteString
    return written.withUTF8 { bytes in
      guard bytes.count >= pattern.count else { return false }
      return (0...(bytes.count - pattern.count)).contains { start in
        pattern.indices.allSatisfy { (bytes[start + $0] | 0x20) == (pattern[$0] | 0x20) }
      }
    }
  }

  /// Whether a decoded host is an IPv6 (or future) literal: `[…]`.
  private static func isLiteral(_ host: String) -> Bool {
    host.count > 2 && host.hasPrefix("[") && host.hasSuffix("]")
  }

  /// `text` with every byte but ASCII letters, digits and `.` percent-encoded.
  private static func percentEncodedEveryByte(_ text: String) -> String {
    var encoded = ""
    for byte in text.utf8 {
      let letter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
      let digit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
      if letter || digit || byte == UInt8(ascii: ".") {
        encoded.unicodeScalars.append(Unicode.Scalar(byte))
      } else {
        encoded += String(format: "%%%02X", byte)
      }
    }
    return encoded
  }
}
