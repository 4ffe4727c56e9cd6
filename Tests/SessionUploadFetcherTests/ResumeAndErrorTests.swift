import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// Queries, errors, retries, pause, cancel and resuming by location, on the wire.
@Suite("Upload queries, errors and resumption")
struct ResumeAndErrorTests {
  @Test("A chunk refused with 4xx queries; a final answer completes the upload")
  func queryFinal() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(
      server, "/qf.location?uploadStatus=400&uploadStatusChunks=1&queryStatus=final")
    fetcher.uploadData = bigData
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(server.commands("/qf.upload").map(\.command) == ["upload", "query"])
    // Final: the server holds the whole upload, though only a query said so.
    #expect(fetcher.uploadedLength == Int64(bigLength))
  }

  @Test("A query answering a size resumes there: finalize at 199000")
  func queryWithOffset() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(
      server, "/qo.location?uploadStatus=400&uploadStatusChunks=1&bytesReceived=199000")
    fetcher.uploadData = bigData
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(
      server.commands("/qo.upload") == [
        RecordedCommand(command: "upload", offset: 0, length: 75_000),
        RecordedCommand(command: "query", offset: nil, length: 0),
        RecordedCommand(command: "finalize", offset: 199_000, length: 0),
      ])
  }

  @Test("A chunk refused with 404 fails without a query")
  func chunk404() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/nf.location?uploadStatus=404")
    fetcher.uploadData = bigData
    let (data, error) = await run(fetcher)
    #expect(statusCode(error) == 404)
    #expect(data != nil)
    #expect(server.commands("/nf.upload").map(\.command) == ["upload"])
  }

  @Test("The start failing with 502 fails the upload with 502")
  func initialFetchError() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/status/502")
    fetcher.uploadData = bigData
    let (_, error) = await run(fetcher)
    #expect(statusCode(error) == 502)
    #expect(server.requests.count == 1)
  }

  @Test("A start answer without the protocol's headers is status 501")
  func startWithoutLocation() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/text?value=hello")
    fetcher.uploadData = bigData
    let (_, error) = await run(fetcher)
    #expect(statusCode(error) == 501)
  }

  @Test("The server refuses a start without the protocol's headers with 503")
  func serverRefusesPlainStart() async throws {
    let server = try TestServer()
    defer { server.stop() }
    var request = URLRequest(url: server.url("/plain.location"))
    request.httpMethod = "POST"
    let fetcher = SessionFetcher(request: request)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = DispatchQueue(label: "plain")
    await #expect(throws: SessionFetcherError.self) { try await fetcher.beginFetch() }
    #expect(fetcher.statusCode == 503)
  }

  @Test("A query failing with 502 fails the upload with 502")
  func queryServerError() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/qe.location?uploadStatus=400&queryStatus=error")
    fetcher.uploadData = bigData
    let (_, error) = await run(fetcher)
    #expect(statusCode(error) == 502)
    #expect(server.commands("/qe.upload").map(\.command) == ["upload", "query"])
  }

  @Test("A query answering cancelled is status 501")
  func queryCancelled() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/qc.location?uploadStatus=400&queryStatus=cancelled")
    fetcher.uploadData = bigData
    let (_, error) = await run(fetcher)
    #expect(statusCode(error) == 501)
    #expect(server.commands("/qc.upload").map(\.command) == ["upload", "query"])
  }

  @Test("A server that keeps refusing chunks with 4xx: three queries, then the chunk's error")
  func endlessRefusal() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/refuse.location?uploadStatus=400")
    fetcher.uploadData = bigData
    let (_, error) = await run(fetcher)
    #expect(statusCode(error) == 400)
    let expected = ["upload", "query", "upload", "query", "upload", "query", "upload"]
    #expect(server.commands("/refuse.upload").map(\.command) == expected)
  }

  @Test("A transient chunk failure retries with query and resume")
  func retrySucceeds() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/retry.location?uploadStatus=503&uploadStatusChunks=2")
    fetcher.uploadData = bigData
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(
      server.commands("/retry.upload") == [
        RecordedCommand(command: "upload", offset: 0, length: 75_000),
        RecordedCommand(command: "upload", offset: 75_000, length: 75_000),
        RecordedCommand(command: "query", offset: nil, length: 0),
        RecordedCommand(command: "upload", offset: 75_000, length: 75_000),
        RecordedCommand(command: "upload, finalize", offset: 150_000, length: 49_000),
      ])
    #expect(fetcher.retryCount == 1)
    #expect(server.resumableUpload(path: "/retry.upload")?.checksum == TestServer.checksum(bigData))
  }

  @Test("Retrying ends with Retry Limit Reached once the next delay reaches the maximum")
  func limitedRetry() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/limit.location?uploadStatus=503")
    fetcher.uploadData = bigData
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    fetcher.maxRetryInterval = 0.1
    let (_, error) = await run(fetcher)
    guard case .retryLimitReached? = error as? SessionUploadFetcherError else {
      Issue.record("expected retryLimitReached, got \(String(describing: error))")
      return
    }
    #expect(String(describing: error!).contains("Retry Limit Reached"))
    // Delays 0.01, 0.02, 0.04, 0.08; the next (0.16) reaches the limit.
    #expect(fetcher.retryCount == 4)
    let expected = ["upload"] + Array(repeating: ["query", "upload"], count: 4).flatMap { $0 }
    #expect(server.commands("/limit.upload").map(\.command) == expected)
  }

  @Test("A retry block may refuse the retry")
  func retryBlockRefuses() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/veto.location?uploadStatus=503")
    fetcher.uploadData = bigData
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.01
    let suggestions = Recorder<Bool>()
    fetcher.retryBlock = { suggested, _, respond in
      suggestions.append(suggested)
      respond(false)
    }
    let (_, error) = await run(fetcher)
    #expect(statusCode(error) == 503)
    #expect(suggestions.values == [true])
    #expect(server.commands("/veto.upload").map(\.command) == ["upload"])
  }

  @Test("Pause and resume: upload, query, upload, upload-finalize")
  func pauseAndResume() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/pause.location")
    fetcher.uploadData = bigData
    let paused = Recorder<Bool>()
    fetcher.willBeginCommandFetcher = { [weak fetcher] commandFetcher in
      // Pause just before the second chunk goes out.
      if isChunk(commandFetcher, at: 75_000), paused.values.isEmpty {
        paused.append(true)
        fetcher?.pauseFetching()
      }
    }
    async let result = run(fetcher)
    #expect(await eventually { paused.values.count == 1 })
    #expect(fetcher.isPaused)
    #expect(fetcher.isFetching)
    try await Task.sleep(nanoseconds: 100_000_000)
    #expect(server.commands("/pause.upload").count == 1)
    fetcher.resumeFetching()
    let (_, error) = await result
    #expect(error == nil)
    #expect(
      server.commands("/pause.upload") == [
        RecordedCommand(command: "upload", offset: 0, length: 75_000),
        RecordedCommand(command: "query", offset: nil, length: 0),
        RecordedCommand(command: "upload", offset: 75_000, length: 75_000),
        RecordedCommand(command: "upload, finalize", offset: 150_000, length: 49_000),
      ])
    #expect(server.resumableUpload(path: "/pause.upload")?.checksum == TestServer.checksum(bigData))
  }

  @Test("A paused upload let go of is freed, with the chunks it read")
  func pausedUploadLetGoIsFreed() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let chunks = ChunkLifetimes()
    let upload = WeakReference<SessionUploadFetcher>()
    do {
      let fetcher = makeUploadFetcher(server, "/letgo.location")
      upload.object = fetcher
      fetcher.setUploadDataLength(Int64(bigLength), provider: chunks.provider(length: bigLength))
      fetcher.willBeginCommandFetcher = { [weak fetcher] commandFetcher in
        // Pause just before the second chunk goes out: the first was sent, the second was read.
        if isChunk(commandFetcher, at: 75_000) { fetcher?.pauseFetching() }
      }
      fetcher.beginFetch { _, _ in Issue.record("a paused upload never completes") }
      #expect(await eventually { fetcher.isPaused })
    }
    #expect(await eventually { upload.object == nil })
    #expect(await eventually { chunks.freed.sorted() == [0, 75_000] })
    #expect(chunks.read == [0, 75_000])
    #expect(server.commands("/letgo.upload").map(\.command) == ["upload"])
  }

  @Test("A resumed upload let go of keeps itself alive through a retry wait and completes")
  func resumedUploadLetGoCompletes() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let results = Recorder<Bool>()
    let paused = Recorder<Bool>()
    let upload = WeakReference<SessionUploadFetcher>()
    do {
      // The second chunk command (the first after the resume) fails with 503: a retry wait, during
      // which only the upload's own retain keeps it.
      let fetcher = makeUploadFetcher(server, "/resumed.location?uploadStatus=503&uploadStatusChunks=2")
      upload.object = fetcher
      fetcher.uploadData = bigData
      fetcher.isRetryEnabled = true
      fetcher.minRetryInterval = 0.2
      fetcher.willBeginCommandFetcher = { [weak fetcher] commandFetcher in
        if isChunk(commandFetcher, at: 75_000), paused.appendIfEmpty(true) { fetcher?.pauseFetching() }
      }
      fetcher.beginFetch { _, error in results.append(error == nil) }
      #expect(await eventually { fetcher.isPaused })
      fetcher.resumeFetching()
    }
    #expect(await eventually { results.values == [true] })
    #expect(await eventually { upload.object == nil })
    #expect(
      server.commands("/resumed.upload").map(\.command) == [
        "upload", "query", "upload", "query", "upload", "upload, finalize",
      ])
    #expect(server.resumableUpload(path: "/resumed.upload")?.checksum == TestServer.checksum(bigData))
  }

  @Test("Stopping sends cancel to the upload URL and calls the cancellation handler")
  func cancelSendsCancel() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/cancel.location")
    fetcher.uploadData = bigData
    fetcher.stopFetchingTriggersCompletionHandler = true
    fetcher.willBeginCommandFetcher = { [weak fetcher] commandFetcher in
      if isChunk(commandFetcher, at: 75_000) { fetcher?.stopFetching() }
    }
    let cancelResults = Recorder<(Bool, Bool)>()
    fetcher.cancellationHandler = { cancelFetcher, _, error in
      cancelResults.append((cancelFetcher != nil, error == nil))
    }
    let (_, error) = await run(fetcher)
    #expect(error as? SessionFetcherError == .cancelled)
    #expect(await eventually { cancelResults.values.count == 1 })
    #expect(cancelResults.values.first?.0 == true)
    #expect(cancelResults.values.first?.1 == true)
    #expect(server.commands("/cancel.upload").map(\.command) == ["upload", "cancel"])
    #expect(server.resumableUpload(path: "/cancel.upload")?.status == .cancelled)
    #expect(!fetcher.isFetching)
  }

  @Test("Stopping before the upload URL is known sends no cancel and no completion")
  func stopBeforeLocation() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/hang")
    fetcher.uploadData = bigData
    let handled = Recorder<Bool>()
    fetcher.cancellationHandler = { cancelFetcher, _, _ in handled.append(cancelFetcher == nil) }
    let counter = UploadNotificationCounter(fetcher)
    fetcher.beginFetch { _, _ in Issue.record("no completion without the flag") }
    // The start is on the wire (the server never answers it).
    #expect(await eventually { server.requests.count == 1 })
    fetcher.stopFetching()
    #expect(await eventually { handled.values == [true] })
    try await Task.sleep(nanoseconds: 200_000_000)
    #expect(server.requests.count == 1)
    await expectNotificationsBalanced(counter, for: fetcher)
    #expect(counter.startedCommands == ["start"])
    #expect(counter.locationObtained == 0)
  }

  @Test("A new fetcher resumes a paused upload by its location")
  func resumeByLocation() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let first = makeUploadFetcher(server, "/resume.location")
    first.uploadData = bigData
    first.willBeginCommandFetcher = { [weak first] commandFetcher in
      if isChunk(commandFetcher, at: 75_000) { first?.pauseFetching() }
    }
    let firstCounter = UploadNotificationCounter(first)
    first.beginFetch { _, _ in Issue.record("the first fetcher never completes") }
    #expect(await eventually { first.isPaused })
    let location = try #require(first.uploadLocationURL)
    // Paused before its second chunk began: the start and the first chunk, each ended.
    #expect(await eventually { firstCounter.stopped == 2 })
    #expect(firstCounter.startedCommands == ["start", "upload"])

    let second = SessionUploadFetcher(
      location: location, uploadMIMEType: "application/octet-stream", chunkSize: bigChunkSize)
    second.allowLocalhostRequest = true
    second.callbackQueue = DispatchQueue(label: "second")
    second.uploadData = bigData
    let (data, error) = await run(second)
    #expect(error == nil)
    #expect(data.map { String(decoding: $0, as: UTF8.self).contains(TestServer.checksum(bigData)) } == true)
    #expect(
      server.commands("/resume.upload") == [
        RecordedCommand(command: "upload", offset: 0, length: 75_000),
        RecordedCommand(command: "query", offset: nil, length: 0),
        RecordedCommand(command: "upload", offset: 75_000, length: 75_000),
        RecordedCommand(command: "upload, finalize", offset: 150_000, length: 49_000),
      ])
    #expect(server.resumableUpload(path: "/resume.upload")?.checksum == TestServer.checksum(bigData))
    first.stopFetching()
  }

  @Test("Resuming by location an upload that is already final completes with the query")
  func resumeFinishedUpload() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let first = makeUploadFetcher(server, "/done.location")
    first.uploadData = bigData
    _ = await run(first)
    let location = try #require(first.uploadLocationURL)
    let second = SessionUploadFetcher(location: location, uploadMIMEType: "application/octet-stream")
    second.allowLocalhostRequest = true
    second.callbackQueue = DispatchQueue(label: "second")
    second.uploadData = bigData
    let (_, error) = await run(second)
    #expect(error == nil)
    #expect(server.commands("/done.upload").map(\.command).last == "query")
  }

  @Test("async beginFetch returns the final answer's body")
  func asyncBegin() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/async.location")
    fetcher.uploadData = Data("abc".utf8)
    let counter = UploadNotificationCounter(fetcher)
    let data = try await fetcher.beginFetch()
    #expect(String(decoding: data, as: UTF8.self).contains("\"length\":3"))
    await expectNotificationsBalanced(counter, for: fetcher)
    #expect(counter.startedCommands == ["start", "upload, finalize"])
    #expect(counter.locationObtained == 1)
  }
}
