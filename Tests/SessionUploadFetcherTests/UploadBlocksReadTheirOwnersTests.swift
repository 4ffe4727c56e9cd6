import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// The upload's blocks are the caller's code and may read the upload and its service: none runs
/// while the library holds a lock (in debug builds `LockAudit` stops the process first, naming the
/// block; otherwise a read from inside would wait on itself for ever).
@Suite("Upload blocks may read their own upload and service")
struct UploadBlocksReadTheirOwnersTests {
  enum Block: String, CaseIterable, Sendable {
    case retryBlock, sendProgressBlock, willBeginCommandFetcher, dataProvider, fullLengthDataProvider
    case cancellationHandler, completionHandler
  }

  static func read(_ upload: SessionUploadFetcher?) -> String {
    guard let upload else { return "no upload" }
    let service = upload.fetcherService.map { "service fetchers \($0.numberOfFetchers)" } ?? "no service"
    return "fetching \(upload.isFetching), paused \(upload.isPaused), at \(upload.uploadedLength); \(service)"
  }

  @Test(arguments: Block.allCases)
  func blockReadsItsUploadAndService(_ block: Block) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = FetcherService()
    service.allowLocalhostRequest = true
    service.allowedInsecureSchemes = ["http"]
    let path =
      block == .retryBlock ? "/blocks.location?uploadStatus=503&uploadStatusChunks=1" : "/blocks.location"
    let upload = makeUploadFetcher(server, path, service: service)
    let reads = Recorder<String>()
    let finished = Recorder<Bool>()
    let data = TestServer.patternBytes(count: 150_000)
    switch block {
    case .retryBlock:
      upload.isRetryEnabled = true
      upload.minRetryInterval = 0.01
      upload.retryBlock = { [weak upload] suggested, _, respond in
        reads.append(Self.read(upload))
        respond(suggested)
      }
    case .sendProgressBlock:
      upload.sendProgressBlock = { [weak upload] _, _, _ in reads.append(Self.read(upload)) }
    case .willBeginCommandFetcher:
      upload.willBeginCommandFetcher = { [weak upload] _ in reads.append(Self.read(upload)) }
    case .dataProvider:
      upload.setUploadDataLength(
        Int64(data.count),
        provider: { [weak upload] offset, length, respond in
          reads.append(Self.read(upload))
          respond(data.subdata(in: Int(offset)..<min(data.count, Int(offset + length))), nil)
        })
    case .fullLengthDataProvider:
      upload.setUploadDataLength(
        SessionUploadFetcher.unknownLength,
        fullLengthProvider: { [weak upload] offset, length, respond in
          reads.append(Self.read(upload))
          let end = min(data.count, Int(offset + length))
          respond(data.subdata(in: min(Int(offset), end)..<end), Int64(data.count), nil)
        })
    case .cancellationHandler:
      upload.willBeginCommandFetcher = { [weak upload] fetcher in
        // Stopped once the upload URL is known, before the first chunk goes out: a cancel command
        // goes out, then the handler runs. (Stopped from here, not from another queue, so that
        // the upload cannot end before the stop lands.)
        if fetcher.request?.value(forHTTPHeaderField: "X-Goog-Upload-Command") == "upload" {
          upload?.stopFetching()
        }
      }
      upload.cancellationHandler = { [weak upload] _, _, _ in
        reads.append(Self.read(upload))
        finished.append(true)
      }
    case .completionHandler:
      break
    }
    if upload.uploadData == nil && block != .dataProvider && block != .fullLengthDataProvider {
      upload.uploadData = data
    }
    upload.beginFetch { [weak upload] _, _ in
      if block == .completionHandler { reads.append(Self.read(upload)) }
      finished.append(true)
    }
    guard await eventually(timeout: 60, { finished.count >= 1 && reads.count > 0 }) else {
      Issue.record("\(block.rawValue) did not run, or the upload did not end: blocked on a lock?")
      upload.stopFetching()
      return
    }
    #expect(reads.values.allSatisfy { $0.contains("service fetchers") })
  }
}
