import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@testable import HTTPLogging

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The data element of the page: what it escapes, and that it reads back as the same JSON.
@Suite("Viewer page: data element and template")
struct ViewerPageDataTests {
  @Test(
    "bytes that matter to the HTML parser are written as JSON escapes",
    arguments: [
      (#"{"a":"</script>"}"#, #"{"a":"\u003c/script\u003e"}"#),
      (#"{"a":"<!--x"}"#, #"{"a":"\u003c!--x"}"#),
      (#"{"a":"&amp;"}"#, #"{"a":"\u0026amp;"}"#),
      ("{\"a\":\"1\u{2028}2\u{2029}3\"}", #"{"a":"1\u20282\u20293"}"#),
      // Other characters that begin with the byte E2 stay as they are.
      (#"{"a":"→ ‘q’"}"#, #"{"a":"→ ‘q’"}"#),
      (#"{"plain":1}"#, #"{"plain":1}"#),
    ])
  func escapes(_ json: String, _ expected: String) throws {
    var output = Data()
    ViewerPage.appendEscaped(Data(json.utf8), to: &output)
    #expect(String(decoding: output, as: UTF8.self) == expected)
    // The same document.
    let original = try JSONSerialization.jsonObject(with: Data(json.utf8))
    let escaped = try JSONSerialization.jsonObject(with: output)
    #expect(try canonicalJSON(original) == canonicalJSON(escaped))
  }

  @Test("a data element holds the entries as one JSON array, with no '<' inside")
  func element() throws {
    let entries = [Data(#"{"x":"</script><script>window.pwned=1</script>"}"#.utf8), Data(#"{"y":2}"#.utf8)]
    let text = String(decoding: ViewerPage.dataElement(entries), as: UTF8.self)
    let prefix = #"<script type="application/json" class="har-entries">"#
    #expect(text.hasPrefix(prefix))
    #expect(text.hasSuffix("</script>\n"))
    let inner = text.dropFirst(prefix.count).dropLast("</script>\n".count)
    #expect(!inner.contains("<") && !inner.contains(">") && !inner.contains("&"))
    let parsed = try #require(try JSONSerialization.jsonObject(with: Data(inner.utf8)) as? [[String: Any]])
    #expect(parsed.count == 2)
    #expect(parsed[0]["x"] as? String == "</script><script>window.pwned=1</script>")
  }

  @Test("the template: self-contained, no network, text only through textContent")
  func template() {
    let head = ViewerPage.head(processName: "a<b>", runName: "\"run\"")
    #expect(head.hasPrefix("<!DOCTYPE html>"))
    #expect(head.contains("<title>a&lt;b&gt; HTTP log &quot;run&quot;</title>"))
    #expect(head.contains("a&lt;b&gt;<small>&quot;run&quot;</small>"))
    // No external resource of any kind: no scheme-qualified URL, no src or link element.
    for needle in ["http://", "https://", "//cdn", " src=", "<link", "@import", "url("] {
      #expect(!head.contains(needle), "\(needle)")
    }
    #expect(head.contains("default-src 'none'"))
    // The script never parses text as HTML.
    for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"] {
      #expect(!ViewerPage.script.contains(sink), "\(sink)")
    }
    #expect(ViewerPage.script.contains("script.har-entries"))
  }

  @Test("libcurl phases become HAR timings, protocol and address; throttle wait becomes blocked")
  func metricsAndThrottle() throws {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    var exchange = LoggedExchange(
      kind: .first, method: "GET", url: "https://example.com/a", requestHeaders: [], requestBody: nil,
      sentDate: start.addingTimeInterval(0.25))
    exchange.statusCode = 200
    exchange.endDate = start.addingTimeInterval(0.35)
    exchange.metrics = TransferMetrics(
      nameLookup: 0.002, connect: 0.005, secureConnection: 0.020, requestStart: 0.021, firstByte: 0.080,
      total: 0.1, httpVersion: "HTTP/2", remoteAddress: "93.184.216.34")
    var record = FetchRecord(
      comment: "phases", startDate: start, endDate: start.addingTimeInterval(0.35), method: "GET",
      url: exchange.url, exchanges: [exchange])
    record.throttleEndDate = start.addingTimeInterval(0.2)
    let prepared = RecordPreparer(redactor: nil).prepare(record)
    let data = HARFormatter.entries(
      prepared, files: nil, place: HARFormatter.RunPlace(number: 7, textLog: "fetch_7.txt"))
    let first = try #require(data.first)
    let entry = try #require(try JSONSerialization.jsonObject(with: first) as? [String: Any])
    let timings = try #require(entry["timings"] as? [String: Any])
    #expect(timings["blocked"] as? Double == 200)
    #expect(timings["dns"] as? Double == 2)
    #expect(timings["connect"] as? Double == 18)
    #expect(timings["ssl"] as? Double == 15)
    #expect(timings["wait"] as? Double == 59)
    #expect(timings["receive"] as? Double == 20)
    #expect(harRequest(entry)["httpVersion"] as? String == "HTTP/2")
    #expect(harResponse(entry)["httpVersion"] as? String == "HTTP/2")
    #expect(entry["serverIPAddress"] as? String == "93.184.216.34")
    #expect(entry["_fetch"] as? Int == 7)
    #expect(entry["_kind"] as? String == "first")
    #expect(entry["_startedTime"] as? Double == 1_800_000_000_250)
    let summary = try #require(harSummary(entry))
    #expect(summary["startedTime"] as? Double == 1_800_000_000_000)
    #expect(summary["time"] as? Double == 350)
    #expect(summary["throttled"] as? Double == 200)
    #expect(summary["log"] as? String == "fetch_7.txt")
    #expect(summary["entries"] as? Int == 1)
    // Outside a run, no custom fields.
    let plain = try #require(
      try JSONSerialization.jsonObject(with: HARFormatter.entries(prepared, files: nil)[0]) as? [String: Any])
    #expect(plain.keys.filter { $0.hasPrefix("_") }.isEmpty)
  }
}

/// A minimal service: holds every fetcher until ``release()`` grants it a slot.
final class HoldingHooks: FetcherServiceHooks, @unchecked Sendable {
  // `@unchecked Sendable`: `held` is only touched under `lock`.
  private let lock = NSLock()
  private var held: [SessionFetcher] = []

  func fetcherShouldBeginNow(_ fetcher: SessionFetcher) -> Bool {
    lock.withLock { held.append(fetcher) }
    return false
  }

  func release() {
    let fetchers = lock.withLock { () -> [SessionFetcher] in
      defer { held = [] }
      return held
    }
    for fetcher in fetchers { fetcher.serviceDidGrantSlot() }
  }

  var heldCount: Int { lock.withLock { held.count } }

  func fetcher(_ fetcher: SessionFetcher, willSend request: inout URLRequest) -> Bool { false }
  func fetcher(_ fetcher: SessionFetcher, finalResponse head: ResponseHead, data: Data?)
    -> (response: HTTPURLResponse, data: Data?)?
  { nil }
  func fetcher(_ fetcher: SessionFetcher, isWaitingToRetry: Bool) {}
  func fetcherDidStop(_ fetcher: SessionFetcher, succeeded: Bool) {}
}

extension LoggingFileTests {
  @Test("the page embeds the same entries as log.har, and nothing else from the wire")
  func pageMatchesHAR() async throws {
    try await withLogging { _ in
      _ = await server.fetcher("/redirect/1").fetchResult()
      _ = await server.fetcher("/status/500").fetchResult()
      let page = try pageEntries()
      let har = try harEntries()
      #expect(page.count == 3)
      #expect(try page.map(canonicalJSON) == har.map(canonicalJSON))
    }
  }

  @Test("a fetch that waited for a throttle slot: blocked time and the throttled summary")
  func throttleWait() async throws {
    try await withLogging { _ in
      let hooks = HoldingHooks()
      let fetcher = server.fetcher("/text?value=throttled")
      fetcher.serviceHooks = hooks
      async let result = fetcher.fetchResult()
      #expect(await eventually { hooks.heldCount == 1 })
      try await Task.sleep(nanoseconds: 150_000_000)
      hooks.release()
      #expect(await result.error == nil)
      let entry = try #require(try pageEntries().first)
      let blocked = try #require((entry["timings"] as? [String: Any])?["blocked"] as? Double)
      #expect(blocked >= 150 && blocked < 5000)
      #expect(harSummary(entry)?["throttled"] as? Double == blocked)
      // An unthrottled fetch has neither.
      _ = await server.fetcher("/text?value=free").fetchResult()
      let free = try pageEntries()[1]
      #expect((free["timings"] as? [String: Any])?["blocked"] == nil)
      #expect(harSummary(free)?["throttled"] == nil)
    }
  }

  @Test("a fetch refused before sending anything has one entry: status 0, kind none, its error")
  func refusedFetch() async throws {
    try await withLogging { _ in
      let fetcher = SessionFetcher.fetcher(urlString: "http://example.com/insecure?q=1")
      fetcher.setProperty(true, forKey: loggingTestMarker)
      fetcher.callbackQueue = DispatchQueue(label: "HTTPLoggingTests.refused")
      fetcher.comment = "refused"
      #expect(await fetcher.fetchResult().error != nil)
      let entries = try pageEntries()
      #expect(entries.count == 1)
      let entry = try #require(entries.first)
      #expect(entry["_kind"] as? String == "none")
      #expect(harResponse(entry)["status"] as? Int == 0)
      #expect(harRequest(entry)["url"] as? String == "http://example.com/insecure?q=1")
      #expect((entry["_error"] as? String)?.isEmpty == false)
      #expect((harSummary(entry)?["error"] as? String)?.isEmpty == false)
      #expect(try harEntries().count == 1)
    }
  }

  @Test("hostile bodies, quoted and non-ASCII URLs and headers: the page's data stays data")
  func hostileData() async throws {
    let payload = "</script><script>window.pwned=1</script><!--<script>\u{2028}"
    server.route("/hostile") { _ in
      TestResponse(
        status: 200,
        headers: [
          ("Content-Type", "text/html; charset=utf-8"), ("X-Quote", "\"'><img src=x onerror=pwned=1>"),
        ],
        body: Data(payload.utf8))
    }
    try await withLogging { _ in
      let fetcher = server.fetcher("/hostile?q=%22%3E%3Cscript%3E&name=gr%C3%BC%C3%9Fe")
      fetcher.comment = "<b>comment</b> “quoted” ünïcode"
      fetcher.setRequestValue("ça \"va\" <ok>", forHTTPHeaderField: "X-Note")
      #expect(await fetcher.fetchResult().error == nil)
      let html = try runFile("index.html")
      // The only script elements are the page's own and the data element.
      #expect(html.components(separatedBy: "<script").count - 1 == 2)
      #expect(!html.contains("<script>window.pwned"))
      let entry = try #require(try pageEntries(html: html).first)
      #expect((harResponse(entry)["content"] as? [String: Any])?["text"] as? String == payload)
      #expect(entry["comment"] as? String == "<b>comment</b> “quoted” ünïcode")
      let headers = try #require(harRequest(entry)["headers"] as? [[String: Any]])
      #expect(headers.contains { $0["value"] as? String == "ça \"va\" <ok>" })
      #expect(try canonicalJSON(entry) == canonicalJSON(try #require(harEntries().first)))
    }
  }

  /// Writes the run the browser check opens (`.ci/viewer-check.sh`), in
  /// `HTTPLOGGING_VIEWER_RUN_DIR` when set (kept), else in a temporary folder (removed).
  @Test("a showcase run for the browser check: every kind of row the page draws")
  func showcaseRun() async throws {
    let target = ProcessInfo.processInfo.environment["HTTPLOGGING_VIEWER_RUN_DIR"]
    // A 32×32 PNG (a blue disc).
    let png = Data(
      base64Encoded: [
        "iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAAFV0lEQVR42tXXoYvkZhjA4ftLKk6cWLFixYoVK1asGDFixIgR",
        "I0aMGLFiB1asWLHixImBKQOBQCAQCAQCgUAgEAgECoFAoRAoFAqFQv+O9JHbsm332p64D376fdT3vd+7d1/bme1/m+ZaaKmV",
        "1tpoqy8y9Hr/63SjW80010JLrbTWRlvtdKd7/S/Dr/a/TNe60a1mmmuhpVZaa6OtdrrTvR70rwdf7H+eLnWla93oVjPNtdBS",
        "K6210VY73eleD3rUkz5r+Pn+p+lCl7rStW50q5nmWmipldbaaKud7nSvBz3qSc960/Cz/Y/TuS50qStd60a3mmmuhZZaaa2N",
        "ttrpTvd60KOe9KyPegNgBBgBRoARYAQYAUaAEWAEGAFGgBFgBBgBRoARYAQYAUaAEWAEGAFGgPHvAR/2P0xnOteFLnWla93o",
        "VjPNtdBSK6210VY73eleD3rUk571UZ/06vD3+++nDzrTuS50qStd60a3mmmuhZZaaa2NttrpTvd60KOe9KyP+qSDXgEMAAPA",
        "ADAADAADwAAwAAwAA8AAMAAMAAPAADAADAADwAAwAAwAA8AAMAAMAAPAADC8BugBeoAeoAfoAXqAHqAH6AF6gB6gB+gBeoAe",
        "oAfoAXqAHqAH6AF6gB6gB+gBeoAeoP8j4Jv9d9N7fdCZznWhS13pWje61UxzLbTUSmtttNVOd7rXgx71pGd91Ccd9K1eADqA",
        "DqAD6AA6gA6gA+gAOoAOoAPoADqADqAD6AA6gA6gA+gAOoAOoAPoADqADqAD6AA6gO4loAVoAVqAFqAFaAFagBagBWgBWoAW",
        "oAVoAVqAFqAFaAFagBagBWgBWoAWoAVoAVqAFqAFaF8CGoAGoAFoABqABqABaAAagAagAWgAGoAGoAFoABqABqABaAAagAag",
        "AWgAGoAGoAFoABqA5iWgBqgBaoAaoAaoAWqAGqAGqAFqgBqgBqgBaoAaoAaoAWqAGqAGqAFqgBqgBqgBaoAaoAaoXwIqgAqg",
        "AqgAKoAKoAKoACqACqACqAAqgAqgAqgAKoAKoAKoACqACqACqAAqgAqgAqgAKoDqJaAEKAFKgBKgBCgBSoASoAQoAUqAEqAE",
        "KAFKgBKgBCgBSoASoAQoAUqAEqAEKAFKgBKgBChfAgqAAqAAKAAKgAKgACgACoACoAAoAAqAAqAAKAAKgAKgACgACoACoAAo",
        "AAqAAqAAKAAKgGL600WUA+QAOUAOkAPkADlADpAD5AA5QA6QA+QAOUAOkAPkADlADpAD5AA5QA6QA+QAOUD+2k2YAWQAGUAG",
        "kAFkABlABpABZAAZQAaQAWQAGUAGkAFkABlABpABZAAZQAaQAWQAGUD2GiAFSAFSgBQgBUgBUoAUIAVIAVKAFCAFSAFSgBQg",
        "BUgBUoAUIAVIAVKAFCAFSAFSgHT6i+c4AUgAEoAEIAFIABKABCABSAASgAQgAUgAEoAEIAFIABKABCABSAASgAQgAUimf1hI",
        "YoAYIAaIAWKAGCAGiAFigBggBogBYoAYIAaIAWKAGCAGiAFigBggBojfshFFABFABBABRAARQAQQAUQAEUAEEAFEABFABBAB",
        "RAARQAQQAUQAEUAEEE1vXEpDgBAgBAgBQoAQIAQIAUKAECAECAFCgBAgBAgBQoAQIAQIAUKAcPrMtTwACAACgAAgAAgAAoAA",
        "IAAIAAKAACAACAACgAAgAAgAAoBg+g8fkxPACeAEcAI4AZwATgAngBPACeAEcAI4AZwATgCn6X/6mh0BjgBHgCPAEeAIcAQ4",
        "AhwBjgBHgCPAEeA4faHP6QHgAHAAOAAcAA4AB4DD9O5rO78DAp4INH0hpJEAAAAASUVORK5CYII=",
      ].joined())
    server.route("/avatar.png") { _ in
      TestResponse(status: 200, headers: [("Content-Type", "image/png")], body: png ?? Data())
    }
    // A 1×1 PNG: short enough to be in the HAR file as base64 instead of a file of its own.
    let dot = Data(
      base64Encoded:
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
    server.route("/dot.png") { _ in
      TestResponse(status: 200, headers: [("Content-Type", "image/png")], body: dot ?? Data())
    }
    server.route("/api/slow") { _ in TestResponse.json(#"{"ok":true,"items":[1,2,3]}"#).delayed(by: 0.12) }
    server.route("/hostile") { _ in
      TestResponse(
        status: 200, headers: [("Content-Type", "text/html")],
        body: Data("</script><script>window.pwned=1</script><p>ünïcode “quotes”</p>".utf8))
    }
    try await withLogging { folder in
      if let target { SessionFetcher.loggingDirectory = URL(fileURLWithPath: target, isDirectory: true) }
      let login = server.fetcher("/echo")
      login.comment = "Sign in"
      login.bodyData = Data(#"{"user":"ada","password":"hunter2"}"#.utf8)
      login.setRequestValue("application/json", forHTTPHeaderField: "Content-Type")
      login.setRequestValue("Bearer abc.def.ghi", forHTTPHeaderField: "Authorization")
      _ = await login.fetchResult()
      let hooks = HoldingHooks()
      var throttled: [SessionFetcher] = []
      for index in 1...3 {
        let fetcher = server.fetcher("/api/slow?page=\(index)")
        fetcher.comment = "Page \(index) (throttled)"
        fetcher.serviceHooks = hooks
        throttled.append(fetcher)
      }
      await withTaskGroup(of: Void.self) { group in
        for fetcher in throttled { group.addTask { _ = await fetcher.fetchResult() } }
        group.addTask {
          _ = await eventually { hooks.heldCount == 3 }
          try? await Task.sleep(nanoseconds: 80_000_000)
          hooks.release()
        }
        group.addTask {
          let avatar = server.fetcher("/avatar.png")
          avatar.comment = "Avatar image"
          _ = await avatar.fetchResult()
          let tiny = server.fetcher("/dot.png")
          tiny.comment = "Tiny image"
          _ = await tiny.fetchResult()
          let headers = server.fetcher("/headers?x=1")
          _ = await headers.fetchResult()
        }
      }
      let redirect = server.fetcher("/redirect/2")
      redirect.comment = "Follow two redirects"
      _ = await redirect.fetchResult()
      let retry = server.fetcher("/fail-first?n=1&key=\(UUID().uuidString)&status=503")
      retry.comment = "Retried after a 503"
      retry.isRetryEnabled = true
      retry.minRetryInterval = 0.06
      _ = await retry.fetchResult()
      _ = await server.fetcher("/status/404").fetchResult()
      let failing = server.fetcher("/status/500")
      failing.comment = "Server error"
      _ = await failing.fetchResult()
      let broken = server.fetcher("/empty")
      broken.comment = "Connection closed"
      _ = await broken.fetchResult()
      let hostile = server.fetcher("/hostile?q=%22quoted%22&name=gr%C3%BC%C3%9Fe")
      hostile.comment = "Hostile body </script>"
      hostile.setRequestValue("\"quoted\" ünïcode <tag>", forHTTPHeaderField: "X-Note")
      _ = await hostile.fetchResult()
      _ = await server.fetcher("/bytes/2048?contentType=application/octet-stream").fetchResult()
      // Every attempt fails on the wire: each is marked with its own error in the page.
      let lost = server.fetcher("/empty?retried")
      lost.comment = "Retried after lost connections"
      lost.isRetryEnabled = true
      lost.minRetryInterval = 0.05
      lost.maxRetryInterval = 1
      lost.retryBlock = { suggested, _, response in response(suggested && lost.retryCount < 2) }
      _ = await lost.fetchResult()
      let upload = server.fetcher("/echo")
      upload.comment = "Upload of 256 KiB"
      upload.bodyData = TestServer.patternBytes(count: 256 * 1024)
      _ = await upload.fetchResult()
      var fetchCount = 17
      #if canImport(FoundationNetworking)
        // The URLSession engine's Range windows: one row, with the status the caller got.
        let download = server.fetcher("/bytes/\(2 * 1024 * 1024 + 100)")
        download.comment = "Download in windows"
        download.engine = .urlSession
        download.destinationFileURL = FileManager.default.temporaryDirectory.appendingPathComponent(
          "viewer-download-\(UUID().uuidString).bin")
        download.downloadWindowLength = 1024 * 1024
        _ = await download.fetchResult()
        if let file = download.destinationFileURL { try? FileManager.default.removeItem(at: file) }
        fetchCount += 1
      #endif
      let stopped = server.fetcher("/hang")
      stopped.comment = "Stopped while waiting"
      stopped.stopFetchingTriggersCompletionHandler = true
      async let stoppedResult = stopped.fetchResult()
      #expect(await eventually { server.requestCount(path: "/hang") == 1 })
      stopped.stopFetching()
      _ = await stoppedResult
      SessionFetcher.flushLogs()
      let run = try #require(SessionFetcher.loggingRunDirectory)
      let entries = try pageEntries()
      #expect(Set(entries.compactMap { $0["_fetch"] as? Int }).count == fetchCount)
      #expect(entries.contains { $0["_kind"] as? String == "retry" })
      #expect(entries.contains { (harSummary($0)?["throttled"] as? Double ?? 0) > 0 })
      #expect(fileNames(in: entries).contains { $0.hasSuffix("_response.png") })
      #expect(
        entries.contains {
          let content = harResponse($0)["content"] as? [String: Any]
          return content?["mimeType"] as? String == "image/png" && content?["encoding"] as? String == "base64"
        })
      if target != nil {
        print("HTTPLOGGING_VIEWER_RUN=\(run.path)")
      } else {
        #expect(run.path.hasPrefix(folder.path))
      }
    }
  }
}
