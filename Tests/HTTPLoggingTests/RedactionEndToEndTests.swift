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
