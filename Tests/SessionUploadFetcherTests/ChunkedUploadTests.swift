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
