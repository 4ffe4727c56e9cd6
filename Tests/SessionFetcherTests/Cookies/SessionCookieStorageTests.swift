import Foundation
import Testing

@testable import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite("SessionCookieStorage")
struct SessionCookieStorageTests {
  // MARK: Ported from GTMSessionFetcherCookieTest

  @Test func gtmCookieStorage() {
    let clock = CookieTestClock()
    let storage = clock.makeStorage()
    let fullURL = cookieURL("http://photos.example.com")
    let subdomainURL = cookieURL("http://frogbreath.example.com")
    #expect(storage.cookies(for: fullURL).isEmpty)

    let cookie1 = SessionCookie(
      name: "Snark", value: "cook1=foo", domain: "photos.example.com", isHostOnly: true,
      creationDate: clock.now)
    let cookie2 = SessionCookie(
      name: "Trump", value: "cook2=gnu", domain: ".example.com", creationDate: clock.now)
    // Replaces cookie 2, and expires in 2 seconds.
    let cookie2a = SessionCookie(
      name: "Trump", value: "cook2=snu", domain: ".example.com",
      expiresDate: clock.now.addingTimeInterval(2), creationDate: clock.now)

    storage.setCookies([cookie1, cookie2])
    #expect(storage.cookies(for: fullURL).count == 2)
    #expect(storage.cookies(for: subdomainURL).count == 1)

    storage.setCookies([cookie2a])
    #expect(storage.cookies(for: subdomainURL).map(\.value) == ["cook2=snu"])

    clock.advance(by: 3)
    storage.setCookies([])  // purges expired cookies
    #expect(storage.cookies(for: subdomainURL).isEmpty)
    #expect(storage.cookies(for: fullURL).count == 1)

    storage.removeAllCookies()
    #expect(storage.cookies(for: fullURL).isEmpty)
  }

  @Test func gtmStrictCookieDomain() {
    let storage = SessionCookieStorage()
    let date = CookieTestDates.june1st2021
    storage.setCookies([
      SessionCookie(name: "example1a", value: "cook1=foo", domain: "example.com", creationDate: date),
      SessionCookie(name: "example1b", value: "cook2=who", domain: "example.com", creationDate: date),
      SessionCookie(name: "example1c", value: "zum=oop", domain: "morg.example.com", creationDate: date),
      SessionCookie(name: "example1d", value: "zum4=nar", domain: "nurm.example.com", creationDate: date),
      SessionCookie(name: "myexample", value: "cook5=gnu", domain: "myexample.com", creationDate: date),
    ])
    let expectations: [(String, [String])] = [
      ("http://example.com", ["example1a", "example1b"]),
      ("http://morg.example.com", ["example1a", "example1b", "example1c"]),
      ("http://frap.example.com", ["example1a", "example1b"]),
      ("http://myexample.com", ["myexample"]),
    ]
    for (url, names) in expectations {
      #expect(storage.cookies(for: cookieURL(url)).map(\.name) == names, "\(url)")
    }
  }

  // MARK: Matching

  struct SendCase: Sendable, CustomTestStringConvertible {
    var setBy: String
    var header: String
    var requestURL: String
    var sent: Bool
    var testDescription: String { "\(header) from \(setBy) → \(requestURL)" }
  }

  static let sendCases: [SendCase] = [
    // Host-only versus domain cookies.
    SendCase(
      setBy: "https://www.example.com/", header: "a=1", requestURL: "https://www.example.com/", sent: true),
    SendCase(
      setBy: "https://www.example.com/", header: "a=1", requestURL: "https://example.com/", sent: false),
    SendCase(
      setBy: "https://www.example.com/", header: "a=1", requestURL: "https://x.www.example.com/", sent: false),
    SendCase(
      setBy: "https://www.example.com/", header: "a=1; Domain=example.com",
      requestURL: "https://example.com/",
      sent: true),
    SendCase(
      setBy: "https://www.example.com/", header: "a=1; Domain=example.com",
      requestURL: "https://deep.sub.example.com/", sent: true),
    SendCase(
      setBy: "https://www.example.com/", header: "a=1; Domain=example.com",
      requestURL: "https://myexample.com/",
      sent: false),
    SendCase(
      setBy: "https://www.example.com/", header: "a=1", requestURL: "https://WWW.EXAMPLE.COM/", sent: true),
    // Paths.
    SendCase(
      setBy: "https://h.example.com/docs/x", header: "a=1", requestURL: "https://h.example.com/docs",
      sent: true),
    SendCase(
      setBy: "https://h.example.com/docs/x", header: "a=1", requestURL: "https://h.example.com/docs/web/y",
      sent: true),
    SendCase(
      setBy: "https://h.example.com/docs/x", header: "a=1", requestURL: "https://h.example.com/docsets",
      sent: false),
    SendCase(
      setBy: "https://h.example.com/docs/x", header: "a=1", requestURL: "https://h.example.com/", sent: false),
    // Secure cookies go over https only, not even to http://localhost.
    SendCase(
      setBy: "https://example.com/", header: "a=1; Secure", requestURL: "https://example.com/", sent: true),
    SendCase(
      setBy: "https://example.com/", header: "a=1; Secure", requestURL: "http://example.com/", sent: false),
    SendCase(
      setBy: "https://localhost/", header: "a=1; Secure", requestURL: "http://localhost/", sent: false),
    SendCase(setBy: "https://example.com/", header: "a=1", requestURL: "http://example.com/", sent: true),
    // Ports are ignored; localhost names are distinct hosts.
    SendCase(
      setBy: "http://127.0.0.1:8080/", header: "a=1", requestURL: "http://127.0.0.1:9090/", sent: true),
    SendCase(
      setBy: "http://127.0.0.1:8080/", header: "a=1", requestURL: "http://localhost:8080/", sent: false),
    SendCase(
      setBy: "http://localhost:8080/", header: "a=1", requestURL: "http://localhost:1234/x", sent: true),
    SendCase(
      setBy: "http://localhost:8080/", header: "a=1", requestURL: "http://127.0.0.1:8080/", sent: false),
    SendCase(
      setBy: "http://localhost:8080/", header: "a=1", requestURL: "http://app.localhost:8080/", sent: false),
    SendCase(setBy: "http://[::1]:8080/", header: "a=1", requestURL: "http://[::1]:9090/", sent: true),
    SendCase(setBy: "http://[::1]:8080/", header: "a=1", requestURL: "http://127.0.0.1:8080/", sent: false),
  ]

  @Test("which cookies are sent", arguments: sendCases)
  func sending(_ testCase: SendCase) {
    let storage = SessionCookieStorage()
    storage.handleSetCookieHeaders([testCase.header], for: cookieURL(testCase.setBy))
    #expect(storage.cookies.count == 1)
    let header = storage.cookieHeaderValue(for: cookieURL(testCase.requestURL))
    #expect(header == (testCase.sent ? "a=1" : nil))
  }

  @Test func headerOrderIsLongestPathThenEarliestCreation() {
    let clock = CookieTestClock()
    let storage = clock.makeStorage()
    let url = cookieURL("https://example.com/docs/web/page")
    storage.handleSetCookieHeaders(["root1=1; Path=/"], for: url)
    clock.advance(by: 1)
    storage.handleSetCookieHeaders(["web=2"], for: url)  // default path /docs/web
    clock.advance(by: 1)
    storage.handleSetCookieHeaders(["docs=3; Path=/docs", "root2=4; Path=/"], for: url)
    clock.advance(by: 1)
    // Replacing root1 keeps its creation date, so it stays before root2.
    storage.handleSetCookieHeaders(["root1=5; Path=/"], for: url)
    #expect(storage.cookieHeaderValue(for: url) == "web=2; docs=3; root1=5; root2=4")
    #expect(
      storage.cookieHeaderValue(for: cookieURL("https://example.com/docs")) == "docs=3; root1=5; root2=4")
  }

  @Test func emptyNameIsSentAsValueOnly() {
    let storage = SessionCookieStorage()
    storage.handleSetCookieHeaders(["=token", "a=1"], for: cookieURL("https://example.com/"))
    #expect(storage.cookieHeaderValue(for: cookieURL("https://example.com/")) == "token; a=1")
  }

  @Test func nothingMatchingGivesNilHeader() {
    let storage = SessionCookieStorage()
    #expect(storage.cookies(for: cookieURL("https://example.com/")).isEmpty)
    #expect(storage.cookieHeaderValue(for: cookieURL("https://example.com/")) == nil)
  }

  // MARK: Replacement, deletion, expiry

  @Test func replacementKeepsCreationDate() throws {
    let clock = CookieTestClock()
    let storage = clock.makeStorage()
    let url = cookieURL("https://example.com/")
    storage.handleSetCookieHeaders(["a=1"], for: url)
    let created = clock.now
    clock.advance(by: 100)
    storage.handleSetCookieHeaders(["a=2; HttpOnly"], for: url)
    let cookie = try #require(storage.cookies.first)
    #expect(storage.cookies.count == 1)
    #expect(cookie.value == "2")
    #expect(cookie.isHTTPOnly)
    #expect(cookie.creationDate == created)
  }

  @Test func sameNameOnOtherPathOrDomainIsAnotherCookie() {
    let storage = SessionCookieStorage()
    let url = cookieURL("https://www.example.com/docs/x")
    storage.handleSetCookieHeaders(["a=1", "a=2; Path=/", "a=3; Domain=example.com", "a=4"], for: url)
    #expect(storage.cookies.map(\.value).sorted() == ["2", "3", "4"])
  }

  static let deletingHeaders = [
    "a=gone; Max-Age=0",
    "a=gone; Max-Age=-1",
    "a=; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
    "a=x; Expires=Mon, 31 May 2021 23:59:59 GMT",  // a second before the test clock's now
  ]

  @Test("an expired cookie deletes the stored one", arguments: deletingHeaders)
  func deletionByExpiredCookie(header: String) {
    let clock = CookieTestClock()
    let storage = clock.makeStorage()
    let url = cookieURL("https://example.com/")
    storage.handleSetCookieHeaders(["a=1", "b=2"], for: url)
    storage.handleSetCookieHeaders([header], for: url)
    #expect(storage.cookieHeaderValue(for: url) == "b=2")
  }

  @Test func expiredCookiesArePurged() {
    let clock = CookieTestClock()
    let storage = clock.makeStorage()
    let url = cookieURL("https://example.com/")
    storage.handleSetCookieHeaders(["short=1; Max-Age=10", "long=2; Max-Age=1000", "session=3"], for: url)
    #expect(storage.cookies.count == 3)
    clock.advance(by: 10)  // expiry at exactly now counts as expired
    #expect(storage.cookieHeaderValue(for: url) == "long=2; session=3")
    clock.advance(by: 1000)
    #expect(storage.cookies.map(\.name) == ["session"])
  }

  @Test func deleteAndRemove() {
    let clock = CookieTestClock()
    let storage = clock.makeStorage()
    let url = cookieURL("https://example.com/")
    storage.handleSetCookieHeaders(["a=1", "b=2"], for: url)
    clock.advance(by: 60)
    storage.handleSetCookieHeaders(["c=3"], for: url)

    // Deletion goes by name, domain and path, whatever the value.
    storage.deleteCookie(SessionCookie(name: "a", value: "other", domain: "example.com", isHostOnly: true))
    #expect(storage.cookies.map(\.name) == ["b", "c"])

    storage.removeCookies(since: clock.now)
    #expect(storage.cookies.map(\.name) == ["b"])

    storage.removeAllCookies()
    #expect(storage.cookies.isEmpty)
  }

  @Test func cookiesPropertyIsSortedAndUnexpired() {
    let clock = CookieTestClock()
    let storage = clock.makeStorage()
    storage.handleSetCookieHeaders(
      ["z=1", "a=2; Path=/b", "m=3; Max-Age=5"], for: cookieURL("https://b.example/"))
    storage.handleSetCookieHeaders(["y=4"], for: cookieURL("https://a.example/"))
    #expect(storage.cookies.map(\.name) == ["y", "m", "z", "a"])
    clock.advance(by: 5)
    #expect(storage.cookies.map(\.name) == ["y", "z", "a"])
  }

  @Test func invalidCookiesAreNotStored() {
    let storage = SessionCookieStorage()
    storage.setCookie(SessionCookie(name: "a", value: "1", domain: ""))
    storage.setCookie(SessionCookie(name: "a", value: "1", domain: "example.com", path: "relative"))
    storage.setCookie(SessionCookie(name: "", value: "", domain: "example.com"))
    #expect(storage.cookies.isEmpty)
  }

  // MARK: Responses

  @Test func malformedCookiesDoNotAffectOthersInAJoinedHeader() throws {
    let clock = CookieTestClock()
    let storage = clock.makeStorage()
    let url = cookieURL("http://www.example.com/")
    let joined = [
      "a=1; Expires=Wed, 09 Jun 2021 10:18:14 GMT",
      "=",  // empty name and value
      "evil=1; Domain=other.com",  // foreign domain
      "tld=1; Domain=com",  // public suffix
      "sec=1; Secure",  // Secure over http
      "b=2; Max-Age=bogus; Path=/",  // a bad attribute only
      "c=3; Expires=Wednesday, 09-Jun-21 10:18:14 GMT",
    ].joined(separator: ", ")
    let response = try #require(
      HTTPURLResponse(
        url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Set-Cookie": joined]))
    storage.handleResponse(response, for: url)
    #expect(storage.cookieHeaderValue(for: url) == "a=1; b=2; c=3")
    #expect(storage.cookies.first { $0.name == "a" }?.expiresDate == CookieTestDates.june9th2021)
  }

  @Test func setCookieHeaderNameIsCaseInsensitive() throws {
    let storage = SessionCookieStorage()
    let url = cookieURL("https://example.com/")
    let response = try #require(
      HTTPURLResponse(
        url: url, statusCode: 200, httpVersion: "HTTP/1.1",
        headerFields: ["set-cookie": "a=1, b=2", "Content-Type": "text/plain"]))
    storage.handleResponse(response, for: url)
    #expect(storage.cookieHeaderValue(for: url) == "a=1; b=2")
  }

  @Test func responseWithoutCookiesChangesNothing() throws {
    let storage = SessionCookieStorage()
    let url = cookieURL("https://example.com/")
    storage.handleSetCookieHeaders(["a=1"], for: url)
    let response = try #require(
      HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["X-Other": "a=2"]))
    storage.handleResponse(response, for: url)
    #expect(storage.cookieHeaderValue(for: url) == "a=1")
  }

  @Test func insecureOriginCannotOverwriteSecureCookie() {
    let storage = SessionCookieStorage()
    storage.handleSetCookieHeaders(["id=secret; Secure"], for: cookieURL("https://example.com/"))
    storage.handleSetCookieHeaders(["id=forged"], for: cookieURL("http://example.com/"))
    storage.handleSetCookieHeaders(
      ["id=forged; Domain=example.com"], for: cookieURL("http://www.example.com/"))
    #expect(storage.cookies.map(\.value) == ["secret"])
    storage.handleSetCookieHeaders(["id=updated"], for: cookieURL("https://example.com/"))
    #expect(storage.cookies.map(\.value) == ["updated"])
  }

  // MARK: Policy

  @Test func neverPolicyStoresNothing() {
    let storage = SessionCookieStorage()
    storage.acceptPolicy = .never
    let url = cookieURL("https://example.com/")
    storage.handleSetCookieHeaders(["a=1"], for: url)
    storage.setCookie(SessionCookie(name: "b", value: "2", domain: "example.com"))
    storage.setCookies([SessionCookie(name: "c", value: "3", domain: "example.com")])
    #expect(storage.cookies.isEmpty)
    storage.acceptPolicy = .always
    storage.handleSetCookieHeaders(["a=1"], for: url)
    #expect(storage.cookies.count == 1)
  }

  @Test func onlyFromMainDocumentDomainPolicy() {
    let storage = SessionCookieStorage()
    storage.acceptPolicy = .onlyFromMainDocumentDomain
    let api = cookieURL("https://api.example.com/")
    storage.handleSetCookieHeaders(
      ["same=1"], for: api, mainDocumentURL: cookieURL("https://www.example.com/"))
    storage.handleSetCookieHeaders(["third=1"], for: api, mainDocumentURL: cookieURL("https://other.org/"))
    storage.handleSetCookieHeaders(["own=1"], for: api)
    #expect(storage.cookies.map(\.name).sorted() == ["own", "same"])
  }

  // MARK: Bounds

  @Test func perSiteBoundEvictsLeastRecentlyUsed() {
    let storage = SessionCookieStorage()
    storage.maximumCookiesPerSite = 3
    let a = cookieURL("https://a.example.com/")
    let b = cookieURL("https://b.example.com/")
    storage.handleSetCookieHeaders(["c1=1", "c2=2"], for: a)
    storage.handleSetCookieHeaders(["c3=3"], for: b)
    storage.handleSetCookieHeaders(["keep=1"], for: cookieURL("https://other.org/"))
    _ = storage.cookies(for: a)  // sending c1 and c2 makes c3 the least recently used
    storage.handleSetCookieHeaders(["c4=4"], for: b)
    #expect(storage.cookies.map(\.name) == ["c1", "c2", "c4", "keep"])
  }

  @Test func defaultBoundsHoldAgainstAFloodOfCookies() {
    let storage = SessionCookieStorage()
    #expect(storage.maximumCookiesPerSite == 180)
    #expect(storage.maximumCookieCount == 3000)
    let url = cookieURL("https://evil.example/")
    storage.handleSetCookieHeaders((0..<500).map { "flood\($0)=x" }, for: url)
    #expect(storage.cookies.count == 180)
    // The newest survive.
    #expect(storage.cookies(for: url).contains { $0.name == "flood499" })
    #expect(!storage.cookies(for: url).contains { $0.name == "flood0" })
  }

  @Test func totalBoundEvictsAcrossSites() {
    let storage = SessionCookieStorage()
    storage.maximumCookieCount = 10
    for site in 0..<6 {
      storage.handleSetCookieHeaders(["a=1", "b=2"], for: cookieURL("https://site\(site).example/"))
    }
    let domains = Set(storage.cookies.map(\.domain))
    #expect(storage.cookies.count == 10)
    #expect(!domains.contains("site0.example"))
    #expect(domains.contains("site5.example"))
  }

  @Test func expiredCookiesAreEvictedBeforeLiveOnes() {
    let clock = CookieTestClock()
    let storage = clock.makeStorage()
    storage.maximumCookiesPerSite = 2
    let url = cookieURL("https://example.com/")
    storage.handleSetCookieHeaders(["old=1"], for: url)
    storage.handleSetCookieHeaders(["brief=1; Max-Age=1"], for: url)
    clock.advance(by: 2)
    storage.handleSetCookieHeaders(["new=1"], for: url)
    #expect(storage.cookies.map(\.name).sorted() == ["new", "old"])
  }

  // MARK: Threads

  @Test func concurrentUseIsSafe() async {
    let storage = SessionCookieStorage()
    await withTaskGroup(of: Void.self) { group in
      for worker in 0..<8 {
        group.addTask {
          let url = cookieURL("https://w\(worker).example.com/")
          for index in 0..<200 {
            storage.handleSetCookieHeaders(["c\(index % 20)=\(index)"], for: url)
            _ = storage.cookieHeaderValue(for: url)
            if index % 50 == 0 {
              storage.deleteCookie(SessionCookie(name: "c0", value: "", domain: "w\(worker).example.com"))
            }
          }
        }
      }
    }
    #expect(storage.cookies.count <= 8 * 20)
    #expect(SessionCookieStorage.shared !== storage)
  }
}
