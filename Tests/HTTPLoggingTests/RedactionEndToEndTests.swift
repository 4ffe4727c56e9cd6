import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@testable import HTTPLogging

extension LoggingFileTests {
  @Test("secrets of every kind, echoed by the server, appear in no log file and not in fetcher.log")
  func echoedSecretsAreRedactedEverywhere() async throws {
    let secrets = [
      "HeaderToken-11111", "QueryToken-22222", "CookieValue-33333", "ApiKey-44444", "FormPassword-55555",
      "JsonSecret-66666",
    ]
    try await withLogging { folder in
      // Authorization, echoed in the JSON body of /headers.
      let headers = server.fetcher("/headers?access_token=\(secrets[1])&q=cats")
      headers.setRequestValue("Bearer \(secrets[0])", forHTTPHeaderField: "Authorization")
      headers.setRequestValue("session=\(secrets[2])", forHTTPHeaderField: "Cookie")
      headers.setRequestValue(secrets[3], forHTTPHeaderField: "X-Api-Key")
      headers.comment = "echo"
      let result = await headers.fetchResult()
      #expect(result.error == nil)
      #expect(String(decoding: result.data ?? Data(), as: UTF8.self).contains(secrets[0]))

      // A form body echoed back.
      let form = server.fetcher("/echo")
      form.bodyData = Data("user=me&password=\(secrets[4])".utf8)
      form.setRequestValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
      _ = await form.fetchResult()

      // A JSON body echoed back.
      let json = server.fetcher("/echo")
      json.bodyData = Data(#"{"user":"me","auth":{"client_secret":"\#(secrets[5])"}}"#.utf8)
      json.setRequestValue("application/json", forHTTPHeaderField: "Content-Type")
      _ = await json.fetchResult()

      // Set-Cookie in a response, and its value echoed in a second response.
      let cookie = server.fetcher("/set-cookie?c=sid=\(secrets[2])")
      _ = await cookie.fetchResult()

      SessionFetcher.flushLogs()
      let files = allFiles(under: folder)
      // 4 text logs, index.html, log.har, the symlink's target, and the /headers body (the others
      // are short enough to be only in the text logs and the HAR file).
      #expect(files.count >= 8)
      for (url, data) in files {
        for secret in secrets {
          #expect(data.range(of: Data(secret.utf8)) == nil, "\(secret) in \(url.lastPathComponent)")
        }
      }
      for fetcher in [headers, form, json, cookie] {
        let log = try #require(fetcher.log)
        for secret in secrets { #expect(!log.contains(secret), "\(secret) in fetcher.log") }
        #expect(log.contains("_snip_"))
      }
      let html = try runFile("index.html")
      #expect(!html.contains("truncated"))  // redaction shortens bodies; that is no truncation
      let log = try #require(headers.log)
      #expect(log.contains("Authorization: Bearer _snip_"))
      #expect(log.contains("access_token=_snip_&q=cats"))
      #expect(log.contains("Cookie: session=_snip_"))
    }
  }

  @Test("credentials of OAuth, SAML, sessions, signed URLs and JWTs appear in no log file, HAR or page")
  func flowCredentialsAreRedactedEverywhere() async throws {
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI4MDAwMiJ9.JwtSig-80002"
    let secrets = [
      "AuthCode-80001", jwt, "FormCode-80003", "Verifier-80004", "Assert-80005", "SamlResp-80006",
      "Device-80007", "Ticket-80008", "AmzSig-80009", "AmzCred-80010", "AmzTok-80011", "PhpSess-80012",
      "SamlReq-80013", "Sid-80014", "BearerVal-80015", "UrlPass-80016", "LocCode-80017", "JwtSig-80002",
    ]
    func encoded(_ text: String) -> String {
      text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }
    try await withLogging { folder in
      // An authorization code in a redirect's Location, echoed by /headers with a JWT header.
      let callback = server.fetcher("/redirect?to=" + encoded("/headers?code=\(secrets[0])&state=keep-80100"))
      callback.setRequestValue(jwt, forHTTPHeaderField: "X-Debug-Context")
      // The token request: a form body, echoed back.
      let token = server.fetcher("/echo")
      token.bodyData = Data(
        ("grant_type=authorization_code&code=\(secrets[2])&code_verifier=\(secrets[3])"
          + "&client_assertion=\(secrets[4])").utf8)
      token.setRequestValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
      // A SAML POST binding.
      let saml = server.fetcher("/echo")
      saml.bodyData = Data("SAMLResponse=\(secrets[5])&RelayState=%2Fhome".utf8)
      saml.setRequestValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
      // A JSON body with an ID token, a device code and a ticket.
      let json = server.fetcher("/echo")
      json.bodyData = Data(
        #"{"id_token":"\#(jwt)","device_code":"\#(secrets[6])","ticket":"\#(secrets[7])","code":404}"#.utf8)
      json.setRequestValue("application/json", forHTTPHeaderField: "Content-Type")
      // A signed URL with session ids and a SAML redirect binding.
      let signed = server.fetcher(
        "/text?value=hi&X-Amz-Signature=\(secrets[8])&X-Amz-Credential=\(secrets[9])"
          + "&X-Amz-Security-Token=\(secrets[10])&PHPSESSID=\(secrets[11])&SAMLRequest=\(secrets[12])"
          + "&sid=\(secrets[13])")
      // `bearer=X` in a text body.
      let bearer = server.fetcher("/text?value=" + encoded("bearer=\(secrets[14])"))
      // A Location that does not parse (a port that is not a number), on a 201 that is not followed.
      let created = server.fetcher(
        "/redirect?status=201&to=" + encoded("http://u:\(secrets[15])@h:port/cb?code=\(secrets[16])"))
      let fetchers = [callback, token, saml, json, signed, bearer, created]
      for fetcher in fetchers { _ = await fetcher.fetchResult() }

      SessionFetcher.flushLogs()
      let files = allFiles(under: folder)
      #expect(files.contains { $0.0.lastPathComponent == "log.har" })
      #expect(files.contains { $0.0.lastPathComponent == "index.html" })
      for (url, data) in files {
        for secret in secrets {
          #expect(data.range(of: Data(secret.utf8)) == nil, "\(secret) in \(url.lastPathComponent)")
        }
        #expect(data.range(of: Data("bearer_snip_".utf8)) == nil, "bearer_snip_ in \(url.lastPathComponent)")
      }
      for fetcher in fetchers {
        let log = try #require(fetcher.log)
        for secret in secrets { #expect(!log.contains(secret), "\(secret) in fetcher.log") }
      }
      #expect(callback.log?.contains("state=keep-80100") == true)
      #expect(bearer.log?.contains("bearer=_snip_") == true)
      #expect(created.log?.contains("http://_snip_@h:port/cb?_snip_") == true)
      #expect(json.log?.contains(#""code" : 404"#) == true)
    }
  }

  @Test("redaction can be turned off explicitly")
  func redactionOff() async throws {
    try await withLogging(redaction: false) { _ in
      let fetcher = server.fetcher("/headers")
      fetcher.setRequestValue("Bearer Visible-77777", forHTTPHeaderField: "Authorization")
      _ = await fetcher.fetchResult()
      #expect(fetcher.log?.contains("Visible-77777") == true)
      let text = try runFile("fetch_1.txt")
      #expect(text.contains("Visible-77777"))
    }
  }
}
