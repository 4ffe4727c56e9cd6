import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// The headers of every command are the original's: the test server refuses a command without
/// them, so every upload test on the wire checks them too; these tests name them.
@Suite("Upload commands' headers")
struct WireHeaderTests {
  @Test func startCarriesTheUserAgentMarker() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/ua.location", headers: ["User-Agent": "App/1"])
    fetcher.uploadData = Data(count: 10)
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(server.requests(path: "/ua.location").first?.header("User-Agent") == "App/1 (GTMSUF/1)")
  }

  @Test func everyCommandNamesTheProtocolAndChunksTheLength() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/h.location?uploadStatus=400&uploadStatusChunks=2")
    fetcher.uploadData = bigData
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    let commands = server.requests(path: "/h.upload")
    #expect(
      commands.compactMap { $0.header("X-Goog-Upload-Command") } == [
        "upload", "upload", "query", "upload", "upload, finalize",
      ])
    for command in commands {
      #expect(command.header("X-Goog-Upload-Protocol") == "resumable")
      let isChunk = command.header("X-Goog-Upload-Command") != "query"
      #expect(command.header("X-Goog-Upload-Content-Length") == (isChunk ? "199000" : nil))
    }
  }

  @Test func cancelNamesTheProtocol() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/c.location")
    fetcher.uploadData = bigData
    let cancelled = Recorder<Int>()
    fetcher.cancellationHandler = { cancelFetcher, _, _ in cancelled.append(cancelFetcher?.statusCode ?? 0) }
    fetcher.willBeginCommandFetcher = { command in
      if command.request?.value(forHTTPHeaderField: "X-Goog-Upload-Command") == "upload" {
        fetcher.stopFetching()
      }
    }
    fetcher.beginFetch { _, _ in }
    #expect(await eventually { cancelled.count == 1 })
    #expect(cancelled.values == [200])
    #expect(server.resumableUpload(path: "/c.upload")?.status == .cancelled)
  }

  @Test func theServerRefusesACommandWithoutTheProtocolsName() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/r.location")
    fetcher.uploadData = Data(count: 10)
    fetcher.willBeginCommandFetcher = { command in
      command.setRequestValue(nil, forHTTPHeaderField: "X-Goog-Upload-Protocol")
    }
    let (_, error) = await run(fetcher)
    // The start without it is refused with 503 (retrying is off): nothing was created.
    #expect(statusCode(error) == 503)
    #expect(server.resumableUpload(path: "/r.upload") == nil)
  }

  @Test func theServerRefusesAChunkWithoutTheProtocolsName() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = makeUploadFetcher(server, "/s.location")
    fetcher.uploadData = Data(count: 10)
    fetcher.willBeginCommandFetcher = { command in
      if command.request?.value(forHTTPHeaderField: "X-Goog-Upload-Command") != "start" {
        command.setRequestValue(nil, forHTTPHeaderField: "X-Goog-Upload-Protocol")
      }
    }
    let (_, error) = await run(fetcher)
    #expect(statusCode(error) == 400)
    #expect(server.resumableUpload(path: "/s.upload")?.body.isEmpty == true)
  }

  /// The upload holds its service: released by the caller before the upload ends, the service
  /// lives on until the upload fetcher is released, and the upload completes.
  @Test func anUploadWhoseServiceIsReleasedCompletes() async throws {
    let server = try TestServer()
    defer { server.stop() }
    var service: FetcherService? = FetcherService()
    weak let released = service
    var upload: SessionUploadFetcher? = makeUploadFetcher(server, "/rs.location", service: service)
    upload?.uploadData = bigData
    service = nil
    #expect(released != nil)
    let (_, error) = await run(try #require(upload))
    #expect(error == nil)
    #expect(server.resumableUpload(path: "/rs.upload")?.checksum == TestServer.checksum(bigData))
    upload = nil
    #expect(await eventually { released == nil })
  }
}
