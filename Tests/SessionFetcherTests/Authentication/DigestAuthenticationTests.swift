import Foundation
import SessionFetcher
import Testing

@Suite("Digest authentication: hashes, challenges and answers")
struct DigestAuthenticationTests {
  static let md5Vectors: [(input: String, digest: String)] = [
    ("", "d41d8cd98f00b204e9800998ecf8427e"),
    ("a", "0cc175b9c0f1b6a831c399e269772661"),
    ("abc", "900150983cd24fb0d6963f7d28e17f72"),
    ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
    ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
    (
      "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
      "57edf4a22be3c955ac49da2e2107b67a"
    ),
  ]

  static let sha256Vectors: [(input: String, digest: String)] = [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
  ]

  @Test(arguments: md5Vectors.indices)
  func md5(_ index: Int) {
    let vector = Self.md5Vectors[index]
    #expect(MessageDigest.md5Hex(vector.input.utf8) == vector.digest)
  }

  @Test(arguments: sha256Vectors.indices)
  func sha256(_ index: Int) {
    let vector = Self.sha256Vectors[index]
    #expect(MessageDigest.sha256Hex(vector.input.utf8) == vector.digest)
  }

  @Test func bothHashesTakeManyBlocks() {
    let bytes = Array((0..<1024).map { UInt8($0 % 256) })
    #expect(MessageDigest.md5Hex(bytes) == "b2ea9f7fcea831a4a63b213f41a8855b")
    #expect(
      MessageDigest.sha256Hex(bytes) == "785b0751fc2c53dc14a4ce3d800e69ef9ce1009eb327ccf458afe09c242c26c9")
  }

  /// RFC 7616 §3.9.1 (MD5 and SHA-256), RFC 2617 §3.5 (MD5), and the -sess and RFC 2069 forms of
  /// the RFC 7616 example.
  static let answers:
    [(
      algorithm: String, qop: Bool, user: String, password: String, realm: String, nonce: String,
      cnonce: String,
      nc: Int, response: String
    )] = [
      (
        "MD5", true, "Mufasa", "Circle of Life", "http-auth@example.org",
        "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", 1,
        "8ca523f5e9506fed4657c9700eebdbec"
      ),
      (
        "SHA-256", true, "Mufasa", "Circle of Life", "http-auth@example.org",
        "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", 1,
        "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"
      ),
      (
        "MD5", true, "Mufasa", "Circle Of Life", "testrealm@host.com", "dcd98b7102dd2f0e8b11d0f600bfb0c093",
        "0a4f113b", 1, "6629fae49393a05397450978507c4ef1"
      ),
      (
        "MD5-sess", true, "Mufasa", "Circle of Life", "http-auth@example.org",
        "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", 2,
        "6914b51e16f9459d9abc967ad41c4599"
      ),
      (
        "SHA-256-sess", true, "Mufasa", "Circle of Life", "http-auth@example.org",
        "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", 2,
        "6bb0010aa4bdf46422a798c509ea32e256f27bd37de5cc3bdf8ed51e1d77d650"
      ),
      (
        "MD5", false, "Mufasa", "Circle of Life", "http-auth@example.org",
        "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "", 1, "7b2cc3b30e75b4777ea31027084363fd"
      ),
      (
        "SHA-256", false, "Mufasa", "Circle of Life", "http-auth@example.org",
        "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", "", 1,
        "a1306b0595a6c7fe96c448631fb5cfbd5107bd1fe1da729d978dd7446b812363"
      ),
    ]

  @Test(arguments: answers.indices)
  func responseMatchesTheVector(_ index: Int) throws {
    let vector = Self.answers[index]
    var parameters = ["realm": vector.realm, "nonce": vector.nonce, "algorithm": vector.algorithm]
    if vector.qop { parameters["qop"] = "auth" }
    let challenge = try #require(
      DigestChallenge(AuthenticateChallenge(scheme: "Digest", parameters: parameters)))
    let response = challenge.response(
      user: vector.user, password: vector.password, method: "GET", uri: "/dir/index.html",
      nonceCount: vector.nc, clientNonce: vector.cnonce)
    #expect(response == vector.response)
  }

  @Test func authorizationHeaderOfTheRFC7616Example() throws {
    let header =
      #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=SHA-256, "#
      + #"nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
    let challenge = try #require(ServerChallenge(header: header))
    guard case .digest(let digest) = challenge.kind else {
      Issue.record("not a usable Digest challenge: \(challenge.kind)")
      return
    }
    #expect(challenge.authenticationMethod == NSURLAuthenticationMethodHTTPDigest)
    #expect(challenge.realm == "http-auth@example.org")
    let value = digest.authorization(
      user: "Mufasa", password: "Circle of Life", method: "GET", uri: "/dir/index.html", nonceCount: 1,
      clientNonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
    #expect(
      value
        == #"Digest username="Mufasa", realm="http-auth@example.org", "#
        + #"nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", uri="/dir/index.html", algorithm=SHA-256, "#
        + #"response="753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1", qop=auth, nc=00000001, "#
        + #"cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
    )
  }

  @Test func nonceCountsAreEightHexDigits() throws {
    let challenge = try #require(
      DigestChallenge(
        AuthenticateChallenge(scheme: "Digest", parameters: ["realm": "r", "nonce": "n", "qop": "auth"])))
    let value = try #require(
      challenge.authorization(
        user: "u", password: "p", method: "GET", uri: "/", nonceCount: 26, clientNonce: "c"))
    #expect(value.contains("nc=0000001a"))
  }

  /// What each `WWW-Authenticate` value offers: the kind the fetcher takes, and its realm.
  static let headers: [(header: String, kind: String, realm: String?)] = [
    (#"Basic realm="test""#, "basic", "test"),
    ("basic realm=plain", "basic", "plain"),
    (#"Bearer realm="api", error="invalid_token""#, "other", "api"),
    (#"Digest realm="a", nonce="n", algorithm=MD5"#, "digest MD5", "a"),
    (#"Digest realm="a", nonce="n""#, "digest MD5", "a"),
    (#"Digest realm="a", nonce="n", algorithm=md5-SESS, qop="auth""#, "digest MD5-sess", "a"),
    // Several challenges, in one value or joined from several header lines: the strongest.
    (
      #"Digest realm="a", nonce="n", algorithm=MD5, Digest realm="a", nonce="m", algorithm=SHA-256"#,
      "digest SHA-256", "a"
    ),
    (#"Basic realm="b", Digest realm="d", nonce="n", qop="auth""#, "digest MD5", "d"),
    (#"Digest realm="d", nonce="n", algorithm=SHA-512-256, Basic realm="b""#, "basic", "b"),
    // Unknown algorithm, missing nonce or realm, qop without auth, unterminated quote.
    (#"Digest realm="d", nonce="n", algorithm=SHA-512"#, "unusable", "d"),
    (#"Digest realm="d""#, "unusable", "d"),
    (#"Digest nonce="n""#, "unusable", nil),
    (#"Digest realm="d", nonce="n", qop="auth-int""#, "unusable", "d"),
    (#"Digest realm="d", nonce="n", algorithm=MD5-sess"#, "unusable", "d"),
    (#"Digest realm="d", nonce="n"#, "other", nil),
    (#"Negotiate abc=="#, "other", nil),
    (#"Digest realm="a\"b", nonce="n\\m""#, "digest MD5", #"a"b"#),
  ]

  @Test(arguments: headers.indices)
  func challengeOfAHeader(_ index: Int) {
    let vector = Self.headers[index]
    let challenge = ServerChallenge(header: vector.header)
    let kind: String
    switch challenge?.kind {
    case .basic?: kind = "basic"
    case .digest(let digest)?: kind = "digest \(digest.algorithm.rawValue)"
    case .unusableDigest?: kind = "unusable"
    case .other?, nil: kind = "other"
    }
    #expect(kind == vector.kind, "\(vector.header)")
    #expect(challenge?.realm == vector.realm, "\(vector.header)")
  }

  @Test func garbageHeadersNeverCrash() {
    let inputs = [
      "", ",,,", "=", "Digest =", #"Digest realm=""#, #"Digest realm="\"#, "Digest realm=a,,,nonce=b",
      "\u{0}\u{1}", "Digest " + String(repeating: "a=b, ", count: 2000), "Ünïcödé realm=é",
    ]
    for input in inputs {
      let challenge = ServerChallenge(header: input)
      _ = challenge?.authorization(
        user: "u", password: "p", request: URLRequest(url: URL(string: "http://h/")!), nonceCount: 1,
        clientNonce: "c")
    }
  }

  @Test func aBasicAnswerIsTheBase64OfUserAndPassword() throws {
    let challenge = try #require(ServerChallenge(header: #"Basic realm="x""#))
    let request = URLRequest(url: URL(string: "http://h/p")!)
    #expect(
      challenge.authorization(
        user: "Aladdin", password: "open sesame", request: request, nonceCount: 1, clientNonce: "")
        == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
    // RFC 7617: a user name with a colon cannot be sent.
    #expect(
      challenge.authorization(user: "a:b", password: "p", request: request, nonceCount: 1, clientNonce: "")
        == nil)
  }

  @Test func theDigestURIIsTheRequestTargetAsSent() {
    #expect(
      ServerChallenge.requestTarget(URL(string: "http://h:8/a%20b/c?x=1&y=%2F")!) == "/a%20b/c?x=1&y=%2F")
    #expect(ServerChallenge.requestTarget(URL(string: "http://h")!) == "/")
  }
}
