import AsyncHTTPClient
import FetcherService
import Foundation
import MIMEDocument
import NIOCore
import NIOFileSystem
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What a bulk transfer ended with.
struct TransferOutcome: Sendable {
  var status = -1
  var bytes: Int64 = 0
  var failure: String?
}

/// A one-shot result handed from a callback thread to the waiting main thread.
///
/// `@unchecked Sendable`: `value` is guarded by `lock`, and `ready` orders the hand-over.
final class Completion<Value: Sendable>: @unchecked Sendable {
  private let lock = NSLock()
  private let ready = DispatchSemaphore(value: 0)
  private var value: Value?

  func fulfil(_ value: Value) {
    lock.withLock { self.value = value }
    ready.signal()
  }

  func wait(timeout: TimeInterval = 300) throws -> Value {
    guard ready.wait(timeout: .now() + timeout) == .success, let value = lock.withLock({ value }) else {
      throw BenchmarkError("no completion within \(Int(timeout)) s")
    }
    return value
  }
}

/// Runs `body` in a task and waits for it on the calling (non-async) thread.
func blocking<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
  let completion = Completion<Result<Value, any Error>>()
  Task {
    do {
      completion.fulfil(.success(try await body()))
    } catch {
      completion.fulfil(.failure(error))
    }
  }
  return try completion.wait().get()
}

/// Raw URLSession delegate for one download (moved to `destination` in `didFinishDownloadingTo`) or one
/// upload.
///
/// `@unchecked Sendable`: `moveFailure` is written on the serial delegate queue before
/// `didCompleteWithError`, which hands it over through `completion`.
final class RawBulkDelegate: NSObject, URLSessionDownloadDelegate, URLSessionDataDelegate,
  @unchecked Sendable
{
  let destination: URL?
  let completion = Completion<TransferOutcome>()
  private var moveFailure: String?

  init(destination: URL?) {
    self.destination = destination
  }

  func urlSession(
    _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
  ) {
    guard let destination else { return }
    do {
      try? FileManager.default.removeItem(at: destination)
      try FileManager.default.moveItem(at: location, to: destination)
    } catch {
      moveFailure = compact("move: \(error)")
    }
  }

  /// Set for a download through a data task: each chunk is written here as it arrives, as the
  /// fetcher writes its part file.
  var chunkFile: Foundation.FileHandle?

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    try? chunkFile?.write(contentsOf: data)
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    try? chunkFile?.close()
    var outcome = TransferOutcome()
    outcome.status = (task.response as? HTTPURLResponse)?.statusCode ?? -1
    outcome.bytes = destination == nil ? task.countOfBytesSent : task.countOfBytesReceived
    outcome.failure = error.map { compact("\($0)") } ?? moveFailure
    completion.fulfil(outcome)
  }

  func makeSession() -> URLSession {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    return URLSession(configuration: libraryLikeConfiguration(), delegate: self, delegateQueue: queue)
  }
}

/// A fetcher that may talk to the loopback nginx, with callbacks on a private serial queue.
func benchFetcher(_ request: URLRequest, tlsSettings: TLSSettings = TLSSettings()) -> SessionFetcher {
  let fetcher = SessionFetcher(request: request)
  fetcher.tlsSettings = tlsSettings
  fetcher.allowLocalhostRequest = true
  fetcher.allowedInsecureSchemes = ["http"]
  fetcher.callbackQueue = DispatchQueue(label: "bench.bulk-callbacks")
  return fetcher
}

/// Begins `fetcher` and waits for its completion.
func fetchAndWait(_ fetcher: SessionFetcher, bytes: @escaping @Sendable () -> Int64) throws -> TransferOutcome
{
  let completion = Completion<TransferOutcome>()
  fetcher.beginFetch { _, error in
    completion.fulfil(
      TransferOutcome(status: fetcher.statusCode, bytes: bytes(), failure: error.map { compact("\($0)") }))
  }
  return try completion.wait()
}

/// A MIME document of one file part (plus a small form field), as a multipart upload would send it.
func uploadDocument(file: URL) -> MIMEDocument {
  let document = MIMEDocument()
  document.appendPart(headers: ["Content-Disposition": "form-data; name=\"title\""], body: Data("big".utf8))
  document.appendPart(
    headers: [
      "Content-Disposition": "form-data; name=\"file\"; filename=\"\(file.lastPathComponent)\"",
      "Content-Type": "application/octet-stream",
    ], fileURL: file)
  return document
}

func fileSize(_ url: URL) -> Int64 {
  ((try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? NSNumber)?.int64Value ?? -1
}

/// A 1 GiB download or upload child run, reported with MB/s (10⁶ bytes per second).
///
/// The timed span is the client's whole operation: from creating the request (for MIME uploads,
/// generating the document, which includes its boundary search over the file) to the completion.
func runBulk(client: String, options: Options) throws {
  let bigURL = options.viaBase.appendingPathComponent("big.bin")
  let uploadURL = options.viaBase.appendingPathComponent("upload/x.bin")
  let ca = options.via == "plain" ? nil : options.caFile
  let bigFile = options.work.appendingPathComponent("www/big.bin")
  let outFile = options.work.appendingPathComponent("out.bin")
  var putRequest = URLRequest(url: uploadURL)
  putRequest.httpMethod = "PUT"

  let trace = MemoryTrace.startIfRequested()
  let cpuBefore = Measure.cpuSeconds()
  let start = Measure.now()
  var outcome: TransferOutcome
  switch client {
  case "raw-download":
    let delegate = RawBulkDelegate(destination: outFile)
    let session = delegate.makeSession()
    session.downloadTask(with: URLRequest(url: bigURL)).resume()
    outcome = try delegate.completion.wait()
    outcome.bytes = fileSize(outFile)
    session.finishTasksAndInvalidate()
  case "raw-download-datatask":
    let delegate = RawBulkDelegate(destination: nil)
    _ = FileManager.default.createFile(atPath: outFile.path, contents: nil)
    delegate.chunkFile = try Foundation.FileHandle(forWritingTo: outFile)
    let session = delegate.makeSession()
    session.dataTask(with: URLRequest(url: bigURL)).resume()
    outcome = try delegate.completion.wait()
    outcome.bytes = fileSize(outFile)
    session.finishTasksAndInvalidate()
  case "fetcher-download", "fetcher-download-whole":
    let fetcher = benchFetcher(URLRequest(url: bigURL), tlsSettings: options.benchTLSSettings)
    fetcher.destinationFileURL = outFile
    // "whole": one request for the body, as before Range windows (`downloadWindowLength`).
    if client == "fetcher-download-whole" { fetcher.downloadWindowLength = nil }
    outcome = try fetchAndWait(fetcher) { fileSize(outFile) }
  case "ahc-download":
    outcome = try ahcDownload(url: bigURL, to: outFile, trusting: ca)
  case "raw-upload-file":
    let delegate = RawBulkDelegate(destination: nil)
    let session = delegate.makeSession()
    session.uploadTask(with: putRequest, fromFile: bigFile).resume()
    outcome = try delegate.completion.wait()
    session.finishTasksAndInvalidate()
  case "raw-upload-mime":
    let document = uploadDocument(file: bigFile)
    let (stream, length, boundary) = try document.generateInputStream()
    var request = putRequest
    request.httpBodyStream = stream
    request.setValue(document.contentType(boundary: boundary), forHTTPHeaderField: "Content-Type")
    // As the library does: a stream goes chunked, without `Expect: 100-continue`.
    request.setValue("", forHTTPHeaderField: "Expect")
    let delegate = RawBulkDelegate(destination: nil)
    let session = delegate.makeSession()
    session.dataTask(with: request).resume()
    outcome = try delegate.completion.wait()
    outcome.bytes = length
    session.finishTasksAndInvalidate()
  case "raw-upload-file-stream":
    // The file through `httpBodyStream` (chunked), as the MIME upload sends its document: how much of
    // the gap to `uploadTask(fromFile:)` is the way the body is fed, not MIME.
    guard let stream = InputStream(url: bigFile) else { throw BenchmarkError("cannot open \(bigFile.path)") }
    var request = putRequest
    request.httpBodyStream = stream
    request.setValue("", forHTTPHeaderField: "Expect")
    let delegate = RawBulkDelegate(destination: nil)
    let session = delegate.makeSession()
    session.dataTask(with: request).resume()
    outcome = try delegate.completion.wait()
    outcome.bytes = fileSize(bigFile)
    session.finishTasksAndInvalidate()
  case "fetcher-upload-file":
    let fetcher = benchFetcher(putRequest, tlsSettings: options.benchTLSSettings)
    fetcher.bodyFileURL = bigFile
    outcome = try fetchAndWait(fetcher) { fileSize(bigFile) }
  case "fetcher-upload-file-chunked":
    let fetcher = benchFetcher(putRequest)
    fetcher.bodyFileURL = bigFile
    fetcher.sendsBodyFileChunked = true
    outcome = try fetchAndWait(fetcher) { fileSize(bigFile) }
  case "fetcher-upload-mime":
    let fetcher = benchFetcher(putRequest)
    try fetcher.setBody(uploadDocument(file: bigFile))
    let length = fetcher.bodyLength ?? -1
    outcome = try fetchAndWait(fetcher) { length }
  case "ahc-upload-file":
    outcome = try ahcUpload(file: bigFile, to: uploadURL, trusting: ca)
  default:
    throw BenchmarkError("unknown bulk client \(client)")
  }
  let seconds = Double(Measure.now() - start) / 1e9
  let cpu = Measure.cpuSeconds() - cpuBefore
  let traced = trace?.stop() ?? []
  var failure = outcome.failure
  if failure == nil, !(200...299).contains(outcome.status) { failure = "status=\(outcome.status)" }
  if failure == nil, outcome.bytes < options.bigSize { failure = "short=\(outcome.bytes)" }
  Measure.report(
    [
      "ok": failure == nil ? "1" : "0", "errors": failure == nil ? "0" : "1", "first_error": failure ?? "-",
      "status": "\(outcome.status)", "bytes": "\(outcome.bytes)",
      "mbps": Measure.fixed(Double(outcome.bytes) / seconds / 1e6, 1),
      "cpu_s": Measure.fixed(cpu), "secs": Measure.fixed(seconds),
    ], extra: traced)
}

private func makeAHC(trusting ca: URL?) -> HTTPClient {
  var configuration = HTTPClient.Configuration()
  configuration.tlsConfiguration = ahcTLSConfiguration(trusting: ca)
  configuration.timeout.connect = .seconds(10)
  configuration.timeout.read = .seconds(60)
  return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
}

/// AsyncHTTPClient's `FileDownloadDelegate`.
private func ahcDownload(url: URL, to file: URL, trusting ca: URL?) throws -> TransferOutcome {
  let client = makeAHC(trusting: ca)
  defer { try? client.syncShutdown() }
  let delegate = try FileDownloadDelegate(path: file.path)
  let request = try HTTPClient.Request(url: url.absoluteString)
  do {
    let progress = try client.execute(request: request, delegate: delegate, deadline: .now() + .minutes(5))
      .wait()
    return TransferOutcome(status: Int(progress.head.status.code), bytes: fileSize(file))
  } catch {
    return TransferOutcome(failure: compact("\(error)"))
  }
}

/// AsyncHTTPClient streaming the file in 64 KiB chunks read through NIOFileSystem (as perf-anchors.md).
private func ahcUpload(file: URL, to url: URL, trusting ca: URL?) throws -> TransferOutcome {
  let client = makeAHC(trusting: ca)
  defer { try? client.syncShutdown() }
  return try blocking {
    do {
      return try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(file.path)) { handle in
        let size = try await handle.info().size
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .PUT
        request.body = .stream(handle.readChunks(chunkLength: .kibibytes(64)), length: .known(size))
        let response = try await client.execute(request, timeout: .minutes(5))
        _ = try await response.body.collect(upTo: 1 << 20)
        return TransferOutcome(status: Int(response.status.code), bytes: size)
      }
    } catch {
      return TransferOutcome(failure: compact("\(error)"))
    }
  }
}
