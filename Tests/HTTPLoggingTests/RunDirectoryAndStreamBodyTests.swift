import FetcherService
import FetcherTesting
import Foundation
import MIMEDocument
import SessionFetcher
import Testing

@testable import HTTPLogging

/// `loggingRunDirectory` and `loggingDateStamp` set by the caller (the original's
/// `setLogDirectoryForCurrentRun:` and `setLoggingDateStamp:`), and streamed request bodies logged
/// by their bytes (the original's `loggedStreamProviderForStreamProvider:`).
extension LoggingFileTests {
  @Test("loggingRunDirectory set before the first logged fetch: the run's files go exactly there")
  func chosenRunDirectory() async throws {
    try await withLogging { folder in
      let chosen = folder.appendingPathComponent("nested/exact-run", isDirectory: true)
      SessionFetcher.loggingRunDirectory = chosen
      #expect(SessionFetcher.loggingRunDirectory == chosen.standardizedFileURL)
      #expect(await server.fetcher("/text?value=first").fetchResult().error == nil)
      #expect(await server.fetcher("/text?value=second").fetchResult().error == nil)
      SessionFetcher.flushLogs()
      for name in ["index.html", "log.har", "fetch_1.txt", "fetch_2.txt"] {
        #expect(FileManager.default.fileExists(atPath: chosen.appendingPathComponent(name).path), "\(name)")
      }
      #expect(try runFolders(in: folder).isEmpty)
      #expect(try harEntries().count == 2)
      let attributes = try FileManager.default.attributesOfItem(atPath: chosen.path)
      #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)

      // Back to nil: the next fetch begins a dated run folder in the logging directory.
      SessionFetcher.loggingRunDirectory = nil
      #expect(await server.fetcher("/text?value=third").fetchResult().error == nil)
      SessionFetcher.flushLogs()
      #expect(try runFolders(in: folder).count == 1)
      #expect(!FileManager.default.fileExists(atPath: chosen.appendingPathComponent("fetch_3.txt").path))
    }
  }

  @Test("loggingRunDirectory naming a file: file logging stops with a notice, the fetch succeeds")
  func chosenRunDirectoryIsAFile() async throws {
    try await withLogging { folder in
      let file = folder.appendingPathComponent("not-a-folder")
      try Data("x".utf8).write(to: file)
      SessionFetcher.loggingRunDirectory = file
      let fetcher = server.fetcher("/text?value=ok")
      #expect(await fetcher.fetchResult().error == nil)
      #expect(fetcher.log != nil)
      SessionFetcher.flushLogs()
      #expect(try Data(contentsOf: file) == Data("x".utf8))
      #expect(try runFolders(in: folder).isEmpty)
    }
  }

  @Test("loggingDateStamp names the run folder; separators are removed")
  func chosenDateStamp() async throws {
    try await withLogging { folder in
      SessionFetcher.loggingDateStamp = "nightly/42"
      #expect(SessionFetcher.loggingDateStamp == "nightly42")
      #expect(await server.fetcher("/text?value=stamped").fetchResult().error == nil)
      SessionFetcher.flushLogs()
      let names = try runFolders(in: folder).map(\.lastPathComponent)
      #expect(names == ["LogTest_log_nightly42"])
      SessionFetcher.loggingDateStamp = "/"
      #expect(SessionFetcher.loggingDateStamp == nil)
    }
  }

  @Test("a stream provider's body is logged by its bytes, and the server still gets every byte")
  func streamedBodyBytes() async throws {
    try await withLogging { _ in
      let body = Data("alpha=1&beta=a-streamed-request-body".utf8)
      let fetcher = server.fetcher("/upload")
      fetcher.bodyStreamProvider = { InputStream(data: body) }
      fetcher.setRequestValue("text/plain", forHTTPHeaderField: "Content-Type")
      let result = await fetcher.fetchResult()
      #expect(result.error == nil)
      #expect(server.requests(path: "/upload").last?.body == body)
      let log = try #require(fetcher.log)
      #expect(log.contains("Request body: (\(body.count) bytes)"))
      #expect(log.contains("alpha=1&beta=a-streamed-request-body"))
      #expect(!log.contains("(stream,"))
    }
  }

  @Test("a streamed body longer than loggingMaximumBodySize is logged up to it; the request is whole")
  func streamedBodyCapped() async throws {
    try await withLogging(maximumBodySize: 10) { _ in
      let body = Data("0123456789ABCDEFGHIJ-the-rest-is-not-logged".utf8)
      let fetcher = server.fetcher("/upload")
      fetcher.setBodyStream({ InputStream(data: body) }, exactLength: Int64(body.count))
      fetcher.setRequestValue("text/plain", forHTTPHeaderField: "Content-Type")
      #expect(await fetcher.fetchResult().error == nil)
      #expect(server.requests(path: "/upload").last?.body == body)
      let log = try #require(fetcher.log)
      #expect(log.contains("Request body: (\(body.count) bytes; truncated to the first 10 bytes)"))
      #expect(log.contains("0123456789"))
      #expect(!log.contains("ABCDEFGHIJ"))
    }
  }

  @Test("a MIME document body is logged by its bytes, its parts readable")
  func mimeDocumentBody() async throws {
    try await withLogging { _ in
      let document = MIMEDocument()
      document.appendPart(
        headers: ["Content-Disposition": "form-data; name=\"note\""], body: Data("hello-mime-part".utf8))
      let fetcher = server.fetcher("/upload")
      try fetcher.setBody(document)
      #expect(await fetcher.fetchResult().error == nil)
      let sent = try #require(server.requests(path: "/upload").last?.body)
      #expect(String(decoding: sent, as: UTF8.self).contains("hello-mime-part"))
      let log = try #require(fetcher.log)
      #expect(log.contains("Request body: (\(sent.count) bytes)"))
      #expect(log.contains("hello-mime-part"))
    }
  }
}
