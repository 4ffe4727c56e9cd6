#if LIBCURL_ENGINE
  import Foundation

  /// The authentication challenge of a 401 (`WWW-Authenticate`) or 407 (`Proxy-Authenticate`) head,
  /// as URLSession would present it: the libcurl engine never answers one itself, the handler decides.
  enum CurlChallenge {
    /// The challenge for `head`, or nil when it is not one.
    ///
    /// - Parameter proxy: the fetch's own proxy settings (nil: the environment's proxy), for the
    ///   protection space of a 407.
    static func make(
      head: ParsedResponseHead, response: ResponseHead, url: URL, previousFailureCount: Int,
      proxy: ProxySettings? = nil
    ) -> (challenge: URLAuthenticationChallenge, isProxy: Bool)? {
      let isProxy: Bool
      switch head.statusCode {
      case 401: isProxy = false
      case 407: isProxy = true
      default: return nil
      }
      guard let header = head.value(named: isProxy ? "Proxy-Authenticate" : "WWW-Authenticate"),
        let response = response.httpResponse
      else {
        return nil
      }
      let method = authenticationMethod(header)
      let realm = self.realm(header)
      let scheme = url.scheme?.lowercased() ?? "http"
      let space: URLProtectionSpace
      if isProxy, let proxy = proxyHost(for: url, settings: proxy) {
        space = URLProtectionSpace(
          proxyHost: proxy.host, port: proxy.port,
          type: scheme == "https" ? NSURLProtectionSpaceHTTPSProxy : NSURLProtectionSpaceHTTPProxy,
          realm: realm,
          authenticationMethod: method)
      } else {
        space = URLProtectionSpace(
          host: url.host ?? "", port: url.port ?? (scheme == "https" ? 443 : 80), protocol: scheme,
          realm: realm,
          authenticationMethod: method)
      }
      let challenge = URLAuthenticationChallenge(
        protectionSpace: space, proposedCredential: nil, previousFailureCount: previousFailureCount,
        failureResponse: response, error: nil, sender: CurlChallengeSender())
      return (challenge, isProxy)
    }

    /// `Basic realm="x"` → HTTP Basic; `Digest …` → HTTP Digest; anything else → the default method.
    static func authenticationMethod(_ header: String) -> String {
      let scheme = header.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
      if scheme.equalsIgnoringASCIICase("Basic") { return NSURLAuthenticationMethodHTTPBasic }
      if scheme.equalsIgnoringASCIICase("Digest") { return NSURLAuthenticationMethodHTTPDigest }
      return NSURLAuthenticationMethodDefault
    }

    /// The `realm` parameter of a challenge, quoted or not.
    static func realm(_ header: String) -> String? {
      guard let range = header.range(of: "realm=", options: .caseInsensitive) else { return nil }
      let rest = header[range.upperBound...]
      if rest.first == "\"" {
        let value = rest.dropFirst()
        return String(value.prefix { $0 != "\"" })
      }
      return String(rest.prefix { $0 != "," && $0 != " " })
    }

    /// The proxy a request to `url` goes through: the fetch's own, else the environment's, as
    /// libcurl reads it.
    private static func proxyHost(for url: URL, settings: ProxySettings?) -> (host: String, port: Int)? {
      if let settings {
        guard let proxyURL = settings.url, let host = proxyURL.host else { return nil }
        return (host, proxyURL.port ?? 1080)
      }
      let environment = ProcessInfo.processInfo.environment
      let name = url.scheme?.lowercased() == "https" ? "https_proxy" : "http_proxy"
      guard let value = environment[name] ?? environment[name.uppercased()], !value.isEmpty else {
        return nil
      }
      let proxyURL = URL(string: value.contains("://") ? value : "http://" + value)
      guard let host = proxyURL?.host else { return nil }
      return (host, proxyURL?.port ?? 1080)
    }
  }

  /// The sender of the engine's challenges. The handler answers by its return value, so every
  /// method here does nothing.
  final class CurlChallengeSender: NSObject, URLAuthenticationChallengeSender {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
  }
#endif
