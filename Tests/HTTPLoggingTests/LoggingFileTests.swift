import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@testable import HTTPLogging

/// Logging settings are process-wide: every suite that fetches with logging on is nested here and
/// runs serially.
@Suite("HTTPLogging with the test server", .serialized)
struct LoggingFileTests {
  let server: TestServer

  init() throws {
    server = try TestServer()
  }

  @Test("run folder, index, text logs, HAR and the newest symlink")
  func layout() async throws {
    try await withLogging { folder in
      let paths = ["/bytes/10", "/status/404", "/text?value=hello"]
      for (index, path) in paths.enumerated() {
        let fetcher = server.fetcher(path)
        fetcher.comment = "fetch number \(index + 1)"
        _ = await fetcher.fetchResult()
        // The HAR is valid JSON after every fetch.
        let count = try harEntries().count
        #expect(count == index + 1)
      }
      let runs = try runFolders(in: folder)
      #expect(runs.count == 1)
      let run = try #require(runs.first)
      #expect(run.lastPathComponent.hasPrefix("LogTest_log_"))
      #expect(SessionFetcher.loggingRunDirectory?.standardizedFileURL == run.standardizedFileURL)

      let html = try runFile("index.html")
      #expect(html.hasPrefix("<!DOCTYPE html>"))
      let page = try pageEntries()
      #expect(
        page.compactMap { harRequest($0)["url"] as? String } == paths.map { server.url($0).absoluteString })
      #expect(page.compactMap { harResponse($0)["status"] as? Int } == [200, 404, 200])
      #expect(page.compactMap { $0["comment"] as? String } == (1...3).map { "fetch number \($0)" })
      let targets = page.compactMap { harSummary($0)?["log"] as? String }
      #expect(targets == ["fetch_1.txt", "fetch_2.txt", "fetch_3.txt"])
      for target in targets + fileNames(in: page) {
        #expect(FileManager.default.fileExists(atPath: run.appendingPathComponent(target).path), "\(target)")
      }
      let text2 = try runFile("fetch_2.txt")
      #expect(text2.contains("fetch number 2"))
      #expect(text2.contains("Request: GET \(server.url("/status/404").absoluteString)"))
      #expect(text2.contains("Response: status 404"))
      #expect(text2.contains("Error:"))

      let link = folder.appendingPathComponent("LogTest_log_newest.html")
      let destination = try FileManager.default.destinationOfSymbolicLink(atPath: link.path)
      #expect(destination == run.lastPathComponent + "/index.html")
      #expect(try String(contentsOf: link, encoding: .utf8) == html)

      let entries = try harEntries()
      #expect(entries.count == 3)
      let request = try #require(entries[1]["request"] as? [String: Any])
      let response = try #require(entries[1]["response"] as? [String: Any])
      #expect(request["method"] as? String == "GET")
      #expect(request["url"] as? String == server.url("/status/404").absoluteString)
      #expect(response["status"] as? Int == 404)
      let headers = try #require(response["headers"] as? [[String: Any]])
      #expect(headers.contains { ($0["name"] as? String)?.lowercased() == "content-type" })
      #expect(entries[0]["startedDateTime"] is String)
      #expect(entries[0]["timings"] is [String: Any])
    }
  }

  @Test("the logging filter leaves out the fetches it rejects")
  func filter() async throws {
    try await withLogging { _ in
      let unmarked = SessionFetcher.fetcher(url: server.url("/text?value=unlogged"))
      unmarked.allowLocalhostRequest = true
      unmarked.callbackQueue = DispatchQueue(label: "HTTPLoggingTests.unmarked")
      _ = await unmarked.fetchResult()
      _ = await server.fetcher("/text?value=logged").fetchResult()
      SessionFetcher.flushLogs()
      let urls = try harEntries().compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
      #expect(urls == [server.url("/text?value=logged").absoluteString])
      #expect(unmarked.log == nil)
    }
  }

  @Test("JSON bodies are pretty-printed, binary bodies saved as files, the size cap is honoured")
  func bodies() async throws {
    try await withLogging(maximumBodySize: 1000) { _ in
      let json = server.fetcher("/headers?x=1")
      // Past the 256 bytes under which a body gets no file, whichever engine sends the request
      // (libcurl sends fewer headers than FoundationNetworking).
      json.setRequestValue(String(repeating: "p", count: 300), forHTTPHeaderField: "X-Padding")
      _ = await json.fetchResult()
      let binary = server.fetcher("/bytes/300?contentType=image/png")
      _ = await binary.fetchResult()
      let big = server.fetcher("/text?value=" + String(repeating: "a", count: 5000))
      _ = await big.fetchResult()
      let post = server.fetcher("/echo")
      post.bodyData = Data(#"{"b":2,"a":[1,2]}"#.utf8)
      post.setRequestValue("application/json", forHTTPHeaderField: "Content-Type")
      _ = await post.fetchResult()

      let pretty = try runFile("fetch_1_response.json")
      #expect(pretty.contains("\n  \"headers\" : {"))
      let run = try #require(SessionFetcher.loggingRunDirectory)
      let png = try Data(contentsOf: run.appendingPathComponent("fetch_2_response.png"))
      #expect(png == TestServer.patternBytes(count: 300))
      let text2 = try runFile("fetch_2.txt")
      #expect(text2.contains("<<300 bytes, binary, saved as fetch_2_response.png>>"))
      let text3 = try runFile("fetch_3.txt")
      #expect(text3.contains("(5000 bytes; truncated to the first 1000 bytes"))
      let body3 = try runFile("fetch_3_response.txt")
      #expect(body3.contains("[truncated: 1000 of 5000 bytes logged]"))
      #expect(body3.count < 1100)
      // A short text body gets no file of its own: it is whole in the text log and the HAR file.
      #expect(
        !FileManager.default.fileExists(atPath: run.appendingPathComponent("fetch_4_request.json").path))
      let text4 = try runFile("fetch_4.txt")
      #expect(text4.contains("Request body: (17 bytes)\n"))
      #expect(text4.contains("\"a\" : [\n"))
      let postData = try #require(harRequest(try pageEntries()[3])["postData"] as? [String: Any])
      #expect((postData["text"] as? String)?.contains("\"a\" : [\n") == true)
      #expect(postData["_file"] == nil)
      let content = try #require(harResponse(try pageEntries()[2])["content"] as? [String: Any])
      #expect(content["size"] as? Int == 5000)
      #expect(content["comment"] as? String == "truncated to 1000 bytes")
      #expect(content["_file"] as? String == "fetch_3_response.txt")
    }
  }

  @Test("bodies up to 256 bytes get no file: text in the text log, binary as base64 in the HAR file")
  func shortBodiesAreInline() async throws {
    try await withLogging { _ in
      let short = server.fetcher("/bytes/5?contentType=application/octet-stream")
      _ = await short.fetchResult()
      let limit = server.fetcher("/bytes/256?contentType=image/png")
      _ = await limit.fetchResult()
      let long = server.fetcher("/bytes/257?contentType=application/octet-stream")
      _ = await long.fetchResult()
      _ = await server.fetcher("/text?value=hello").fetchResult()
      let binaryRequest = server.fetcher("/echo")
      binaryRequest.bodyData = Data([0, 1, 2, 0xFF])
      binaryRequest.setRequestValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
      _ = await binaryRequest.fetchResult()
      SessionFetcher.flushLogs()

      let run = try #require(SessionFetcher.loggingRunDirectory)
      let names = Set(try FileManager.default.contentsOfDirectory(atPath: run.path))
      // One file per fetch (its text log), and one for each body that needs one.
      #expect(
        names == [
          "index.html", "log.har", "fetch_1.txt", "fetch_2.txt", "fetch_3.txt", "fetch_4.txt", "fetch_5.txt",
          "fetch_3_response.bin", "fetch_5_request.bin",
        ])
      #expect(
        try Data(contentsOf: run.appendingPathComponent("fetch_3_response.bin"))
          == TestServer.patternBytes(count: 257))
      #expect(try runFile("fetch_1.txt").contains("Response body: <<5 bytes, binary>>\n"))
      #expect(try runFile("fetch_1.txt") == (short.log ?? "") + String(repeating: "-", count: 72) + "\n")
      #expect(try runFile("fetch_3.txt").contains("<<257 bytes, binary, saved as fetch_3_response.bin>>"))

      let entries = try harEntries()
      #expect(try pageEntries().count == entries.count)
      for (index, count) in [(0, 5), (1, 256)] {
        let content = try #require(harResponse(entries[index])["content"] as? [String: Any])
        #expect(content["encoding"] as? String == "base64")
        #expect(content["_file"] == nil)
        let bytes = try #require(Data(base64Encoded: content["text"] as? String ?? ""))
        #expect(bytes == TestServer.patternBytes(count: count))
      }
      let long3 = try #require(harResponse(entries[2])["content"] as? [String: Any])
      #expect(long3["text"] == nil)
      #expect(long3["_file"] as? String == "fetch_3_response.bin")
      let text4 = try #require(harResponse(entries[3])["content"] as? [String: Any])
      #expect(text4["text"] as? String == "hello")
      #expect(text4["encoding"] == nil)
      let post5 = try #require(harRequest(entries[4])["postData"] as? [String: Any])
      #expect(post5["_file"] as? String == "fetch_5_request.bin")
    }
  }

  @Test("the files of a fetch are written without flushLogs, shortly after it ends")
  func writtenWithoutFlush() async throws {
    try await withLogging { folder in
      _ = await server.fetcher("/text?value=unflushed").fetchResult()
      let found = await eventually {
        guard let run = try? runFolders(in: folder).first else { return false }
        let text = try? String(contentsOf: run.appendingPathComponent("fetch_1.txt"), encoding: .utf8)
        let har = try? Data(contentsOf: run.appendingPathComponent(LogFileWriter.harFileName))
        return text?.contains("unflushed") == true
          && har.map { String(decoding: $0, as: UTF8.self) }?.contains("unflushed") == true
      }
      #expect(found)
    }
  }

  /// The run's folder (and the notice naming it on standard error) comes when the run's first fetch
  /// begins, not when it ends: a program's progress line printed meanwhile is not cut by it.
  @Test("the run folder is made when the first fetch begins, before it ends")
  func runFolderBeforeTheFirstFetchEnds() async throws {
    try await withLogging { folder in
      let fetcher = server.fetcher("/hang")
      fetcher.beginFetch { _, _ in }
      defer { fetcher.stopFetching() }
      #expect(await eventually { (try? runFolders(in: folder).isEmpty == false) ?? false })
      #expect(fetcher.isFetching)
    }
  }

  /// An upload's sending phase: from the request to its body's last bytes, then the wait, on the
  /// process's engine.
  @Test("an upload's HAR entry has a sending phase before its wait")
  func uploadHasASendingPhase() async throws {
    try await withLogging { _ in
      let upload = server.fetcher("/echo")
      upload.bodyData = TestServer.patternBytes(count: 4 * 1024 * 1024)
      #expect(await upload.fetchResult().error == nil)
      SessionFetcher.flushLogs()
      let entry = try #require(try pageEntries().last)
      let timings = try #require(entry["timings"] as? [String: Any])
      let send = try #require(timings["send"] as? Double)
      #expect(send > 0, "\(timings)")
      #expect((timings["wait"] as? Double ?? -1) >= 0, "\(timings)")
    }
  }

  @Test("loggingRunDirectory writes what is waiting: the run folder of a fetch that just ended")
  func runDirectoryWithoutFlush() async throws {
    try await withLogging { folder in
      _ = await server.fetcher("/text?value=first").fetchResult()
      let run = try #require(SessionFetcher.loggingRunDirectory)
      #expect(run.deletingLastPathComponent().standardizedFileURL.path == folder.standardizedFileURL.path)
      #expect(FileManager.default.fileExists(atPath: run.appendingPathComponent("fetch_1.txt").path))
    }
  }

  @Test("fetcher.log with file output off; no files written")
  func logPropertyWithoutFiles() async throws {
    try await withLogging(toFile: false) { folder in
      let fetcher = server.fetcher("/text?value=hello-log")
      fetcher.comment = "no files"
      let result = await fetcher.fetchResult()
      #expect(result.error == nil)
      let log = try #require(fetcher.log)
      #expect(log.hasPrefix("no files\n"))
      #expect(log.contains("Response: status 200"))
      #expect(log.contains("hello-log"))
      SessionFetcher.flushLogs()
      let contents = try FileManager.default.contentsOfDirectory(atPath: folder.path)
      #expect(contents.isEmpty)
    }
  }

  @Test("a streamed response body is logged as it is read, up to the size limit")
  func streamedBody() async throws {
    try await withLogging(toFile: false, maximumBodySize: 40) { _ in
      let fetcher = server.fetcher("/sse?events=5")
      var events: [ServerSentEvent] = []
      for try await event in fetcher.events() { events.append(event) }
      #expect(events.count == 5)
      #expect(await eventually { fetcher.log != nil })
      let log = try #require(fetcher.log)
      // "id: 1\ndata: event 1\n\n" is 21 bytes: the first event whole, the second cut at 40 bytes.
      #expect(log.contains("data: event 1"))
      #expect(log.contains("id: 2"))
      #expect(!log.contains("event 3"))
      #expect(log.contains("truncated"))
    }
  }

  @Test("logging off: nothing logged")
  func loggingOff() async throws {
    try await withLogging { folder in
      SessionFetcher.isLoggingEnabled = false
      let fetcher = server.fetcher("/bytes/5")
      _ = await fetcher.fetchResult()
      #expect(fetcher.log == nil)
      SessionFetcher.flushLogs()
      let runs = try runFolders(in: folder)
      #expect(runs.isEmpty)
    }
  }

  @Test("two runs in the same directory never overwrite each other")
  func twoRuns() async throws {
    try await withLogging { folder in
      _ = await server.fetcher("/bytes/1").fetchResult()
      SessionFetcher.loggingDirectory = folder  // ends the run
      _ = await server.fetcher("/bytes/2").fetchResult()
      SessionFetcher.flushLogs()
      let runs = try runFolders(in: folder)
      #expect(runs.count == 2)
      for run in runs {
        let html = try String(contentsOf: run.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(
          try pageEntries(html: html).compactMap { harSummary($0)?["log"] as? String } == ["fetch_1.txt"])
      }
      let newest = try FileManager.default.destinationOfSymbolicLink(
        atPath: folder.appendingPathComponent("LogTest_log_newest.html").path)
      let current = try #require(SessionFetcher.loggingRunDirectory)
      #expect(newest == current.lastPathComponent + "/index.html")
    }
  }

  @Test("redirect chain and retries in HTML, text and HAR")
  func redirectsAndRetries() async throws {
    try await withLogging { _ in
      let redirect = server.fetcher("/redirect/2")
      _ = await redirect.fetchResult()
      let retry = server.fetcher("/fail-first?n=1&key=\(UUID().uuidString)&status=503")
      retry.isRetryEnabled = true
      retry.minRetryInterval = 0.05
      _ = await retry.fetchResult()
      #expect(retry.retryCount == 1)

      let text1 = try runFile("fetch_1.txt")
      #expect(text1.contains("Redirected to: \(server.url("/redirect/1").absoluteString)"))
      #expect(text1.contains("Response: status 302"))
      let text2 = try runFile("fetch_2.txt")
      #expect(text2.contains("Retry 1:"))
      #expect(text2.contains("Response: status 503"))
      let page = try pageEntries()
      #expect(page.map { $0["_kind"] as? String } == ["first", "redirect", "redirect", "first", "retry"])
      #expect(page.map { $0["_fetch"] as? Int } == [1, 1, 1, 2, 2])
      #expect((page[3]["_retryDelay"] as? Double ?? 0) >= 50)
      #expect(page.compactMap { harSummary($0)?["entries"] as? Int } == [3, 2])
      let entries = try harEntries()
      #expect(entries.count == 5)  // three hops + two attempts
      let first = try #require(entries[0]["response"] as? [String: Any])
      #expect(first["status"] as? Int == 302)
      #expect((first["redirectURL"] as? String)?.hasSuffix("/redirect/1") == true)
    }
  }

  #if canImport(FoundationNetworking)
    @Test("the Range windows of a download are logged as continuations, not redirects")
    func downloadWindows() async throws {
      try await withLogging { folder in
        let size = 2 * 1024 * 1024 + 100
        let fetcher = server.fetcher("/bytes/\(size)")
        fetcher.engine = .urlSession  // the URLSession engine's Range windows
        fetcher.destinationFileURL = folder.appendingPathComponent("download/file.bin")
        fetcher.downloadWindowLength = 1024 * 1024
        #expect(await fetcher.fetchResult().error == nil)
        SessionFetcher.flushLogs()
        let text = try runFile("fetch_1.txt")
        #expect(text.contains("Continued: bytes=1048576-2097151"))
        #expect(text.contains("Continued: bytes=2097152-3145727"))
        #expect(!text.contains("Redirected to:"))
        let entries = try pageEntries()
        let kinds = entries.map { $0["_kind"] as? String }
        #expect(kinds == ["first", "continuation", "continuation"])
        // The page shows the status the caller got, not the last window's 206.
        #expect(fetcher.statusCode == 200)
        #expect(entries.first.flatMap(harSummary)?["status"] as? Int == 200)
        #expect(entries.compactMap { harResponse($0)["status"] as? Int }.last == 206)
        // Each window's body went to the file: logged by its size, no body files.
        #expect(!allFiles(under: folder).contains { $0.0.lastPathComponent.hasSuffix("_response.bin") })
      }
    }
  #endif

  @Test("cookies set and sent are HAR cookies, their values redacted like the headers")
  func harCookies() async throws {
    try await withLogging { _ in
      let jar = SessionCookieStorage()
      let setter = server.fetcher("/set-cookie?c=sid%3DSECRET-1%3B%20Path%3D%2F%3B%20HttpOnly")
      setter.cookieStorage = jar
      #expect(await setter.fetchResult().error == nil)
      let sender = server.fetcher("/cookies")
      sender.cookieStorage = jar
      #expect(await sender.fetchResult().error == nil)

      let entries = try harEntries()
      #expect(entries.count == 2)
      let set = try #require((entries[0]["response"] as? [String: Any])?["cookies"] as? [[String: Any]])
      #expect(set.count == 1)
      #expect(set.first?["name"] as? String == "sid")
      #expect(set.first?["value"] as? String == "_snip_")
      #expect(set.first?["path"] as? String == "/")
      #expect(set.first?["httpOnly"] as? Bool == true)
      let sent = try #require((entries[1]["request"] as? [String: Any])?["cookies"] as? [[String: Any]])
      #expect(sent.map { $0["name"] as? String } == ["sid"])
      #expect(sent.first?["value"] as? String == "_snip_")
      #expect(!(try runFile("log.har")).contains("SECRET-1"))
    }
  }

  @Test("a transport error is logged with its error")
  func transportError() async throws {
    try await withLogging { _ in
      let fetcher = server.fetcher("/empty")
      let result = await fetcher.fetchResult()
      #expect(result.error != nil)
      let text = try runFile("fetch_1.txt")
      #expect(text.contains("Error: "))
      #expect(try harSummary(pageEntries()[0])?["error"] is String)
      let entries = try harEntries()
      #expect(entries.count == 1)
      #expect(entries[0]["_error"] is String)
    }
  }

  @Test("50 concurrent fetches: 50 entries, valid HAR, 50 text logs")
  func concurrency() async throws {
    try await withLogging { _ in
      await withTaskGroup(of: Void.self) { group in
        for index in 0..<50 {
          group.addTask { _ = await server.fetcher("/bytes/\(index + 1)").fetchResult() }
        }
      }
      let entries = try harEntries()
      #expect(entries.count == 50)
      let urls = Set(entries.compactMap { ($0["request"] as? [String: Any])?["url"] as? String })
      #expect(urls.count == 50)
      let run = try #require(SessionFetcher.loggingRunDirectory)
      for number in 1...50 {
        #expect(
          FileManager.default.fileExists(atPath: run.appendingPathComponent("fetch_\(number).txt").path))
      }
      let logs = try pageEntries().compactMap { harSummary($0)?["log"] as? String }
      #expect(Set(logs) == Set((1...50).map { "fetch_\($0).txt" }))
    }
  }

  @Test("an unwritable directory never fails a fetch; fetcher.log still works")
  func unwritableDirectory() async throws {
    try await withLogging { folder in
      let blocker = folder.appendingPathComponent("a-file")
      try Data("x".utf8).write(to: blocker)
      SessionFetcher.loggingDirectory = blocker.appendingPathComponent("logs")
      let fetcher = server.fetcher("/bytes/8")
      let result = await fetcher.fetchResult()
      #expect(result.error == nil)
      #expect(result.data == TestServer.patternBytes(count: 8))
      #expect(fetcher.log != nil)
      let second = server.fetcher("/bytes/9")
      #expect(await second.fetchResult().error == nil)
      SessionFetcher.flushLogs()
      #expect(SessionFetcher.loggingRunDirectory == nil)
    }
  }

  @Test("a file request body is logged by size, a stream's by its bytes")
  func streamAndFileBodies() async throws {
    try await withLogging { folder in
      let file = folder.appendingPathComponent("upload.bin")
      try Data(repeating: 7, count: 2048).write(to: file)
      let fromFile = server.fetcher("/upload")
      fromFile.bodyFileURL = file
      fromFile.request?.httpMethod = "PUT"
      _ = await fromFile.fetchResult()
      let streamed = server.fetcher("/upload")
      streamed.bodyStreamProvider = { InputStream(data: Data(repeating: 1, count: 100)) }
      streamed.bodyLength = 100
      _ = await streamed.fetchResult()
      let text1 = try runFile("fetch_1.txt")
      #expect(text1.contains("Request body: (file: \(file.path), 2048 bytes)"))
      let text2 = try runFile("fetch_2.txt")
      // The stream's bytes are logged as the engine reads them (see RunDirectoryAndStreamBodyTests).
      #expect(!text2.contains("(stream,"))
      #expect(text2.contains("Request body: (100 bytes)"))
    }
  }

  @Test("fetches stubbed by a test block are logged too")
  func stubbedFetch() async throws {
    try await withLogging { _ in
      let fetcher = SessionFetcher.fetcher(urlString: "https://example.com/stub?token=stub-secret-1")
      fetcher.setProperty(true, forKey: loggingTestMarker)
      fetcher.callbackQueue = DispatchQueue(label: "HTTPLoggingTests.stub")
      fetcher.testBlock = { fetcher, respond in
        let response = HTTPURLResponse(
          url: fetcher.request!.url!, statusCode: 201, httpVersion: "HTTP/1.1",
          headerFields: ["Content-Type": "application/json"])
        respond(response, Data(#"{"ok":true,"echo":"stub-secret-1"}"#.utf8), nil)
      }
      let result = await fetcher.fetchResult()
      #expect(result.error == nil)
      let log = try #require(fetcher.log)
      #expect(log.contains("Response: status 201"))
      #expect(!log.contains("stub-secret-1"))
      let entries = try harEntries()
      #expect(entries.count == 1)
    }
  }

  @Test("the cost of logging (printed, not asserted)")
  func cost() async throws {
    func measure(_ count: Int) async -> TimeInterval {
      let start = Date()
      for _ in 0..<count {
        _ = await server.fetcher("/bytes/2000?contentType=application/json").fetchResult()
      }
      SessionFetcher.flushLogs()
      return Date().timeIntervalSince(start) / Double(count) * 1000
    }
    let count = 100
    let off = try await withLogging { _ in
      SessionFetcher.isLoggingEnabled = false
      return await measure(count)
    }
    let memoryOnly = try await withLogging(toFile: false) { _ in await measure(count) }
    let files = try await withLogging { _ in await measure(count) }
    print(
      "HTTPLogging cost per fetch of 2000 bytes (\(count) sequential fetches): off "
        + String(format: "%.3f ms, fetcher.log only %.3f ms, files %.3f ms", off, memoryOnly, files))
  }
}
