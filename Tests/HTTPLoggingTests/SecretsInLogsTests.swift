import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@testable import HTTPLogging

extension LoggingFileTests {
  @Test("security: credentials of every carrier appear in no log output (files, HAR, fetcher.log)")
  func credentialsNeverLogged() async throws {
    let secrets = [
      "ProxyAuth-70001", "UrlPassword-70002", "RedirectToken-70003", "BasicPass-70004", "SetCookie-70005",
      "BearerAfterRedirect-70006", "ProxyURLPassword-70007", "ProxyCredential-70008",
    ]
    try await withLogging { folder in
      var fetchers: [SessionFetcher] = []

      // Proxy-Authorization set by the caller.
      let proxy = server.fetcher("/headers")
      proxy.setRequestValue("Basic \(secrets[0])", forHTTPHeaderField: "Proxy-Authorization")
      fetchers.append(proxy)

      // A password in the URL's user info.
      let userInfoURL = try #require(
        URL(string: "http://user:\(secrets[1])@127.0.0.1:\(server.port)/headers"))
      let userInfo = SessionFetcher.fetcher(url: userInfoURL)
      userInfo.setProperty(true, forKey: loggingTestMarker)
      userInfo.allowLocalhostRequest = true
      userInfo.callbackQueue = DispatchQueue(label: "SecretsInLogsTests")
      fetchers.append(userInfo)

      // A token in a redirect's Location and in the followed URL.
      let redirect = server.fetcher(
        "/redirect?to=" + "/headers?access_token=\(secrets[2])".addingPercentEncoding(
          withAllowedCharacters: .alphanumerics)!)
      redirect.setRequestValue("Bearer \(secrets[5])", forHTTPHeaderField: "Authorization")
      fetchers.append(redirect)

      // Basic credentials answered to a challenge (the password appears in no URL).
      let expected = "Basic " + Data("user:\(secrets[3])".utf8).base64EncodedString()
      server.route("/protected") { request in
        request.header("Authorization") == expected
          ? .text("welcome")
          : TestResponse.status(401).adding(header: "WWW-Authenticate", "Basic realm=\"test\"")
      }
      let basic = server.fetcher("/protected")
      basic.credential = URLCredential(user: "user", password: secrets[3], persistence: .none)
      fetchers.append(basic)

      // A Set-Cookie value, sent back on the next request.
      let cookie = server.fetcher("/set-cookie?c=sid=\(secrets[4])&redirect=/cookies")
      // A private jar: the shared one would send this cookie to every 127.0.0.1 port other suites use.
      cookie.cookieStorage = SessionCookieStorage()
      fetchers.append(cookie)

      // Proxy settings with a password in the URL and a credential (libcurl engine; every host
      // bypasses the proxy, so the fetch succeeds directly).
      if FetcherEngine.libcurl.isAvailable {
        let proxied = server.fetcher("/headers")
        proxied.engine = .libcurl
        proxied.proxySettings = ProxySettings(
          url: URL(string: "http://user:\(secrets[6])@127.0.0.1:9"),
          credential: URLCredential(user: "user", password: secrets[7], persistence: .none),
          bypassHosts: ["*"])
        fetchers.append(proxied)
      }

      for fetcher in fetchers { _ = await fetcher.fetchResult() }
      #expect(basic.statusCode == 200)
      SessionFetcher.flushLogs()

      let files = allFiles(under: folder)
      #expect(files.contains { $0.0.lastPathComponent == "log.har" })
      for (url, data) in files {
        for secret in secrets {
          #expect(data.range(of: Data(secret.utf8)) == nil, "\(secret) in \(url.lastPathComponent)")
        }
      }
      for fetcher in fetchers {
        let log = try #require(fetcher.log)
        for secret in secrets { #expect(!log.contains(secret), "\(secret) in fetcher.log of \(fetcher)") }
      }
    }
  }
}
