import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `error as NSError` reads as GTMSessionFetcher's errors did, so that code ported from it
/// (`(error as NSError).domain == kGTMSessionFetcherStatusDomain`, `userInfo["data"]`) still works.
@Suite struct ErrorBridgingTests {
  static let statusDomain = "com.google.HTTPStatus"

  /// One error of each case with the code it bridges to.
  static let table: [(error: SessionFetcherError, code: Int)] = [
    (.status(code: 404, data: Data("gone".utf8)), 404),
    (.status(code: 503, data: nil), 503),
    (.downloadFailed(description: "the folder /tmp/x is not writable"), -1),
    (.insecureRequest(URL(string: "http://example.com/")!), -5),
    (.cancelled, -7),
    (.invalidURL("not a url"), -100),
    (.bodyUnavailable(description: "no file"), -101),
    (.invalidConfiguration("both bodyData and bodyFileURL"), -102),
    (.authorizationFailed(description: "neither form"), -103),
    (.streamInterrupted(description: "length changed"), -104),
    (.responseTooLarge(limit: 1024), -105),
    (.engineUnavailable("no libcurl"), -106),
    (.unsupportedByEngine("pins on URLSession"), -107),
    (.invalidTLSSettings("no PEM"), -108),
  ]

  @Test(arguments: Self.table.indices)
  func everyCaseBridgesWithItsCodeAndDescription(_ index: Int) {
    let (error, code) = Self.table[index]
    let bridged = error as NSError
    #expect(bridged.domain == Self.statusDomain)
    #expect(bridged.domain == SessionFetcherError.statusDomain)
    #expect(bridged.code == code)
    #expect(bridged.userInfo[NSLocalizedDescriptionKey] as? String == error.description)
    #expect(bridged.localizedDescription == error.description)
    // The library's own errors never pass for a status.
    #expect((code > 0) == (error.statusCode != nil))
    // The value itself, as any `Error`, is still the case it was.
    let asError: any Error = error
    #expect(asError as? SessionFetcherError == error)
  }

  @Test func codesAreDistinctAndEveryCaseIsTabled() {
    let codes = Self.table.filter { $0.error.statusCode == nil }.map(\.code)
    #expect(Set(codes).count == codes.count)
    #expect(Set(Self.table.map { ErrorDescriptionTests.caseName($0.error) }).count == 13)
  }

  @Test func statusCarriesItsBodyUnderGTMsKey() {
    let bridged = SessionFetcherError.status(code: 404, data: Data("gone".utf8)) as NSError
    #expect(bridged.userInfo["data"] as? Data == Data("gone".utf8))
    #expect(SessionFetcherError.statusDataKey == "data")
    #expect(SessionFetcherError.statusDataContentTypeKey == "data_content_type")
  }

  /// As GTM: no body, no `"data"` key (nil and empty alike), and no content type.
  @Test(arguments: [nil, Data()])
  func statusWithoutBodyHasNoDataKey(_ body: Data?) {
    let bridged = SessionFetcherError.status(code: 500, data: body) as NSError
    #expect(bridged.code == 500)
    #expect(bridged.userInfo["data"] == nil)
    #expect(bridged.userInfo["data_content_type"] == nil)
    #expect(Set(bridged.userInfo.keys) == [NSLocalizedDescriptionKey])
  }

  @Test func insecureRequestNamesTheURL() {
    let url = URL(string: "http://example.com/a")!
    let bridged = SessionFetcherError.insecureRequest(url) as NSError
    #expect(bridged.userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
  }

  @Test func urlErrorStaysInNSURLErrorDomain() {
    let bridged = URLError(.timedOut) as NSError
    #expect(bridged.domain == NSURLErrorDomain)
    #expect(bridged.code == NSURLErrorTimedOut)
  }

  /// Where Foundation bridges a Swift error to an `NSError` that boxes it (Apple platforms), the
  /// `NSError` converts back; Foundation on Linux makes a new `NSError` that does not.
  @Test func bridgedNSErrorConvertsBackWhereFoundationBoxesIt() {
    let error = SessionFetcherError.status(code: 404, data: Data("gone".utf8))
    let back = (error as NSError) as any Error
    #if canImport(ObjectiveC)
      #expect(back as? SessionFetcherError == error)
    #else
      #expect(back as? SessionFetcherError == nil)
      #expect((back as NSError).code == 404)
    #endif
  }

  /// A fetch's final status, as a GTM client reads it off the completion's error.
  @Test func fetchedStatusReadsAsGTMsStatusError() async {
    let engine = ScriptedEngine()
    engine.respond(
      to: "/missing",
      with: .response(
        status: 404, headers: ["Content-Type": "application/json"], body: Data(#"{"e":1}"#.utf8)))
    let result = await engine.fetcher("/missing").fetchResult()
    let error = result.error.map { $0 as NSError }
    #expect(error?.domain == "com.google.HTTPStatus")
    #expect(error?.code == 404)
    #expect(error?.userInfo["data"] as? Data == Data(#"{"e":1}"#.utf8))
  }
}
