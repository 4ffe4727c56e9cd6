import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// GTM's block types, spelled as a port spells them, fit the properties they are written for.
@Suite("GTMSessionFetcher's block type names")
struct GTMBlockTypeTests {
  @Test func theNamesFitTheirProperties() async {
    let fetcher = SessionFetcher.fetcher(url: URL(string: "https://example.com/gtm")!)
    fetcher.callbackQueue = DispatchQueue(label: "test.gtm.block.types")
    let seen = Recorder<String>()
    let retry: SessionFetcher.RetryBlock = { suggested, _, response in
      let answer: SessionFetcher.RetryResponse = response
      answer(suggested)
    }
    let test: SessionFetcher.TestBlock = { fetcher, respond in
      let answer: SessionFetcher.TestResponse = respond
      answer(
        HTTPURLResponse(url: fetcher.request!.url!, statusCode: 200, httpVersion: nil, headerFields: nil),
        Data("body".utf8), nil)
    }
    let redirect: SessionFetcher.WillRedirectBlock = { _, request, respond in
      let answer: SessionFetcher.WillRedirectResponse = respond
      answer(request)
    }
    let accumulate: SessionFetcher.AccumulateDataBlock = { chunk in seen.append("chunk \(chunk?.count ?? -1)")
    }
    let received: SessionFetcher.ReceivedProgressBlock = { _, total in seen.append("received \(total)") }
    let sent: SessionFetcher.SendProgressBlock = { _, _, _ in }
    let download: SessionFetcher.DownloadProgressBlock = { _, _, _ in }
    fetcher.retryBlock = retry
    fetcher.testBlock = test
    fetcher.willRedirectBlock = redirect
    fetcher.accumulateDataBlock = accumulate
    fetcher.receivedProgressBlock = received
    fetcher.sendProgressBlock = sent
    fetcher.downloadProgressBlock = download
    let done = Recorder<Bool>()
    let completion: SessionFetcher.CompletionHandler = { _, error in done.append(error == nil) }
    fetcher.beginFetch(completionHandler: completion)
    #expect(await eventually { done.count == 1 })
    #expect(done.values == [true])
    #expect(seen.values.contains("chunk 4"))
  }
}
