import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@testable import HTTPLogging

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The property that marks a fetcher made by these tests (see ``withLogging(toFile:maximumBodySize:redaction:_:)``).
let loggingTestMarker = "HTTPLoggingTests.fetcher"

extension TestServer {
  /// A fetcher for a path on this server, allowed to reach localhost, with a private serial queue.
  func fetcher(_ pathAndQuery: String) -> SessionFetcher {
    let fetcher = SessionFetcher.fetcher(url: url(pathAndQuery))
    fetcher.setProperty(true, forKey: loggingTestMarker)
    fetcher.allowLocalhostRequest = true
    // A private jar: cookies these tests set must not reach other suites' requests.
    fetcher.cookieStorage = SessionCookieStorage()
    fetcher.callbackQueue = DispatchQueue(label: "HTTPLoggingTests.callbacks")
    return fetcher
  }
}

/// A fresh empty folder under the temporary directory.
func makeTemporaryFolder() throws -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "httplogging-tests-\(UUID().uuidString)", isDirectory: true)
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}

/// Turns logging on into a fresh folder for the body, and restores every setting after.
func withLogging<T>(
  toFile: Bool = true, maximumBodySize: Int = 1_000_000, redaction: Bool = true,
  _ body: (URL) async throws -> T
) async throws -> T {
  let saved = LoggingSettings.shared.current
  let folder = try makeTemporaryFolder()
  SessionFetcher.loggingDirectory = folder
  SessionFetcher.loggingProcessName = "LogTest"
  SessionFetcher.isLoggingToFileEnabled = toFile
  SessionFetcher.loggingMaximumBodySize = maximumBodySize
  SessionFetcher.isLogRedactionEnabled = redaction
  // Other suites fetch in parallel in this process: log only this suite's fetchers.
  SessionFetcher.loggingFilter = { $0.property(forKey: loggingTestMarker) != nil }
  SessionFetcher.isLoggingEnabled = true
  defer {
    SessionFetcher.flushLogs()
    LoggingSettings.shared.withLock {
      $0 = saved
      $0.runGeneration += 1
    }
    // `HTTPLOGGING_KEEP_TEST_LOGS=1` keeps the folders for a look.
    if ProcessInfo.processInfo.environment["HTTPLOGGING_KEEP_TEST_LOGS"] == nil {
      try? FileManager.default.removeItem(at: folder)
    }
  }
  return try await body(folder)
}

/// The run folders in `folder`.
func runFolders(in folder: URL) throws -> [URL] {
  try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
    .filter { $0.lastPathComponent.contains("_log_") && !$0.lastPathComponent.hasSuffix(".html") }
    .sorted { $0.lastPathComponent < $1.lastPathComponent }
}

/// Every file under `folder`, recursively, with its bytes.
func allFiles(under folder: URL) -> [(URL, Data)] {
  guard let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else {
    return []
  }
  var files: [(URL, Data)] = []
  for case let url as URL in enumerator {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
      let data = try? Data(contentsOf: url)
    {
      files.append((url, data))
    }
  }
  return files
}

/// The current run folder's file `name` as text.
func runFile(_ name: String) throws -> String {
  SessionFetcher.flushLogs()
  let folder = try #require(SessionFetcher.loggingRunDirectory)
  return try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
}

/// The current run's HAR, parsed.
func harEntries() throws -> [[String: Any]] {
  let text = try runFile("log.har")
  let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
  let root = try #require(object as? [String: Any])
  let log = try #require(root["log"] as? [String: Any])
  #expect(log["version"] as? String == "1.2")
  return try #require(log["entries"] as? [[String: Any]])
}

/// The HAR entries embedded in a run's page (its `script.har-entries` elements), in order.
func pageEntries(html: String? = nil) throws -> [[String: Any]] {
  let html = try html ?? runFile("index.html")
  var entries: [[String: Any]] = []
  for match in html.matches(of: /<script type="application\/json" class="har-entries">([^<]*)<\/script>/) {
    let array = try JSONSerialization.jsonObject(with: Data(match.output.1.utf8))
    entries += try #require(array as? [[String: Any]])
  }
  return entries
}

func harRequest(_ entry: [String: Any]) -> [String: Any] { entry["request"] as? [String: Any] ?? [:] }
func harResponse(_ entry: [String: Any]) -> [String: Any] { entry["response"] as? [String: Any] ?? [:] }
func harSummary(_ entry: [String: Any]) -> [String: Any]? { entry["_fetchSummary"] as? [String: Any] }

/// The body files (`_file`) the entries name.
func fileNames(in entries: [[String: Any]]) -> [String] {
  entries.flatMap { entry in
    [
      (harRequest(entry)["postData"] as? [String: Any])?["_file"],
      (harResponse(entry)["content"] as? [String: Any])?["_file"],
    ]
    .compactMap { $0 as? String }
  }
}

/// A JSON value with its object keys sorted, for comparing parsed documents.
func canonicalJSON(_ value: Any) throws -> String {
  String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
}
