import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// The original's upload tests with no equivalent before: file handles, cancel during a retry
/// wait, pause with an unknown length, a provider that tells the length, notifications counted.
@Suite("Uploads: the original's file handle, retry, pause and notification scenarios")
struct GTMParityUploadTests {
  @Test("Big file handle in 75000-byte chunks (testBigFileHandleChunkedUploadFetch)")
  func bigFileHandleChunkedUpload() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let handle = try fileHandle(with: bigData)
    defer { try? handle.close() }
    let fetcher = makeUploadFetcher(server, "/handle.location")
    fetcher.uploadFileHandle = handle
    #expect(fetcher.uploadFileHandle === handle)
    #expect(fetcher.activeFetcher == nil)
    let counter = UploadNotificationCounter(fetcher)
    let parents = Recorder<Bool>()
    fetcher.willBeginCommandFetcher = { [weak fetcher] command in
      parents.append(command.parentUploadFetcher === fetcher && fetcher?.activeFetcher !== command)
    }
    let (_, error) = await run(fetcher, counter: counter)
    #expect(error == nil)
    #expect(server.commands("/handle.upload") == bigUploadCommands)
    let upload = try #require(server.resumableUpload(path: "/handle.upload"))
    #expect(upload.checksum == TestServer.checksum(bigData))
    #expect(upload.declaredLength == Int64(bigLength))
    #expect(parents.values == [true, true, true, true])
    #expect(await eventually { counter.stopped == 4 })
    #expect(counter.started == 4)
    #expect(counter.startedCommands == ["start", "upload", "upload", "upload, finalize"])
    #expect(counter.retryDelayStarted == 0 && counter.retryDelayStopped == 0 && counter.backoffStarted == 0)
    #expect(counter.locationObtained == 1)
    let last = try #require(fetcher.lastChunkRequest)
    #expect(last.value(forHTTPHeaderField: "X-Goog-Upload-Command") == "upload, finalize")
    #expect(last.value(forHTTPHeaderField: "X-Goog-Upload-Offset") == "150000")
    #expect(last.url == server.url("/handle.upload"))
    #expect(await eventually { fetcher.activeFetcher == nil })
  }

  @Test("A file handle with the standard chunk size: one chunk (testHugeFileHandleSingleChunkedUploadFetch)")
  func fileHandleSingleChunk() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let handle = try fileHandle(with: bigData)
    defer { try? handle.close() }
    let fetcher = makeUploadFetcher(
      server, "/single.location", chunkSize: SessionUploadFetcher.standardChunkSize)
    fetcher.uploadFileHandle = handle
    let counter = UploadNotificationCounter(fetcher)
    let (_, error) = await run(fetcher, counter: counter)
    #expect(error == nil)
    #expect(
      server.commands("/single.upload") == [
        RecordedCommand(command: "upload, finalize", offset: 0, length: bigLength)
      ])
    #expect(server.resumableUpload(path: "/single.upload")?.checksum == TestServer.checksum(bigData))
    #expect(await eventually { counter.stopped == 2 })
    #expect(counter.started == 2)
  }

  @Test("A file handle closed mid-upload: a clear error, no partial chunk, Started/Stopped balanced")
  func fileHandleClosedMidUpload() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let handle = try fileHandle(with: bigData)
    let fetcher = makeUploadFetcher(server, "/closed.location")
    fetcher.uploadFileHandle = handle
    let counter = UploadNotificationCounter(fetcher)
    fetcher.willBeginCommandFetcher = { command in
      if isChunk(command, at: 0) { try? handle.close() }
    }
    let (data, error) = await run(fetcher, counter: counter)
    #expect(data == nil)
    guard case .chunkUnavailable(let description)? = error as? SessionUploadFetcherError else {
      Issue.record("expected chunkUnavailable, got \(String(describing: error))")
      return
    }
    #expect(description.contains("file handle"))
    #expect(description.contains("75000"))
    #expect(
      server.commands("/closed.upload") == [RecordedCommand(command: "upload", offset: 0, length: 75_000)])
    #expect(await eventually { counter.stopped == 2 })
    #expect(counter.started == 2)
    #expect(!fetcher.isFetching)
    #expect(await eventually { fetcher.activeFetcher == nil })
    // The upload lets go of the handle once it ended.
    #expect(await eventually { fetcher.uploadFileHandle == nil })
  }

  @Test("A file handle closed before the upload begins fails it before any traffic")
  func fileHandleClosedBeforeBegin() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let handle = try fileHandle(with: bigData)
    try handle.close()
    let fetcher = makeUploadFetcher(server, "/closed-early.location")
    fetcher.uploadFileHandle = handle
    let counter = UploadNotificationCounter(fetcher)
    let (_, error) = await run(fetcher, counter: counter)
    guard case .bodyUnavailable(let description)? = error as? SessionFetcherError else {
      Issue.record("expected bodyUnavailable, got \(String(describing: error))")
      return
    }
    #expect(description.contains("file handle"))
    #expect(server.requests.isEmpty)
    #expect(counter.started == 0 && counter.stopped == 0)
  }

  @Test("Pause and resume an upload of unknown length (testBigDataChunkedUploadWithUnknownFileSizeAndPause)")
  func pauseWithUnknownLength() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/unknown-pause.location")
    fetcher.setUploadDataLength(SessionUploadFetcher.unknownLength) { offset, length, respond in
      let end = min(bigLength, Int(offset + length))
      respond(bigData.subdata(in: min(Int(offset), end)..<end), nil)
    }
    let counter = UploadNotificationCounter(fetcher)
    let paused = Recorder<Bool>()
    fetcher.willBeginCommandFetcher = { [weak fetcher] command in
      if isChunk(command, at: 75_000), paused.values.isEmpty {
        paused.append(true)
        fetcher?.pauseFetching()
      }
    }
    async let result = run(fetcher, counter: counter)
    #expect(await eventually { paused.values.count == 1 })
    #expect(fetcher.isPaused)
    #expect(fetcher.activeFetcher != nil)
    fetcher.resumeFetching()
    let (_, error) = await result
    #expect(error == nil)
    #expect(
      server.commands("/unknown-pause.upload") == [
        RecordedCommand(command: "upload", offset: 0, length: 75_000),
        RecordedCommand(command: "query", offset: nil, length: 0),
        RecordedCommand(command: "upload", offset: 75_000, length: 75_000),
        RecordedCommand(command: "upload, finalize", offset: 150_000, length: 49_000),
      ])
    let upload = try #require(server.resumableUpload(path: "/unknown-pause.upload"))
    #expect(upload.checksum == TestServer.checksum(bigData))
    #expect(upload.declaredLength == -1)
    // The paused chunk never began: no Started for it.
    #expect(await eventually { counter.stopped == 5 })
    #expect(counter.started == 5)
    #expect(counter.retryDelayStarted == 0)
  }

  @Test("A provider that tells the full length: the rest is planned to it, progress reports it")
  func providerTellsTheLength() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let data = TestServer.patternBytes(count: 150_000)
    let fetcher = makeUploadFetcher(server, "/told.location")
    fetcher.setUploadDataLength(
      SessionUploadFetcher.unknownLength,
      fullLengthProvider: { offset, length, respond in
        let end = min(data.count, Int(offset + length))
        respond(data.subdata(in: min(Int(offset), end)..<end), Int64(data.count), nil)
      })
    let expected = Recorder<Int64>()
    fetcher.sendProgressBlock = { _, _, total in expected.append(total) }
    let counter = UploadNotificationCounter(fetcher)
    let (_, error) = await run(fetcher, counter: counter)
    #expect(error == nil)
    // Known after the first chunk: the second one finalizes, with no empty finalize after it.
    #expect(
      server.commands("/told.upload") == [
        RecordedCommand(command: "upload", offset: 0, length: 75_000),
        RecordedCommand(command: "upload, finalize", offset: 75_000, length: 75_000),
      ])
    #expect(server.resumableUpload(path: "/told.upload")?.checksum == TestServer.checksum(data))
    #expect(expected.values.last == 150_000)
    #expect(counter.startedCommands == ["start", "upload", "upload, finalize"])
  }

  @Test("A provider that tells a length its bytes do not reach: chunkUnavailable, nothing more sent")
  func providerTellsAWrongLength() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/wrong.location")
    fetcher.setUploadDataLength(
      SessionUploadFetcher.unknownLength,
      fullLengthProvider: { _, _, respond in respond(Data(repeating: 1, count: 10), 500_000, nil) })
    let counter = UploadNotificationCounter(fetcher)
    let (_, error) = await run(fetcher, counter: counter)
    guard case .chunkUnavailable? = error as? SessionUploadFetcherError else {
      Issue.record("expected chunkUnavailable, got \(String(describing: error))")
      return
    }
    #expect(server.commands("/wrong.upload").isEmpty)
    #expect(await eventually { counter.stopped == 1 })
    #expect(counter.started == 1)
  }

  @Test("Upload callbacks on a concurrent queue: one at a time, the completion last")
  func concurrentCallbackQueue() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/concurrent.location")
    fetcher.uploadData = bigData
    fetcher.callbackQueue = DispatchQueue(label: "concurrent upload callbacks", attributes: .concurrent)
    let lock = NSLock()
    nonisolated(unsafe) var running = 0
    nonisolated(unsafe) var mostAtOnce = 0
    let events = Recorder<String>()
    @Sendable func slow(_ event: String) {
      lock.withLock {
        running += 1
        mostAtOnce = max(mostAtOnce, running)
      }
      events.append(event)
      Thread.sleep(forTimeInterval: 0.02)
      lock.withLock { running -= 1 }
    }
    fetcher.sendProgressBlock = { _, total, _ in slow("progress \(total)") }
    let counter = UploadNotificationCounter(fetcher)
    let done = Recorder<Bool>()
    fetcher.beginFetch { _, error in
      slow("completion")
      done.append(error == nil)
    }
    #expect(await eventually { done.values.count == 1 })
    await expectNotificationsBalanced(counter, for: fetcher)
    #expect(counter.startedCommands == ["start", "upload", "upload", "upload, finalize"])
    #expect(done.values == [true])
    #expect(lock.withLock { mostAtOnce } == 1)
    #expect(events.values.last == "completion")
    #expect(events.values.dropLast().last == "progress \(bigLength)")
  }
}
