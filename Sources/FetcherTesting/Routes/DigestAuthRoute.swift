import Foundation
import SessionFetcher

/// `/digest-auth/QOP/USER/PASS/ALGORITHM`: HTTP Digest authentication (RFC 7616), checked by the
/// server. QOP is `auth` (or `none`: the RFC 2069 form); ALGORITHM is `MD5`, `MD5-sess`, `SHA-256`
/// or `SHA-256-sess` (another name is offered as it is, and nothing answers it).
///
/// Without a valid `Authorization: Digest`: 401 with `WWW-Authenticate: Digest realm="test", …`
/// (`?challenge=VALUE` offers VALUE instead; `?stale=1` offers a nonce starting `old-`, which,
/// answered correctly, gets a 401 with `stale=true` and a nonce starting `fresh-`). With a valid
/// one: 200 JSON `{"authenticated":true,"user":USER,"nc":NC}` (`?then=URL`: a 302 to URL instead).
enum DigestAuthRoute {
  static let realm = "test"
  static let opaque = "0paque"

  static func respond(
    qop: String, user: String, password: String, algorithm: String, _ request: RecordedRequest
  )
    -> ResponsePlan
  {
    let stale = request.flagParameter("stale")
    guard let answer = authorization(request) else {
      return challenge(qop: qop, algorithm: algorithm, request, stale: false, prefix: stale ? "old-" : "")
    }
    guard let nonce = answer["nonce"],
      let offered = DigestChallenge(
        AuthenticateChallenge(
          scheme: "Digest",
          parameters: ["realm": realm, "nonce": nonce, "algorithm": algorithm]
            .merging(qop == "auth" ? ["qop": "auth"] : [:]) { $1 })),
      answer["username"] == user, answer["realm"] == realm, answer["uri"] == request.target,
      answer["opaque"] == opaque, answer["algorithm"].map({ $0.equalsIgnoringASCIICase(algorithm) }) ?? true,
      qop != "auth" || answer["qop"] == "auth"
    else {
      return challenge(qop: qop, algorithm: algorithm, request, stale: false, prefix: stale ? "old-" : "")
    }
    let nonceCount = answer["nc"].flatMap { Int($0, radix: 16) } ?? 0
    let expected = offered.response(
      user: user, password: password, method: request.method, uri: request.target, nonceCount: nonceCount,
      clientNonce: answer["cnonce"] ?? "")
    guard answer["response"] == expected, qop != "auth" || (nonceCount > 0 && answer["cnonce"] != nil) else {
      return challenge(qop: qop, algorithm: algorithm, request, stale: false, prefix: stale ? "old-" : "")
    }
    if stale, nonce.hasPrefix("old-") {
      return challenge(qop: qop, algorithm: algorithm, request, stale: true, prefix: "fresh-")
    }
    if let next = request.query["then"] {
      return .text("redirecting", status: 302, headers: [HTTPHeader(name: "Location", value: next)])
    }
    return .json(
      .object([
        ("authenticated", .bool(true)), ("user", .string(user)), ("nc", .string(answer["nc"] ?? "")),
      ]))
  }

  private static func challenge(
    qop: String, algorithm: String, _ request: RecordedRequest, stale: Bool, prefix: String
  )
    -> ResponsePlan
  {
    let nonce = prefix + MessageDigest.md5Hex(Array(UUID().uuidString.utf8))
    var value =
      "Digest realm=\"\(realm)\", nonce=\"\(nonce)\", opaque=\"\(opaque)\", algorithm=\(algorithm)"
    if qop == "auth" { value += ", qop=\"auth\"" }
    if stale { value += ", stale=true" }
    if let raw = request.query["challenge"] { value = raw }
    return .json(
      .object([("authenticated", .bool(false))]), status: 401,
      headers: [HTTPHeader(name: "WWW-Authenticate", value: value)])
  }

  /// The parameters of the request's `Authorization: Digest`, or nil.
  private static func authorization(_ request: RecordedRequest) -> [String: String]? {
    guard let value = request.header("Authorization"),
      let challenge = AuthenticateHeader.challenges(value).first, challenge.isScheme("Digest")
    else { return nil }
    return challenge.parameters
  }
}
