import Foundation

/// A server's authentication challenge (a 401 with `WWW-Authenticate`) as the fetcher answers it,
/// on every engine: which of the offered challenges it takes, how it presents it to a
/// ``ChallengeBlock``, and the `Authorization` value that answers it with a credential.
package struct ServerChallenge: Sendable {
  /// The challenge the fetcher can answer, or why it cannot.
  package enum Kind: Sendable, Equatable {
    case basic
    case digest(DigestChallenge)
    /// A Digest challenge with an unknown algorithm or missing or malformed parameters.
    case unusableDigest
    /// Another scheme (Bearer, Negotiate): no credential answers it here.
    case other(String)
  }

  package var kind: Kind
  package var realm: String?

  /// The challenge of a 401 `response`, or nil when it carries no `WWW-Authenticate`. Of several,
  /// the strongest the fetcher can answer: Digest (SHA-256 before MD5), then Basic.
  package init?(response: HTTPURLResponse) {
    guard response.statusCode == 401,
      let header = response.value(forHTTPHeaderField: "WWW-Authenticate"),
      !header.trimmingCharacters(in: .whitespaces).isEmpty
    else { return nil }
    self.init(header: header)
  }

  /// The challenge of a `WWW-Authenticate` value; nil when it holds no challenge at all.
  package init?(header: String) {
    let challenges = AuthenticateHeader.challenges(header)
    guard let first = challenges.first else { return nil }
    let digests = challenges.compactMap { DigestChallenge($0) }
    if let best = digests.max(by: { $0.algorithm.strength < $1.algorithm.strength }) {
      kind = .digest(best)
      realm = best.realm
    } else if let basic = challenges.first(where: { $0.isScheme("Basic") }) {
      kind = .basic
      realm = basic.parameters["realm"]
    } else if let digest = challenges.first(where: { $0.isScheme("Digest") }) {
      kind = .unusableDigest
      realm = digest.parameters["realm"]
    } else {
      kind = .other(first.scheme)
      realm = first.parameters["realm"]
    }
  }

  /// `NSURLAuthenticationMethodHTTPBasic`, `NSURLAuthenticationMethodHTTPDigest`, or the default
  /// method for another scheme.
  package var authenticationMethod: String {
    switch kind {
    case .basic: NSURLAuthenticationMethodHTTPBasic
    case .digest, .unusableDigest: NSURLAuthenticationMethodHTTPDigest
    case .other: NSURLAuthenticationMethodDefault
    }
  }

  /// The protection space of the challenge from `url`'s server.
  package func protectionSpace(url: URL) -> URLProtectionSpace {
    let scheme = url.scheme?.lowercased() ?? "http"
    return URLProtectionSpace(
      host: url.host ?? "", port: url.port ?? (scheme == "https" ? 443 : 80), protocol: scheme, realm: realm,
      authenticationMethod: authenticationMethod)
  }

  /// The challenge as a ``ChallengeBlock`` sees it.
  package func urlChallenge(url: URL, previousFailureCount: Int, response: HTTPURLResponse)
    -> URLAuthenticationChallenge
  {
    URLAuthenticationChallenge(
      protectionSpace: protectionSpace(url: url), proposedCredential: nil,
      previousFailureCount: previousFailureCount, failureResponse: response, error: nil,
      sender: FetcherChallengeSender())
  }

  /// The `Authorization` value that answers the challenge for `request` with `user` and
  /// `password`; nil when this challenge cannot be answered with them.
  ///
  /// - Parameter nonceCount: for Digest, the count of requests made with this nonce, this one
  ///   included.
  package func authorization(
    user: String, password: String, request: URLRequest, nonceCount: Int, clientNonce: String
  ) -> String? {
    switch kind {
    case .basic:
      guard !user.contains(":") else { return nil }
      return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    case .digest(let digest):
      guard let url = request.url else { return nil }
      return digest.authorization(
        user: user, password: password, method: (request.httpMethod ?? "GET").uppercased(),
        uri: Self.requestTarget(url), nonceCount: nonceCount, clientNonce: clientNonce)
    case .unusableDigest, .other:
      return nil
    }
  }

  /// The request target as sent on the request line: the percent-encoded path (`/` when empty)
  /// and query.
  package static func requestTarget(_ url: URL) -> String {
    let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
    var target = components?.percentEncodedPath ?? "/"
    if target.isEmpty { target = "/" }
    if let query = components?.percentEncodedQuery { target += "?" + query }
    return target
  }
}

/// The sender of the challenges the fetcher presents: a ``ChallengeBlock`` answers by its return
/// value, so every method here does nothing.
final class FetcherChallengeSender: NSObject, URLAuthenticationChallengeSender {
  func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
  func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
  func cancel(_ challenge: URLAuthenticationChallenge) {}
  func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
  func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}
