import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import SessionUploadFetcher
import Testing

/// How the upload cuts its source into chunks, on the scripted engine: the server's granularity,
/// small and empty sources, providers of known and unknown length, and sources that fail.
@Suite("Upload chunks on the scripted engine")
struct ScriptedUploadChunkTests {
  /// An engine whose start answers the upload URL (with `granularity`), each chunk but the last
  /// answers `active` with the bytes held after it, and the last answers `final`.
  static func engine(chunkEnds: [Int], granularity: Int? = nil) -> ScriptedEngine {
    let engine = ScriptedEngine()
    var start = UploadScript.start
    if let granularity, case .head(let status, var headers) = start.steps[0] {
      headers["X-Goog-Upload-Chunk-Granularity"] = String(granularity)
      start.steps[0] = .head(status: status, headers: headers)
    }
    engine.respond(to: UploadScript.startPath, with: start)
    for end in chunkEnds.dropLast() {
      engine.respond(to: UploadScript.uploadPath, with: UploadScript.active(end))
    }
    engine.respond(to: UploadScript.uploadPath, with: UploadScript.final(chunkEnds.last ?? 0))
    return engine
  }

  /// What the server would hold: each chunk's bytes at its offset, in order.
  static func held(_ engine: ScriptedEngine) -> Data {
    var held = Data()
    for request in engine.requests(matching: UploadScript.uploadPath) {
      guard let offset = request.header("X-Goog-Upload-Offset").flatMap({ Int($0) }) else { continue }
      held = held.prefix(offset) + request.body
    }
    return held
  }

  @Test("Server granularity 66666: offsets 0, 66666, 133332; lengths 66666, 66666, 65668")
  func granularity() async throws {
    let engine = Self.engine(chunkEnds: [66_666, 133_332, bigLength], granularity: 66_666)
    let file = try temporaryFile(bigData)
    defer { try? FileManager.default.removeItem(at: file) }
    let fetcher = UploadScript.upload(engine, data: nil)
    fetcher.uploadFileURL = file
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(
      engine.uploadCommands == [
        RecordedCommand(command: "upload", offset: 0, length: 66_666),
        RecordedCommand(command: "upload", offset: 66_666, length: 66_666),
        RecordedCommand(command: "upload, finalize", offset: 133_332, length: 65_668),
      ])
    #expect(Self.held(engine) == bigData)
  }

  @Test(
    "Small data (13 B) from data, a provider, or a provider of unknown length: one upload-finalize",
    arguments: ["data", "provider", "unknown"])
  func smallData(variant: String) async throws {
    let small = Data("Hello, world!".utf8)
    let engine = Self.engine(chunkEnds: [13])
    let fetcher = UploadScript.upload(engine, data: nil)
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
    #expect(engine.uploadCommands == [RecordedCommand(command: "upload, finalize", offset: 0, length: 13)])
    #expect(Self.held(engine) == small)
    // The start declares the length when it is known, -1 when not.
    #expect(
      engine.requests.first?.header("X-Goog-Upload-Content-Length") == (variant == "unknown" ? "-1" : "13"))
  }

  @Test("Big provider of known or unknown length: the chunks of the original", arguments: [true, false])
  func bigProvider(knownLength: Bool) async throws {
    let engine = Self.engine(chunkEnds: [75_000, 150_000, bigLength])
    let fetcher = UploadScript.upload(engine, data: nil)
    fetcher.setUploadDataLength(knownLength ? Int64(bigLength) : SessionUploadFetcher.unknownLength) {
      offset, length, respond in
      let end = min(bigLength, Int(offset + length))
      DispatchQueue.global().async { respond(bigData.subdata(in: min(Int(offset), end)..<end), nil) }
    }
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(engine.uploadCommands == bigUploadCommands)
    #expect(Self.held(engine) == bigData)
    #expect(fetcher.uploadedLength == Int64(bigLength))
  }

  @Test("Unknown length ending on a chunk boundary: a last finalize without bytes")
  func unknownLengthOnBoundary() async throws {
    let data = bigData.prefix(150_000)
    let engine = Self.engine(chunkEnds: [75_000, 150_000, 150_000])
    let fetcher = UploadScript.upload(engine, data: nil)
    fetcher.setUploadDataLength(SessionUploadFetcher.unknownLength) { offset, length, respond in
      let end = min(data.count, Int(offset + length))
      respond(data.subdata(in: min(Int(offset), end)..<end), nil)
    }
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(
      engine.uploadCommands == [
        RecordedCommand(command: "upload", offset: 0, length: 75_000),
        RecordedCommand(command: "upload", offset: 75_000, length: 75_000),
        RecordedCommand(command: "finalize", offset: 150_000, length: 0),
      ])
    #expect(Self.held(engine) == data)
    #expect(fetcher.uploadedLength == 150_000)
  }

  @Test("A provider's error is passed through")
  func providerError() async throws {
    let engine = Self.engine(chunkEnds: [13])
    let fetcher = UploadScript.upload(engine, data: nil)
    let providerError = NSError(domain: "test", code: -123)
    fetcher.setUploadDataLength(13) { _, _, respond in respond(nil, providerError) }
    let (_, error) = await run(fetcher)
    #expect((error as? NSError)?.code == -123)
    #expect((error as? NSError)?.domain == "test")
    #expect(engine.uploadCommands.isEmpty)
  }

  @Test("An empty file: one finalize without bytes")
  func emptyFile() async throws {
    let engine = Self.engine(chunkEnds: [0])
    let file = try temporaryFile(Data())
    defer { try? FileManager.default.removeItem(at: file) }
    let fetcher = UploadScript.upload(engine, data: nil)
    fetcher.uploadFileURL = file
    let (_, error) = await run(fetcher)
    #expect(error == nil)
    #expect(engine.uploadCommands == [RecordedCommand(command: "finalize", offset: 0, length: 0)])
  }

  @Test("A file that does not exist fails before any traffic")
  func nonexistentFile() async throws {
    let engine = Self.engine(chunkEnds: [0])
    let fetcher = UploadScript.upload(engine, data: nil)
    fetcher.uploadFileURL = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)")
    let (_, error) = await run(fetcher)
    guard case .bodyUnavailable? = error as? SessionFetcherError else {
      Issue.record("expected bodyUnavailable, got \(String(describing: error))")
      return
    }
    #expect(engine.requests.isEmpty)
  }
}
