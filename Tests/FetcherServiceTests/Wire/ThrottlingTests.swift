import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// URLs without a host are never held back. The throttling of hosts is tested on the scripted
/// engine (`ScriptedThrottlingTests`).
@Suite("Per-host throttling")
struct ThrottlingTests {
  @Test func dataAndHostlessURLsNeverWait() async throws {
    let service = makeService(maxPerHost: 1)
    let results = Recorder<FetchResult>()
    for _ in 0..<5 {
      let fetcher = service.fetcher(urlString: "data:text/plain;base64,aGVsbG8=")
      fetcher.allowedInsecureSchemes = ["data"]
      fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    }
    #expect(service.numberOfDelayedFetchers == 0)
    #expect(await eventually { results.count == 5 })
    #expect(service.numberOfFetchers == 0)
    for result in results.values {
      #expect(result.error == nil)
      #expect(result.data == Data("hello".utf8))
    }
  }
}
