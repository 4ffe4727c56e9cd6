import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// The original test suite's big upload: 199000 bytes, sent in 75000-byte chunks.
let bigLength = 199_000
let bigChunkSize: Int64 = 75_000
let bigData = TestServer.patternBytes(count: bigLength)

/// A command as the server recorded it.
struct RecordedCommand: Equatable, CustomStringConvertible {
  var command: String
  var offset: Int64?
  var length: Int

  var description: String { "\(command)@\(offset.map(String.init) ?? "-")+\(length)" }
}

extension TestServer {
  /// The commands of the upload at `path` (ending in `.upload`).
  func commands(_ path: String) -> [RecordedCommand] {
    uploadCommands(path: path).map {
      RecordedCommand(command: $0.command, offset: $0.offset, length: $0.length)
    }
  }
}

/// A standalone upload fetcher for `pathAndQuery` on `server` (a `.location` path), allowed to
/// use http to localhost, calling back on its own queue.
func makeUploadFetcher(
  _ server: TestServer, _ pathAndQuery: String, chunkSize: Int64 = bigChunkSize,
  headers: [String: String] = [:], service: FetcherService? = nil
) -> SessionUploadFetcher {
  var request = URLRequest(url: server.url(pathAndQuery))
  for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
  let fetcher = SessionUploadFetcher(
    request: request, uploadMIMEType: "application/octet-stream", chunkSize: chunkSize,
    fetcherService: service)
  fetcher.allowLocalhostRequest = true
  fetcher.allowedInsecureSchemes = ["http"]
  fetcher.callbackQueue = DispatchQueue(label: "upload test callbacks")
  return fetcher
}

/// Runs `fetcher` to its completion, counting its notifications (with `counter`, or a counter of
/// its own) as every upload test of the original does; see ``expectNotificationsBalanced(_:for:sourceLocation:)``.
func run(
  _ fetcher: SessionUploadFetcher, counter: UploadNotificationCounter? = nil,
  sourceLocation: SourceLocation = #_sourceLocation
) async -> (data: Data?, error: (any Error)?) {
  let counter = counter ?? UploadNotificationCounter(fetcher)
  typealias Outcome = (data: Data?, error: (any Error)?)
  let result = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
    // The first of the completion and the bound resumes (as `fetchResult(timeout:)` does).
    let once = Recorder<Bool>()
    fetcher.beginFetch { data, error in
      if once.appendIfEmpty(true) { continuation.resume(returning: (data, error)) }
    }
    // A bound for a test that goes wrong (an upload paused that nobody resumes), never a wait a
    // passing test makes: the run of the whole suite must not hang on it.
    Task { [weak fetcher] in
      try? await Task.sleep(nanoseconds: 120_000_000_000)
      guard once.appendIfEmpty(true) else { return }
      fetcher?.stopFetching()
      continuation.resume(returning: (nil, FetchTimeout()))
    }
  }
  await expectNotificationsBalanced(counter, for: fetcher, sourceLocation: sourceLocation)
  return result
}

/// The checks of the original's upload tests, for an upload that ended: each command fetcher's
/// Started has its Stopped, every retry delay that began ended (as many as
/// ``SessionUploadFetcher/retryCount``), the backoff began once if it retried at all, and the
/// location came at most once.
func expectNotificationsBalanced(
  _ counter: UploadNotificationCounter, for fetcher: SessionUploadFetcher,
  sourceLocation: SourceLocation = #_sourceLocation
) async {
  // A cancel command may still be on the wire when a stopped upload completes.
  #expect(await eventually { counter.started == counter.stopped }, sourceLocation: sourceLocation)
  if fetcher.response != nil {
    #expect(counter.started >= 1, "a command was answered", sourceLocation: sourceLocation)
  }
  let retries = fetcher.retryCount
  #expect(counter.retryDelayStarted == retries, sourceLocation: sourceLocation)
  #expect(counter.retryDelayStopped == retries, sourceLocation: sourceLocation)
  #expect(counter.backoffStarted == min(retries, 1), sourceLocation: sourceLocation)
  #expect(counter.locationObtained <= 1, sourceLocation: sourceLocation)
}

/// Counts an upload's notifications, as the original's `FetcherNotificationsCounter` does in every
/// upload test: its command fetchers' Started/Stopped (told apart by `parentUploadFetcher`), and the
/// upload fetcher's own retry-delay, backoff and location notifications.
final class UploadNotificationCounter: @unchecked Sendable {
  // `@unchecked Sendable`: `counts` and `commands` are touched under `lock`; `observers` only in
  // `init` and `deinit`.
  private let lock = NSLock()
  private var counts: [Notification.Name: Int] = [:]
  private var commands: [String] = []
  private var observers: [any NSObjectProtocol] = []

  init(_ upload: SessionUploadFetcher) {
    for name in [Notification.Name.sessionFetcherStarted, .sessionFetcherStopped] {
      observers.append(
        NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) {
          [weak self, weak upload] in
          guard let fetcher = $0.object as? SessionFetcher, let upload, fetcher.parentUploadFetcher === upload
          else { return }
          let command = fetcher.request?.value(forHTTPHeaderField: "X-Goog-Upload-Command") ?? "?"
          self?.record(name, command: name == .sessionFetcherStarted ? command : nil)
        })
    }
    for name in [
      Notification.Name.sessionFetcherRetryDelayStarted, .sessionFetcherRetryDelayStopped,
      .sessionUploadFetcherInitialBackoffStarted, .sessionUploadFetcherLocationObtained,
    ] {
      observers.append(
        NotificationCenter.default.addObserver(forName: name, object: upload, queue: nil) { [weak self] _ in
          self?.record(name, command: nil)
        })
    }
  }

  deinit {
    for observer in observers { NotificationCenter.default.removeObserver(observer) }
  }

  private func record(_ name: Notification.Name, command: String?) {
    lock.withLock {
      counts[name, default: 0] += 1
      if let command { commands.append(command) }
    }
  }

  func count(_ name: Notification.Name) -> Int { lock.withLock { counts[name] ?? 0 } }
  var started: Int { count(.sessionFetcherStarted) }
  var stopped: Int { count(.sessionFetcherStopped) }
  var retryDelayStarted: Int { count(.sessionFetcherRetryDelayStarted) }
  var retryDelayStopped: Int { count(.sessionFetcherRetryDelayStopped) }
  var backoffStarted: Int { count(.sessionUploadFetcherInitialBackoffStarted) }
  var locationObtained: Int { count(.sessionUploadFetcherLocationObtained) }
  /// The commands of the command fetchers that started, in order.
  var startedCommands: [String] { lock.withLock { commands } }
}

/// Opens a file with `data` for reading; the file is deleted at once (the handle keeps it).
func fileHandle(with data: Data) throws -> FileHandle {
  let url = try temporaryFile(data)
  defer { try? FileManager.default.removeItem(at: url) }
  return try FileHandle(forReadingFrom: url)
}

/// The status code of a `SessionFetcherError.status` error.
func statusCode(_ error: (any Error)?) -> Int? {
  (error as? SessionFetcherError)?.statusCode
}

/// Writes `data` to a new temporary file.
func temporaryFile(_ data: Data) throws -> URL {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString).bin")
  try data.write(to: url)
  return url
}

/// Whether the request of a command fetcher sends the chunk at `offset`.
func isChunk(_ fetcher: SessionFetcher, at offset: Int64) -> Bool {
  fetcher.request?.value(forHTTPHeaderField: "X-Goog-Upload-Offset") == String(offset)
}

/// The commands, offsets and lengths of the original's big upload in 75000-byte chunks.
let bigUploadCommands = [
  RecordedCommand(command: "upload", offset: 0, length: 75_000),
  RecordedCommand(command: "upload", offset: 75_000, length: 75_000),
  RecordedCommand(command: "upload, finalize", offset: 150_000, length: 49_000),
]

/// A provider of the pattern bytes whose chunks tell when they are freed: each chunk owns its
/// bytes, and its deallocator records the chunk's offset.
final class ChunkLifetimes: Sendable {
  private let reads = Recorder<Int64>()
  private let frees = Recorder<Int64>()

  /// The offsets of the chunks read, in order.
  var read: [Int64] { reads.values }
  /// The offsets of the chunks freed.
  var freed: [Int64] { frees.values }

  func provider(length total: Int) -> SessionUploadFetcher.DataProvider {
    { [reads, frees] offset, length, respond in
      let count = Int(min(length, Int64(total) - offset))
      let bytes = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 1)
      let pattern = TestServer.patternBytes(count: Int(offset) + count).suffix(count)
      pattern.copyBytes(to: bytes.assumingMemoryBound(to: UInt8.self), count: count)
      reads.append(offset)
      let chunk = Data(
        bytesNoCopy: bytes, count: count,
        deallocator: .custom { pointer, _ in
          pointer.deallocate()
          frees.append(offset)
        })
      respond(chunk, nil)
    }
  }
}
