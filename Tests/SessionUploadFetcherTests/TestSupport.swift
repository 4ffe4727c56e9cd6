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

/// Runs `fetcher` to its completion, counting its notifications as every upload test of the
/// original does: each command fetcher's Started has its Stopped, every retry delay that began
/// ended (as many as ``SessionUploadFetcher/retryCount``), the backoff began once if it retried at
/// all, and the location came at most once.
func run(
  _ fetcher: SessionUploadFetcher, sourceLocation: SourceLocation = #_sourceLocation
) async -> (data: Data?, error: (any Error)?) {
  let counter = UploadNotificationCounter(fetcher)
  let result = await withCheckedContinuation { continuation in
    fetcher.beginFetch { data, error in continuation.resume(returning: (data, error)) }
  }
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
  return result
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
