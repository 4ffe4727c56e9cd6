import Foundation
import Testing

@testable import HTTPLogging

/// The credentials of the common flows — OAuth 2.0 and OpenID Connect, SAML 2.0 bindings, JSON Web
/// Tokens, session and ticket identifiers, signed URLs — in each place a fetch carries them.
@Suite("LogRedactor: credentials of the common flows")
struct CredentialRedactionTests {
  let redactor = LogRedactor()

  /// A JWS compact serialization: `{"alg":"HS256"}.{"sub":"1"}.signature`.
  static let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLWJ5dGVz"

  @Test(
    "query items",
    arguments: [
      ("https://h/cb?code=AuthCode-1&state=xyz", "https://h/cb?code=_snip_&state=xyz"),
      (
        "https://h/cb#access_token=At-1&id_token=It-1&state=s",
        "https://h/cb#access_token=_snip_&id_token=_snip_&state=s"
      ),
      (
        "https://h/sso?SAMLRequest=fZJBb4&RelayState=r1&Signature=AbCd",
        "https://h/sso?SAMLRequest=_snip_&RelayState=r1&Signature=_snip_"
      ),
      ("https://h/acs?SAMLResponse=PHNhbWw&SAMLart=AAQ", "https://h/acs?SAMLResponse=_snip_&SAMLart=_snip_"),
      (
        "https://b.s3.amazonaws.com/o?X-Amz-Credential=AKIA%2F2026&X-Amz-Security-Token=Fw1&X-Amz-Signature=ab12&X-Amz-Expires=60",
        "https://b.s3.amazonaws.com/o?X-Amz-Credential=_snip_&X-Amz-Security-Token=_snip_&X-Amz-Signature=_snip_&X-Amz-Expires=60"
      ),
      (
        "https://h/o?X-Goog-Signature=9f9f&X-Goog-Credential=sa%40p",
        "https://h/o?X-Goog-Signature=_snip_&X-Goog-Credential=_snip_"
      ),
      ("https://h/blob?sv=2024&sig=Az1%3D&se=2026", "https://h/blob?sv=2024&sig=_snip_&se=2026"),
      (
        "https://h/app?JSESSIONID=J1&PHPSESSID=P1&session_id=S1&sid=D1",
        "https://h/app?JSESSIONID=_snip_&PHPSESSID=_snip_&session_id=_snip_&sid=_snip_"
      ),
      ("https://h/cas?ticket=ST-1-abc&service=x", "https://h/cas?ticket=_snip_&service=x"),
      ("https://h/p?bearer=B1&jwt=J2", "https://h/p?bearer=_snip_&jwt=_snip_"),
      // Everyday names that only contain a flow's word are kept.
      (
        "https://h/p?country_code=FR&ticket_count=2&state=CA&nonce=n1",
        "https://h/p?country_code=FR&ticket_count=2&state=CA&nonce=n1"
      ),
    ])
  func queries(url: String, expected: String) {
    var secrets = SecretSet()
    #expect(redactor.redactURLString(url, secrets: &secrets) == expected)
  }

  @Test(
    "form bodies (application/x-www-form-urlencoded)",
    arguments: [
      (
        "grant_type=authorization_code&code=AuthCode-2&redirect_uri=https%3A%2F%2Fh%2Fcb&code_verifier=Ver-2",
        "grant_type=authorization_code&code=_snip_&redirect_uri=https%3A%2F%2Fh%2Fcb&code_verifier=_snip_"
      ),
      (
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=As-3&client_assertion=Ca-3",
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=_snip_&client_assertion=_snip_"
      ),
      (
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=Dc-4&client_id=app",
        "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Adevice_code&device_code=_snip_&client_id=app"
      ),
      ("SAMLResponse=PHNhbWxwOlJlc3BvbnNl&RelayState=%2Fhome", "SAMLResponse=_snip_&RelayState=%2Fhome"),
      ("oauth_token=T5&oauth_verifier=V5", "oauth_token=_snip_&oauth_verifier=_snip_"),
      ("Code=C6&TICKET=T6&Session=S6", "Code=_snip_&TICKET=_snip_&Session=_snip_"),
    ])
  func forms(body: String, expected: String) {
    var secrets = SecretSet()
    #expect(redactor.redactFormEncoded(body, secrets: &secrets) == expected)
  }

  @Test(
    "JSON bodies: flow names redact strings, keep numbers and objects",
    arguments: [
      (
        #"{"access_token":"At-7","id_token":"It-7","refresh_token":"Rt-7","expires_in":3600}"#,
        #"{"access_token":"_snip_","expires_in":3600,"id_token":"_snip_","refresh_token":"_snip_"}"#
      ),
      (#"{"code":"AuthCode-8","state":"s8"}"#, #"{"code":"_snip_","state":"s8"}"#),
      (
        #"{"device_code":"Dc-9","user_code":"WDJB-MJHT"}"#,
        #"{"device_code":"_snip_","user_code":"WDJB-MJHT"}"#
      ),
      (#"{"error":{"code":404,"message":"not found"}}"#, #"{"error":{"code":404,"message":"not found"}}"#),
      (
        #"{"ticket":{"id":7,"subject":"s"},"sid":"Sid-10"}"#,
        #"{"sid":"_snip_","ticket":{"id":7,"subject":"s"}}"#
      ),
      (#"{"SAMLResponse":"PHNhbWw"}"#, #"{"SAMLResponse":"_snip_"}"#),
      (
        #"{"client_assertion":"Ca-11","ticket":"ST-11"}"#, #"{"client_assertion":"_snip_","ticket":"_snip_"}"#
      ),
    ])
  func json(body: String, expected: String) throws {
    var secrets = SecretSet()
    let object = try JSONSerialization.jsonObject(with: Data(body.utf8))
    let redacted = redactor.redactJSON(object, secrets: &secrets)
    let data = try JSONSerialization.data(
      withJSONObject: redacted, options: [.sortedKeys, .withoutEscapingSlashes])
    #expect(String(decoding: data, as: UTF8.self) == expected)
  }

  @Test(
    "headers: JWTs under any name, URLs in Location and Referer",
    arguments: [
      ("X-Debug-Token-Echo", "ok \(jwt)", "_snip_"),
      ("X-Request-Context", "ctx=\(jwt); v=1", "ctx=_snip_; v=1"),
      ("X-Amz-Security-Token", "FwoGZXIvYXdz", "_snip_"),
      ("X-Amz-Credential", "AKIA/2026/us-east-1/s3/aws4_request", "_snip_"),
      ("Location", "https://app/cb?code=AuthCode-12&state=s", "https://app/cb?code=_snip_&state=s"),
      ("Location", "/cb#id_token=\(jwt)&state=s", "/cb#id_token=_snip_&state=s"),
      ("Referer", "https://idp/sso?SAMLRequest=fZJBb4", "https://idp/sso?SAMLRequest=_snip_"),
      ("Accept", "application/json", "application/json"),
    ])
  func headers(name: String, value: String, expected: String) {
    let summary = redactor.summary(url: nil, headers: [name: value])
    #expect(summary.headers[name]?.hasSuffix(expected) == true, "\(summary.headers[name] ?? "")")
    #expect(summary.headers[name]?.contains(Self.jwt) == false)
  }

  @Test(
    "a JWT is found by its shape anywhere: URL path, free text",
    arguments: [
      "https://h/verify/\(jwt)",
      "https://h/p?next=\(jwt)",
      "https://h/p?data=eyJhbGciOiJSU0EtT0FFUCJ9.a2V5.aXY.Y2lwaGVy.dGFn",
    ])
  func tokensByShape(url: String) {
    let summary = redactor.summary(url: url, texts: ["server said: \(Self.jwt)"])
    let redacted = summary.url ?? ""
    #expect(!redacted.contains("eyJ"), "\(redacted)")
    #expect(redacted.contains("_snip_"))
    #expect(summary.texts == ["server said: _snip_"])
  }

  @Test(
    "a URL that does not parse loses its user info, query and fragment",
    arguments: [
      // An unclosed IPv6 literal, a port that is not a number.
      ("http://[::1/p?token=Tok-13&x=1", "http://[::1/p?_snip_"),
      ("http://u:Pw-13@h:port/p?code=AuthCode-13#frag", "http://_snip_@h:port/p?_snip_#_snip_"),
      ("//u:Pw-14@h:80x/cb?ticket=ST-14", "//_snip_@h:80x/cb?_snip_"),
      ("http://h:-1/cb#access_token=At-14", "http://h:-1/cb#_snip_"),
      ("http://h:port/p", "http://h:port/p"),
    ])
  func unparsableURLs(url: String, expected: String) {
    #expect(URLComponents(string: url) == nil)
    var secrets = SecretSet()
    #expect(redactor.redactURLString(url, secrets: &secrets) == expected)
    let location = redactor.summary(url: nil, headers: ["Location": url]).headers["Location"]
    #expect(location == expected)
  }

  @Test("secrets named in an unparsable URL are still scrubbed where they are echoed")
  func unparsableURLSecretsScrubbed() {
    let summary = redactor.summary(
      url: "http://u:Pw-15@h:port/p?code=AuthCode-15&q=1", texts: ["echo: AuthCode-15 Pw-15"])
    #expect(summary.url == "http://_snip_@h:port/p?_snip_")
    #expect(summary.texts == ["echo: _snip_ _snip_"])
  }

  @Test(
    "a redacted name=value keeps the name and the =",
    arguments: [
      ("bearer=Xyz-16", "bearer=_snip_"),
      ("Bearer=Xyz-16&a=1", "Bearer=_snip_&a=1"),
      ("note: bearer = Xyz-16", "note: bearer = _snip_"),
      ("Authorization: Bearer Xyz-16", "Authorization: Bearer _snip_"),
      ("oauth=Xyz-16", "oauth=_snip_"),
      ("code=AuthCode-17 sid=Sid-17", "code=_snip_ sid=_snip_"),
      ("status code=5000 after 5000 ms; code=Ab-18", "status code=5000 after 5000 ms; code=_snip_"),
    ])
  func nameAndEqualsKept(text: String, expected: String) {
    var secrets = SecretSet()
    #expect(redactor.redactFreeText(text, secrets: &secrets) == expected)
  }
}
