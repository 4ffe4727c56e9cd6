import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Resume tokens are data from outside the process: one naming anything but the fetcher's own
/// part file beside its destination is refused, and nothing it names is moved, written or deleted.
@Suite("Resume tokens")
struct ResumeTokenTests {
  /// A real token of a failed download of `path` (150,000 of 300,000 bytes kept) to
  /// `folder/file.bin`, as a JSON object to forge from.
  static func realToken(_ server: TestServer, _ path: String, folder: URL) async throws -> [String: Any] {
    DownloadResumeTests.rangeRoute(server, path, total: 300_000, truncations: 1) { "v1" }
    let (fetcher, _) = DownloadResumeTests.download(server, path, to: folder, resumable: true)
    #expect(await fetcher.fetchResult().error != nil)
    let token = try #require(fetcher.downloadResumeData)
    return try #require(try JSONSerialization.jsonObject(with: token) as? [String: Any])
  }

  static func data(_ object: [String: Any]) throws -> Data {
    try JSONSerialization.data(withJSONObject: object)
  }

  /// Routes answering `path` with 200 (the whole body, Range ignored) or 206 (the range asked for).
  static func answerRoute(_ server: TestServer, _ path: String, status: Int) {
    server.route(path) { request in
      let headers = [("ETag", "\"v1\""), ("Accept-Ranges", "bytes")]
      guard status == 206, let range = request.header("Range"),
        let start = Int(range.dropFirst("bytes=".count).dropLast())
      else {
        return TestResponse(status: 200, headers: headers, body: TestServer.patternBytes(count: 300_000))
      }
      return TestResponse(
        status: 206, headers: headers + [("Content-Range", "bytes \(start)-299999/300000")],
        body: TestServer.patternBytes(count: 300_000 - start, offset: start))
    }
  }

  /// Checks that `forged` (a token of `/r`) is refused both ways: `init(resumeData:)` gives nil,
  /// and a fetcher of `/r` given it fails before any traffic, where the server would have
  /// answered `status` (200: the whole body; 206: the range asked for).
  static func expectRefused(_ forged: Data, server: TestServer, status: Int) async throws {
    #expect(SessionFetcher(resumeData: forged) == nil)
    answerRoute(server, "/r", status: status)
    let sent = server.requests(path: "/r").count
    let fetcher = server.fetcher("/r")
    fetcher.resumeData = forged
    let result = await fetcher.fetchResult()
    guard case .invalidConfiguration(let reason)? = result.error as? SessionFetcherError else {
      Issue.record("expected a refused token, got \(String(describing: result.error))")
      return
    }
    #expect(reason.contains("resume token"))
    #expect(server.requests(path: "/r").count == sent)
  }

  @Test("A token naming a folder outside is refused, and the folder survives", arguments: [200, 206])
  func folderOutside(status: Int) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    let outside = try makeTemporaryFolder()
    defer {
      try? FileManager.default.removeItem(at: folder)
      try? FileManager.default.removeItem(at: outside)
    }
    var token = try await Self.realToken(server, "/r", folder: folder)
    let canary = outside.appendingPathComponent("canary.txt")
    try Data("alive".utf8).write(to: canary)
    token["partFileURL"] = outside.absoluteString
    try await Self.expectRefused(try Self.data(token), server: server, status: status)
    #expect(try Data(contentsOf: canary) == Data("alive".utf8))
    // Even named like a part file, a folder is not one.
    let disguised = folder.appendingPathComponent(".file.bin.\(UUID().uuidString).part")
    try FileManager.default.createDirectory(at: disguised, withIntermediateDirectories: false)
    try Data("alive".utf8).write(to: disguised.appendingPathComponent("canary.txt"))
    token["partFileURL"] = disguised.absoluteString
    try await Self.expectRefused(try Self.data(token), server: server, status: status)
    #expect(try Data(contentsOf: disguised.appendingPathComponent("canary.txt")) == Data("alive".utf8))
    #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("file.bin").path))
  }

  @Test(
    "A token naming a file outside is refused, and the file is neither moved nor changed",
    arguments: [200, 206])
  func fileOutside(status: Int) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    let outside = try makeTemporaryFolder()
    defer {
      try? FileManager.default.removeItem(at: folder)
      try? FileManager.default.removeItem(at: outside)
    }
    var token = try await Self.realToken(server, "/r", folder: folder)
    let secret = outside.appendingPathComponent("secret.txt")
    let secretBytes = TestServer.patternBytes(count: 200_000)
    try secretBytes.write(to: secret)
    token["partFileURL"] = secret.absoluteString
    try await Self.expectRefused(try Self.data(token), server: server, status: status)
    #expect(try Data(contentsOf: secret) == secretBytes)
    #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("file.bin").path))
  }

  @Test("A token whose paths go through .. is refused", arguments: [200, 206])
  func dotDotTraversal(status: Int) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    let outside = try makeTemporaryFolder()
    defer {
      try? FileManager.default.removeItem(at: folder)
      try? FileManager.default.removeItem(at: outside)
    }
    var token = try await Self.realToken(server, "/r", folder: folder)
    // A file named like a part file, in another folder, reached from the destination's.
    let name = ".file.bin.\(UUID().uuidString).part"
    let victim = outside.appendingPathComponent(name)
    try Data("victim".utf8).write(to: victim)
    let traversal = folder.path + "/../" + outside.lastPathComponent + "/" + name
    token["partFileURL"] = URL(fileURLWithPath: traversal).absoluteString
    try await Self.expectRefused(try Self.data(token), server: server, status: status)
    // The destination's folder given through .. as well: the folders are then the same, lexically.
    token["destination"] =
      URL(fileURLWithPath: folder.path + "/../" + outside.lastPathComponent + "/file.bin")
      .absoluteString
    token["partFileURL"] = victim.absoluteString
    try await Self.expectRefused(try Self.data(token), server: server, status: status)
    #expect(try Data(contentsOf: victim) == Data("victim".utf8))
    #expect(!FileManager.default.fileExists(atPath: outside.appendingPathComponent("file.bin").path))
  }

  @Test(
    "A part-file name that is a symlink or a hard link to a file outside is refused", arguments: [200, 206])
  func linkInsideFolder(status: Int) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    let outside = try makeTemporaryFolder()
    defer {
      try? FileManager.default.removeItem(at: folder)
      try? FileManager.default.removeItem(at: outside)
    }
    var token = try await Self.realToken(server, "/r", folder: folder)
    let target = outside.appendingPathComponent("target.txt")
    let targetBytes = TestServer.patternBytes(count: 200_000)
    try targetBytes.write(to: target)
    let symlink = folder.appendingPathComponent(".file.bin.\(UUID().uuidString).part")
    try FileManager.default.createSymbolicLink(at: symlink, withDestinationURL: target)
    token["partFileURL"] = symlink.absoluteString
    try await Self.expectRefused(try Self.data(token), server: server, status: status)
    #expect(try Data(contentsOf: target) == targetBytes)
    #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: symlink.path)) == target.path)

    let hardLink = folder.appendingPathComponent(".file.bin.\(UUID().uuidString).part")
    try FileManager.default.linkItem(at: target, to: hardLink)
    token["partFileURL"] = hardLink.absoluteString
    try await Self.expectRefused(try Self.data(token), server: server, status: status)
    #expect(try Data(contentsOf: target) == targetBytes)
    #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("file.bin").path))
  }

  @Test("Data that is not a token, or a token of an unknown version, is refused")
  func corruptTokens() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    var token = try await Self.realToken(server, "/r", folder: folder)
    let kept = DownloadTests.contents(folder)
    try await Self.expectRefused(Data("not a token".utf8), server: server, status: 200)
    try await Self.expectRefused(try Self.data(token).prefix(40), server: server, status: 200)
    token["version"] = 99
    try await Self.expectRefused(try Self.data(token), server: server, status: 200)
    token["version"] = 2
    token["method"] = "POST"
    try await Self.expectRefused(try Self.data(token), server: server, status: 200)
    // Nothing partial left, and the part file of the real token is as it was.
    #expect(DownloadTests.contents(folder) == kept)
  }

  @Test("A token of another URL fails the fetch before any traffic and leaves its part file alone")
  func tokenOfAnotherURL() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let token = try Self.data(try await Self.realToken(server, "/r", folder: folder))
    let kept = DownloadTests.contents(folder)
    Self.answerRoute(server, "/other", status: 206)
    let fetcher = server.fetcher("/other")
    fetcher.resumeData = token
    let result = await fetcher.fetchResult()
    guard case .invalidConfiguration(let reason)? = result.error as? SessionFetcherError else {
      Issue.record("expected a refused token, got \(String(describing: result.error))")
      return
    }
    #expect(reason.contains("/r"))
    #expect(server.requests(path: "/other").isEmpty)
    #expect(DownloadTests.contents(folder) == kept)
  }

  @Test("A version 1 token (no request fields) still continues its download")
  func versionOneToken() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    var token = try await Self.realToken(server, "/r", folder: folder)
    token["version"] = 1
    for key in ["method", "headers", "requestURL"] { token[key] = nil }
    let resumed = try DownloadResumeTests.resuming(try Self.data(token))
    let result = await resumed.fetchResult()
    #expect(result.error == nil)
    #expect(server.requests(path: "/r").last?.header("Range") == "bytes=150000-")
    #expect(try DownloadResumeTests.holdsPattern(folder.appendingPathComponent("file.bin"), count: 300_000))
  }

  @Test("A token keeps the request's method and headers, never its credentials")
  func tokenKeepsHeadersNotSecrets() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    DownloadResumeTests.rangeRoute(server, "/h", total: 300_000, truncations: 1) { "v1" }
    let (first, destination) = DownloadResumeTests.download(server, "/h", to: folder, resumable: true)
    var request = try #require(first.request)
    let secrets = [
      "Authorization": "Bearer s3cret-bearer", "Proxy-Authorization": "Basic s3cret-proxy",
      "Cookie": "sid=s3cret-cookie", "X-Api-Key": "s3cret-key", "X-Upload-Token": "s3cret-token",
    ]
    for (name, value) in secrets { request.setValue(value, forHTTPHeaderField: name) }
    request.setValue("kept", forHTTPHeaderField: "X-Custom")
    first.request = request
    #expect(await first.fetchResult().error != nil)
    let token = try #require(first.downloadResumeData)
    let text = String(decoding: token, as: UTF8.self)
    #expect(!text.contains("s3cret"))
    let resumed = try DownloadResumeTests.resuming(token)
    #expect(resumed.request?.httpMethod == "GET")
    #expect(resumed.request?.value(forHTTPHeaderField: "X-Custom") == "kept")
    #expect(resumed.request?.value(forHTTPHeaderField: "Authorization") == nil)
    let result = await resumed.fetchResult()
    #expect(result.error == nil)
    let last = try #require(server.requests(path: "/h").last)
    #expect(last.method == "GET")
    #expect(last.header("X-Custom") == "kept")
    #expect(last.header("Range") == "bytes=150000-")
    for name in secrets.keys { #expect(last.header(name) == nil) }
    #expect(try DownloadResumeTests.holdsPattern(destination, count: 300_000))
  }

  @Test(
    "Credential headers are recognized by name",
    arguments: [
      ("Authorization", true), ("proxy-authorization", true), ("Cookie", true), ("X-Api-Key", true),
      ("X-Goog-Api-Key", true), ("X-Session-Id", true), ("X-Upload-Token", true), ("X_Client_Secret", true),
      ("X-Auth", true), ("Accept", false), ("X-Custom", false), ("X-Keyboard", false),
      ("If-None-Match", false),
      ("Range", true), ("User-Agent", true),
    ])
  func credentialHeaderNames(name: String, isCredential: Bool) {
    #expect(ResumeToken.isCredentialHeader(name) == isCredential)
  }

  @Test(
    "Part-file names are the library's own",
    arguments: [
      (".file.bin.\(UUID().uuidString).part", true), (".file.bin.not-a-uuid.part", false),
      ("file.bin.\(UUID().uuidString).part", false), (".other.bin.\(UUID().uuidString).part", false),
      ("..", false), (".file.bin..part", false),
    ])
  func partFileNames(name: String, isPartFile: Bool) {
    let destination = URL(fileURLWithPath: "/tmp/x/file.bin")
    #expect(ResumeToken.isPartFileName(name, for: destination) == isPartFile)
  }
}
