import Foundation

/// `storage`: the fetcher layer of a small cloud-storage client, as a GTMSessionFetcher SDK has it
/// (a service, a token authorizer, a resumable upload, a download paused and resumed), ported to
/// SessionFetcher and run against an in-process server on 127.0.0.1.
@main
struct Storage {
  static func main() async {
    do {
      try await StorageTour.run()
    } catch {
      FileHandle.standardError.write(Data("storage: error: \(error)\n".utf8))
      exit(1)
    }
  }
}

/// The tour: each step prints one line; a step that does not do what it should throws.
enum StorageTour {
  static func run() async throws {
    let cloud = try StorageServer()
    defer { cloud.stop() }
    cloud.publish("beach.jpg")
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "SessionFetcherStorage-\(ProcessInfo.processInfo.processIdentifier)")
    try? FileManager.default.removeItem(at: folder)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }

    let authorizer = TokenAuthorizer(tokens: TokenSource(first: "token-1", refreshed: cloud.validToken))
    let client = StorageClient(baseURL: cloud.baseURL, authorizer: authorizer)

    // 1. Upload 1.1 MB from a file in 256 KiB chunks, paused after the first chunk and resumed;
    //    the server fails the third chunk once, and the upload asks it where to go on.
    let original = Data((0..<1_100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
    let source = folder.appendingPathComponent("beach.jpg")
    try original.write(to: source)
    let upload = try await client.upload(
      fileURL: source, as: "beach.jpg", mimeType: "image/jpeg", failingChunk: 3,
      pauseAfterFirstChunk: true)
    try check(upload.size == original.count, "the server holds \(upload.size) of \(original.count) bytes")
    try check(cloud.uploadedBody(of: "beach.jpg") == original, "the uploaded bytes differ")
    try check(upload.paused, "the upload was never paused")
    try check(upload.queries >= 1, "the upload never asked the server where to go on")
    say(
      "upload: \(upload.size) bytes in \(upload.chunkCommands) chunk commands, paused once, "
        + "resumed where the server stood after a pause and a 503 (\(upload.queries) queries)")

    // 2. Metadata: the first token is stale, the server answers 401, the authorizer refreshes
    //    (`primeForRefresh`) and the request is sent once more.
    let metadata = try await client.metadata(of: "beach.jpg")
    try check(metadata.size == original.count, "metadata says \(metadata.size) bytes")
    try check(authorizer.refreshCount == 1, "the token was refreshed \(authorizer.refreshCount) times")
    say("metadata: \(metadata.name), \(metadata.size) bytes, \(metadata.contentType) (token refreshed once)")

    // 3. A status error read the way the SDK read GTM's: `NSError` domain and code.
    do {
      _ = try await client.metadata(of: "missing.jpg")
      throw TourFailure("a missing object was found")
    } catch StorageError.notFound(let name) {
      say("missing object: StorageError.notFound(\(name)), from the status error's NSError code 404")
    }

    // 4. Download to a file, paused half-way and resumed with `Range` from the resume token.
    let destination = folder.appendingPathComponent("downloads/beach.jpg")
    let download = ObjectDownload(client: client, name: "beach.jpg", destination: destination)
    try await download.start(pausingAt: original.count / 2)
    try check(download.isPaused, "the download finished before its pause")
    let partBytes = download.bytesBeforePause
    try await download.resume()
    try check(try Data(contentsOf: destination) == original, "the downloaded file differs")
    try check(
      cloud.lastMediaRange == "bytes=\(partBytes)-",
      "the resume asked for \(cloud.lastMediaRange ?? "nothing")")
    say("download: paused at \(partBytes) bytes, resumed with Range: bytes=\(partBytes)-, file whole")

    // 5. Signed out: the authorizer's own error reaches the caller as itself.
    authorizer.signOut()
    let sentBefore = cloud.requestCount
    do {
      _ = try await client.metadata(of: "beach.jpg")
      throw TourFailure("a signed-out client fetched")
    } catch StorageError.unauthenticated {
      try check(cloud.requestCount == sentBefore, "a signed-out request reached the server")
      say("signed out: StorageError.unauthenticated, nothing sent")
    }
    say("storage: every step did what it should")
  }

  static func say(_ line: String) { print(line) }

  static func check(_ condition: Bool, _ failure: @autoclosure () -> String) throws {
    if !condition { throw TourFailure(failure()) }
  }
}

/// A step of the tour that did not do what it should.
struct TourFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
