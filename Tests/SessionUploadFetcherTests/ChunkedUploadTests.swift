import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// The original's chunked-upload tests (GTMSessionFetcherChunkedUploadTest) on the wire.
@Suite("Chunked uploads")
struct ChunkedUploadTests {
  @Test("Big data in 75000-byte chunks: upload, upload, upload-finalize; progress spans the upload")
  func bigDataChunkedUpload() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/big.location")
    fetcher.uploadData = bigData
    let progress = Recorder<(Int64, Int64, Int64)>()
    fetcher.sendProgressBlock = { sent, total, expected in progress.append((sent, total, expected)) }
    let locations = Recorder<URL?>()
    let observer = NotificationCenter.default.addObserver(
      forName: .sessionUploadFetcherLocationObtained, object: fetcher, queue: nil
    ) { note in locations.append((note.object as? SessionUploadFetcher)?.uploadLocationURL) }
    defer { NotificationCenter.default.removeObserver(observer) }

    let (data, error) = await run(fetcher)
    #expect(error == nil)
    #expect(server.commands("/big.upload") == bigUploadCommands)
    let upload = try #require(server.resumableUpload(path: "/big.upload"))
    #expect(upload.status == .final)
    #expect(upload.checksum == TestServer.checksum(bigData))
    #expect(upload.declaredLength == Int64(bigLength))
    #expect(String(decoding: data ?? Data(), as: UTF8.self).contains(TestServer.checksum(bigData)))
    #expect(fetcher.uploadLocationURL == server.url("/big.upload"))
    #expect(fetcher.statusCode == 200)
    #expect(!fetcher.isFetching)
    #expect(fetcher.uploadedLength == Int64(bigLength))
    #expect(locations.values == [server.url("/big.upload")])

    let start = try #require(server.requests(path: "/big.location").first)
    #expect(start.method == "POST")
    #expect(start.header("X-Goog-Upload-Protocol") == "resumable")
    #expect(start.header("X-Goog-Upload-Command") == "start")
    #expect(start.header("X-Goog-Upload-Content-Type") == "application/octet-stream")
    #expect(start.header("X-Goog-Upload-Content-Length") == "199000")
    #expect(server.requests(path: "/big.upload").allSatisfy { $0.method == "PUT" })

    let totals = progress.values.map(\.1)
    #expect(totals.last == Int64(bigLength))
    #expect(totals == totals.sorted())
    #expect(totals.contains { $0 > bigChunkSize })
    #expect(progress.values.allSatisfy { $0.2 == Int64(bigLength) })
  }

  @Test("Progress queued behind a busy callback queue arrives before the completion, up to the whole length")
  func progressQueuedBeforeTheEndIsDelivered() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/late.location")
    let callbacks = DispatchQueue(label: "busy upload callbacks")
    fetcher.callbackQueue = callbacks
    fetcher.uploadData = bigData
    let events = Recorder<String>()
    fetcher.sendProgressBlock = { _, total, _ in events.append("progress \(total)") }
    // The callback queue is held until the upload has finished on the wire, so every progress
    // report is still queued when the upload ends.
    let counter = UploadNotificationCounter(fetcher)
    callbacks.suspend()
    let done = Recorder<Bool>()
    fetcher.beginFetch { _, error in
      events.append(error == nil ? "completion" : "error \(String(describing: error))")
      done.append(true)
    }
    let finished = await eventually { !fetcher.isFetching }
    callbacks.resume()
    #expect(finished)
    #expect(await eventually { !done.values.isEmpty })
    let values = events.values
    #expect(values.last == "completion")
    #expect(values.dropLast().last == "progress \(bigLength)")
    #expect(values.filter { $0.hasPrefix("progress") }.count >= 3)
    await expectNotificationsBalanced(counter, for: fetcher)
    #expect(counter.startedCommands == ["start", "upload", "upload", "upload, finalize"])
  }

  @Test("Big file URL in chunks: each chunk a slice read at its offset")
  func bigFileURLChunkedUpload() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let file = try temporaryFile(bigData)
    defer { try? FileManager.default.removeItem(at: file) }
    let fetcher = makeUploadFetcher(server, "/file.location")
    fetcher.uploadFileURL = file
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(server.commands("/file.upload") == bigUploadCommands)
    #expect(server.resumableUpload(path: "/file.upload")?.checksum == TestServer.checksum(bigData))
  }

  @Test("Big file URL in one chunk (standard chunk size): one upload-finalize of the whole file")
  func bigFileURLSingleChunk() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let file = try temporaryFile(bigData)
    defer { try? FileManager.default.removeItem(at: file) }
    let fetcher = makeUploadFetcher(
      server, "/single.location", chunkSize: SessionUploadFetcher.standardChunkSize)
    fetcher.uploadFileURL = file
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(
      server.commands("/single.upload") == [
        RecordedCommand(command: "upload, finalize", offset: 0, length: bigLength)
      ])
    #expect(server.resumableUpload(path: "/single.upload")?.checksum == TestServer.checksum(bigData))
  }

  @Test("Server granularity 66666: offsets 0, 66666, 133332; lengths 66666, 66666, 65668")
  func granularity() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let file = try temporaryFile(bigData)
    defer { try? FileManager.default.removeItem(at: file) }
    let fetcher = makeUploadFetcher(
      server, "/granular.location", headers: ["GTM-Upload-Granularity-Request": "66666"])
    fetcher.uploadFileURL = file
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(
      server.commands("/granular.upload") == [
        RecordedCommand(command: "upload", offset: 0, length: 66_666),
        RecordedCommand(command: "upload", offset: 66_666, length: 66_666),
        RecordedCommand(command: "upload, finalize", offset: 133_332, length: 65_668),
      ])
    #expect(server.resumableUpload(path: "/granular.upload")?.checksum == TestServer.checksum(bigData))
  }

  @Test(
    "Small data (13 B) from data, a provider, or a provider of unknown length: one upload-finalize",
    arguments: ["data", "provider", "unknown"])
  func smallData(variant: String) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let small = Data("Hello, world!".utf8)
    let fetcher = makeUploadFetcher(server, "/small.location")
    switch variant {
    case "data":
      fetcher.uploadData = small
    case "provider":
      fetcher.setUploadDataLength(Int64(small.count)) { offset, length, respond in
        respond(small.subdata(in: Int(offset)..<Int(offset + length)), nil)
      }
    default:
      fetcher.setUploadDataLength(SessionUploadFetcher.unknownLength) { offset, length, respond in
        let end = min(small.count, Int(offset + length))
        respond(small.subdata(in: min(Int(offset), end)..<end), nil)
      }
    }
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(
      server.commands("/small.upload") == [
        RecordedCommand(command: "upload, finalize", offset: 0, length: 13)
      ])
    let upload = server.resumableUpload(path: "/small.upload")
    #expect(upload?.body == small)
    #expect(upload?.declaredLength == (variant == "unknown" ? -1 : 13))
  }

  @Test("Big provider of known or unknown length: the chunks of the original", arguments: [true, false])
  func bigProvider(knownLength: Bool) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/provider.location")
    fetcher.setUploadDataLength(knownLength ? Int64(bigLength) : SessionUploadFetcher.unknownLength) {
      offset, length, respond in
      let end = min(bigLength, Int(offset + length))
      DispatchQueue.global().async { respond(bigData.subdata(in: min(Int(offset), end)..<end), nil) }
    }
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(server.commands("/provider.upload") == bigUploadCommands)
    #expect(server.resumableUpload(path: "/provider.upload")?.checksum == TestServer.checksum(bigData))
    #expect(fetcher.uploadedLength == Int64(bigLength))
  }

  @Test("Unknown length ending on a chunk boundary: a last finalize without bytes")
  func unknownLengthOnBoundary() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let data = TestServer.patternBytes(count: 150_000)
    let fetcher = makeUploadFetcher(server, "/boundary.location")
    fetcher.setUploadDataLength(SessionUploadFetcher.unknownLength) { offset, length, respond in
      let end = min(data.count, Int(offset + length))
      respond(data.subdata(in: min(Int(offset), end)..<end), nil)
    }
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(
      server.commands("/boundary.upload") == [
        RecordedCommand(command: "upload", offset: 0, length: 75_000),
        RecordedCommand(command: "upload", offset: 75_000, length: 75_000),
        RecordedCommand(command: "finalize", offset: 150_000, length: 0),
      ])
    #expect(server.resumableUpload(path: "/boundary.upload")?.checksum == TestServer.checksum(data))
    #expect(fetcher.uploadedLength == 150_000)
  }

  @Test("A provider's error is passed through")
  func providerError() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/provider-error.location")
    let providerError = NSError(domain: "test", code: -123)
    fetcher.setUploadDataLength(13) { _, _, respond in respond(nil, providerError) }
    let (_, error) = await run(fetcher)
    #expect((error as? NSError)?.code == -123)
    #expect((error as? NSError)?.domain == "test")
    #expect(server.commands("/provider-error.upload").isEmpty)
  }

  @Test("An empty file: one finalize without bytes")
  func emptyFile() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let file = try temporaryFile(Data())
    defer { try? FileManager.default.removeItem(at: file) }
    let fetcher = makeUploadFetcher(server, "/empty.location")
    fetcher.uploadFileURL = file
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(server.commands("/empty.upload") == [RecordedCommand(command: "finalize", offset: 0, length: 0)])
    #expect(server.resumableUpload(path: "/empty.upload")?.status == .final)
  }

  @Test("A file that does not exist fails before any traffic")
  func nonexistentFile() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/missing.location")
    fetcher.uploadFileURL = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)")
    let (_, error) = await run(fetcher)
    guard case .bodyUnavailable? = error as? SessionFetcherError else {
      Issue.record("expected bodyUnavailable, got \(String(describing: error))")
      return
    }
    #expect(server.requests.isEmpty)
  }

  @Test("Through a service: the start is authorized, commands to the upload URL are not")
  func noAuthorizationOnUploadURL() async throws {
    struct Bearer: FetcherAuthorizer {
      func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
        var request = request
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        return request
      }
    }
    let server = try TestServer()
    defer { server.stop() }
    let service = FetcherService()
    service.authorizer = Bearer()
    service.allowLocalhostRequest = true
    service.allowedInsecureSchemes = ["http"]
    let fetcher = makeUploadFetcher(server, "/auth.location", service: service)
    fetcher.uploadData = bigData
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(server.requests(path: "/auth.location").first?.header("Authorization") == "Bearer secret")
    #expect(server.requests(path: "/auth.upload").count == 3)
    #expect(server.requests(path: "/auth.upload").allSatisfy { $0.header("Authorization") == nil })
  }
}
