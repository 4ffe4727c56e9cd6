import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// Resuming by location, what a paused upload let go of keeps alive, and the test server's refusal
/// of a plain start, on the wire. What the upload decides on the server's answers (queries, errors,
/// retries, pause, cancel) is tested on the scripted engine (`Scripted/`).
@Suite("Upload resumption on the wire")
struct ResumeAndErrorTests {
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
