import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The authentication challenge of a scripted 401 (`WWW-Authenticate`) or 407
/// (`Proxy-Authenticate`) head, as the real engines present it.
enum ScriptedChallenge {
  /// The protection space of the challenge in a head of `status` with `headers`, or nil when the
  /// head is none.
  static func protectionSpace(status: Int, headers: [String: String], url: URL) -> URLProtectionSpace? {
    let isProxy: Bool
    switch status {
    case 401: isProxy = false
    case 407: isProxy = true
    default: return nil
    }
    let name = isProxy ? "Proxy-Authenticate" : "WWW-Authenticate"
    guard let header = headers.first(where: { $0.key.caseInsensitiveCompare(name) == .orderedSame })?.value
    else { return nil }
    let scheme = header.split(separator: " ", maxSplits: 1).first.map { $0.lowercased() } ?? ""
    let method =
      scheme == "basic"
      ? NSURLAuthenticationMethodHTTPBasic
      : (scheme == "digest" ? NSURLAuthenticationMethodHTTPDigest : NSURLAuthenticationMethodDefault)
    let urlScheme = url.scheme?.lowercased() ?? "https"
    let port = url.port ?? (urlScheme == "https" ? 443 : 80)
    if isProxy {
      return URLProtectionSpace(
        proxyHost: url.host ?? "", port: port,
        type: urlScheme == "https" ? NSURLProtectionSpaceHTTPSProxy : NSURLProtectionSpaceHTTPProxy,
        realm: realm(header), authenticationMethod: method)
    }
    return URLProtectionSpace(
      host: url.host ?? "", port: port, protocol: urlScheme, realm: realm(header),
      authenticationMethod: method)
  }

  /// The `realm` parameter of a challenge, quoted or not.
  static func realm(_ header: String) -> String? {
    guard let range = header.range(of: "realm=", options: .caseInsensitive) else { return nil }
    let rest = header[range.upperBound...]
    if rest.first == "\"" { return String(rest.dropFirst().prefix { $0 != "\"" }) }
    return String(rest.prefix { $0 != "," && $0 != " " })
  }

  /// The sender of scripted challenges: the handler answers by its return value, so every method
  /// here does nothing.
  final class Sender: NSObject, URLAuthenticationChallengeSender {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
  }
}
