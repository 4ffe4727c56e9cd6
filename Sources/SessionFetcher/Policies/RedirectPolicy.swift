import Foundation

/// How a request changes when the server redirects it (RFC 9110 §15.4), before any user block.
package enum RedirectPolicy {
  /// The most redirects one attempt follows unless `SessionFetcher.maximumRedirects` says otherwise.
  package static let maximumRedirects = 20

  /// Headers that carry credentials and must not travel to another origin.
  package static let credentialHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]

  /// The outcome of a redirect: the next request and whether it still carries the body.
  package struct Hop: Equatable, Sendable {
    package var request: URLRequest
    package var keepsBody: Bool
  }

  package enum Refusal: Error, Equatable, Sendable {
    /// https → http, a scheme other than http and https, or a target that fails the
    /// insecure-scheme gate.
    case insecure(URL)
    /// The response has no usable Location.
    case noLocation
  }

  /// Whether one more redirect may be followed: after `followed` redirects in this attempt, with
  /// at most `maximum` allowed.
  package static func limit(followed: Int, maximum: Int) -> RedirectLimit {
    if followed < maximum { return .follow }
    return maximum == 0 ? .final : .tooMany
  }

  /// Whether `status` is a redirect status this fetcher follows.
  package static func isRedirect(_ status: Int) -> Bool {
    [301, 302, 303, 307, 308].contains(status)
  }

  /// The target of a redirect response: its Location resolved against the response URL.
  package static func location(of response: HTTPURLResponse) -> URL? {
    guard let value = response.value(forHTTPHeaderField: "Location"), let base = response.url else {
      return nil
    }
    return URL(string: value, relativeTo: base)?.absoluteURL
  }

  /// The next request after `response` redirected `request`.
  ///
  /// - 303 (for anything but HEAD) and 301/302 after a POST become GET without a body, as the Fetch
  ///   standard and RFC 9110 §15.4.2–15.4.3 allow; 301/302 keep any other method and its body;
  /// - 307 and 308 keep the method and the body;
  /// - another origin (scheme, host or port) loses `Authorization`, `Proxy-Authorization` and `Cookie`;
  /// - https → http is refused, and so is any target the insecure-scheme gate refuses, and any
  ///   scheme but http and https.
  package static func nextHop(
    from request: URLRequest, response: HTTPURLResponse, target: URL,
    allowedInsecureSchemes: [String], allowLocalhostRequest: Bool
  ) -> Result<Hop, Refusal> {
    let fromScheme = request.url?.scheme?.lowercased()
    let toScheme = target.scheme?.lowercased()
    if fromScheme == "https" && toScheme != "https" { return .failure(.insecure(target)) }
    if !SecurityPolicy.allowsRedirect(
      to: target, allowedInsecureSchemes: allowedInsecureSchemes, allowLocalhostRequest: allowLocalhostRequest
    ) {
      return .failure(.insecure(target))
    }
    var next = request
    next.url = target
    let method = (request.httpMethod ?? "GET").uppercased()
    var keepsBody = true
    switch response.statusCode {
    case 303 where method != "HEAD", 301 where method == "POST", 302 where method == "POST":
      next.httpMethod = "GET"
      keepsBody = false
    case 307, 308:
      keepsBody = true
    default:
      keepsBody = method != "GET" && method != "HEAD"
    }
    if !keepsBody {
      next.httpBody = nil
      next.httpBodyStream = nil
      for name in ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"] {
        next.setValue(nil, forHTTPHeaderField: name)
      }
    }
    if let from = request.url, !isSameOrigin(from, target) {
      for name in credentialHeaders { next.setValue(nil, forHTTPHeaderField: name) }
    }
    return .success(Hop(request: next, keepsBody: keepsBody))
  }

  /// Same scheme, host and port (default ports filled in).
  package static func isSameOrigin(_ a: URL, _ b: URL) -> Bool {
    a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
      && effectivePort(a) == effectivePort(b)
  }

  private static func effectivePort(_ url: URL) -> Int? {
    if let port = url.port { return port }
    switch url.scheme?.lowercased() {
    case "http": return 80
    case "https": return 443
    default: return nil
    }
  }
}

/// What the redirect limit says about the next redirect (see `RedirectPolicy.limit(followed:maximum:)`).
package enum RedirectLimit: Equatable, Sendable {
  /// Follow it.
  case follow
  /// No redirect is ever followed (`maximumRedirects` is 0): the 3xx is the final response.
  case final
  /// One more than allowed: the fetch fails with `URLError(.httpTooManyRedirects)`.
  case tooMany
}
