import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Resume tokens on the scripted engine: they are data from outside the process, and one naming
/// anything but the fetcher's own part file beside its destination is refused before any request,
/// with nothing it names moved, written or deleted. A token that continues a large download over
/// a real connection is in `DownloadResumeTests`; the rules for header and part-file names are
/// table tests in `ResumeTokenTests`.
@Suite("Resume tokens (scripted)")
struct ScriptedResumeTokenTests {
  typealias Resume = ScriptedResumeTests
  typealias Rules = ScriptedResumeRulesTests

  /// A resumable fetcher of `path` downloading to `file.bin` in `folder`.
  static func download(
    _ path: String, on engine: ScriptedEngine, to folder: URL
  ) throws -> (SessionFetcher, URL, URL) {
    let destination = folder.appendingPathComponent("file.bin")
    let fetcher = engine.fetcher(path)
    fetcher.destinationFileURL = destination
    fetcher.keepsPartialDownloadForResume = true
    return (fetcher, destination, folder)
  }

  /// A real token of a download of `path` to `folder/file.bin` that lost its connection after
  /// 400 of 1000 bytes, as a JSON object to forge from; a fetcher given a token later is answered
  /// `status` (200: the whole body; 206: the rest from byte 400).
  static func realToken(
    _ engine: ScriptedEngine, _ path: String, folder: URL, status: Int = 200
  ) async throws -> [String: Any] {
    engine.respond(
      to: path, with: Rules.lost,
      status == 206 ? Resume.rest : .response(headers: Resume.validators, body: Resume.whole))
    let (fetcher, _, _) = try download(path, on: engine, to: folder)
    #expect(await fetcher.fetchResult().error != nil)
    let token = try #require(fetcher.downloadResumeData)
    return try #require(try JSONSerialization.jsonObject(with: token) as? [String: Any])
  }

  /// A real token of `/r` downloading into `folder`, and a folder beside it (`outside`) for the
  /// files a forged token names; `removeFolders()` deletes both.
  struct Forging {
    let engine = ScriptedEngine()
    let folder: URL
    let outside: URL
    let token: [String: Any]

    init(status: Int) async throws {
      let folder = try makeTemporaryFolder()
      let outside = try makeTemporaryFolder()
      (self.folder, self.outside) = (folder, outside)
      do {
        token = try await ScriptedResumeTokenTests.realToken(engine, "/r", folder: folder, status: status)
      } catch {
        try? FileManager.default.removeItem(at: folder)
        try? FileManager.default.removeItem(at: outside)
        throw error
      }
    }

    func removeFolders() {
      try? FileManager.default.removeItem(at: folder)
      try? FileManager.default.removeItem(at: outside)
    }
  }

  static func data(_ object: [String: Any]) throws -> Data {
    try JSONSerialization.data(withJSONObject: object)
  }

  /// Checks that `forged` (a token of `/r`) is refused both ways: `init(resumeData:)` gives nil,
  /// and a fetcher of `/r` given it fails before any request.
  static func expectRefused(
    _ forged: Data, engine: ScriptedEngine, sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    #expect(SessionFetcher(resumeData: forged) == nil, sourceLocation: sourceLocation)
    let sent = engine.requests(matching: "/r").count
    let fetcher = engine.fetcher("/r")
    fetcher.resumeData = forged
    let result = await fetcher.fetchResult()
    guard case .invalidConfiguration(let reason)? = result.error as? SessionFetcherError else {
      Issue.record(
        "expected a refused token, got \(String(describing: result.error))", sourceLocation: sourceLocation)
      return
    }
    #expect(reason.contains("resume token"), sourceLocation: sourceLocation)
    #expect(engine.requests(matching: "/r").count == sent, sourceLocation: sourceLocation)
  }

  @Test("A token naming a folder outside is refused, and the folder survives", arguments: [200, 206])
  func folderOutside(status: Int) async throws {
    let forging = try await Forging(status: status)
    defer { forging.removeFolders() }
    let (engine, folder, outside) = (forging.engine, forging.folder, forging.outside)
    var token = forging.token
    let canary = outside.appendingPathComponent("canary.txt")
    try Data("alive".utf8).write(to: canary)
    token["partFileURL"] = outside.absoluteString
    try await Self.expectRefused(try Self.data(token), engine: engine)
    #expect(try Data(contentsOf: canary) == Data("alive".utf8))
    // Even named like a part file, a folder is not one.
    let disguised = folder.appendingPathComponent(".file.bin.\(UUID().uuidString).part")
    try FileManager.default.createDirectory(at: disguised, withIntermediateDirectories: false)
    try Data("alive".utf8).write(to: disguised.appendingPathComponent("canary.txt"))
    token["partFileURL"] = disguised.absoluteString
    try await Self.expectRefused(try Self.data(token), engine: engine)
    #expect(try Data(contentsOf: disguised.appendingPathComponent("canary.txt")) == Data("alive".utf8))
    #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("file.bin").path))
  }

  @Test(
    "A token naming a file outside is refused, and the file is neither moved nor changed",
    arguments: [200, 206])
  func fileOutside(status: Int) async throws {
    let forging = try await Forging(status: status)
    defer { forging.removeFolders() }
    let (engine, folder, outside) = (forging.engine, forging.folder, forging.outside)
    var token = forging.token
    let secret = outside.appendingPathComponent("secret.txt")
    let secretBytes = Data(repeating: 7, count: 2000)
    try secretBytes.write(to: secret)
    token["partFileURL"] = secret.absoluteString
    try await Self.expectRefused(try Self.data(token), engine: engine)
    #expect(try Data(contentsOf: secret) == secretBytes)
    #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("file.bin").path))
  }

  @Test("A token whose paths go through .. is refused", arguments: [200, 206])
  func dotDotTraversal(status: Int) async throws {
    let forging = try await Forging(status: status)
    defer { forging.removeFolders() }
    let (engine, folder, outside) = (forging.engine, forging.folder, forging.outside)
    var token = forging.token
    // A file named like a part file, in another folder, reached from the destination's.
    let name = ".file.bin.\(UUID().uuidString).part"
    let victim = outside.appendingPathComponent(name)
    try Data("victim".utf8).write(to: victim)
    let traversal = folder.path + "/../" + outside.lastPathComponent + "/" + name
    token["partFileURL"] = URL(fileURLWithPath: traversal).absoluteString
    try await Self.expectRefused(try Self.data(token), engine: engine)
    // The destination's folder given through .. as well: the folders are then the same, lexically.
    token["destination"] =
      URL(fileURLWithPath: folder.path + "/../" + outside.lastPathComponent + "/file.bin")
      .absoluteString
    token["partFileURL"] = victim.absoluteString
    try await Self.expectRefused(try Self.data(token), engine: engine)
    #expect(try Data(contentsOf: victim) == Data("victim".utf8))
    #expect(!FileManager.default.fileExists(atPath: outside.appendingPathComponent("file.bin").path))
  }

  @Test(
    "A part-file name that is a symlink or a hard link to a file outside is refused", arguments: [200, 206])
  func linkInsideFolder(status: Int) async throws {
    let forging = try await Forging(status: status)
    defer { forging.removeFolders() }
    let (engine, folder, outside) = (forging.engine, forging.folder, forging.outside)
    var token = forging.token
    let target = outside.appendingPathComponent("target.txt")
    let targetBytes = Data(repeating: 7, count: 2000)
    try targetBytes.write(to: target)
    let symlink = folder.appendingPathComponent(".file.bin.\(UUID().uuidString).part")
    try FileManager.default.createSymbolicLink(at: symlink, withDestinationURL: target)
    token["partFileURL"] = symlink.absoluteString
    try await Self.expectRefused(try Self.data(token), engine: engine)
    #expect(try Data(contentsOf: target) == targetBytes)
    #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: symlink.path)) == target.path)

    let hardLink = folder.appendingPathComponent(".file.bin.\(UUID().uuidString).part")
    try FileManager.default.linkItem(at: target, to: hardLink)
    token["partFileURL"] = hardLink.absoluteString
    try await Self.expectRefused(try Self.data(token), engine: engine)
    #expect(try Data(contentsOf: target) == targetBytes)
    #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("file.bin").path))
  }

  @Test("Data that is not a token, or a token of an unknown version, is refused")
  func corruptTokens() async throws {
    let engine = ScriptedEngine()
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    var token = try await Self.realToken(engine, "/r", folder: folder)
    let kept = DownloadTests.contents(folder)
    try await Self.expectRefused(Data("not a token".utf8), engine: engine)
    try await Self.expectRefused(try Self.data(token).prefix(40), engine: engine)
    token["version"] = 99
    try await Self.expectRefused(try Self.data(token), engine: engine)
    token["version"] = 2
    token["method"] = "POST"
    try await Self.expectRefused(try Self.data(token), engine: engine)
    // Nothing partial left, and the part file of the real token is as it was.
    #expect(DownloadTests.contents(folder) == kept)
  }

  @Test("A token of another URL fails the fetch before any traffic and leaves its part file alone")
  func tokenOfAnotherURL() async throws {
    let engine = ScriptedEngine()
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let token = try Self.data(try await Self.realToken(engine, "/r", folder: folder))
    let kept = DownloadTests.contents(folder)
    engine.respond(to: "/other", with: Resume.rest)
    let fetcher = engine.fetcher("/other")
    fetcher.resumeData = token
    let result = await fetcher.fetchResult()
    guard case .invalidConfiguration(let reason)? = result.error as? SessionFetcherError else {
      Issue.record("expected a refused token, got \(String(describing: result.error))")
      return
    }
    #expect(reason.contains("/r"))
    #expect(engine.requests(matching: "/other").isEmpty)
    #expect(DownloadTests.contents(folder) == kept)
  }

  @Test("A version 1 token (no request fields) still continues its download")
  func versionOneToken() async throws {
    let engine = ScriptedEngine()
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    var token = try await Self.realToken(engine, "/r", folder: folder)
    token["version"] = 1
    for key in ["method", "headers", "requestURL"] { token[key] = nil }
    let resumed = try Rules.resuming(try Self.data(token), on: engine)
    let result = await resumed.fetchResult()
    #expect(result.error == nil)
    #expect(engine.requests(matching: "/r").last?.header("Range") == "bytes=400-")
    #expect(try Data(contentsOf: folder.appendingPathComponent("file.bin")) == Resume.whole)
  }

  @Test("A token keeps the request's method and headers, never its credentials")
  func tokenKeepsHeadersNotSecrets() async throws {
    let engine = ScriptedEngine()
    let folder = try makeTemporaryFolder()
    defer { try? FileManager.default.removeItem(at: folder) }
    engine.respond(to: "/file", with: Rules.lost, Resume.rest)
    let (first, destination, _) = try Self.download("/file", on: engine, to: folder)
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
    let resumed = try Rules.resuming(token, on: engine)
    #expect(resumed.request?.httpMethod == "GET")
    #expect(resumed.request?.value(forHTTPHeaderField: "X-Custom") == "kept")
    #expect(resumed.request?.value(forHTTPHeaderField: "Authorization") == nil)
    let result = await resumed.fetchResult()
    #expect(result.error == nil)
    let last = try #require(engine.requests.last)
    #expect(last.method == "GET")
    #expect(last.header("X-Custom") == "kept")
    #expect(last.header("Range") == "bytes=400-")
    for name in secrets.keys { #expect(last.header(name) == nil) }
    #expect(try Data(contentsOf: destination) == Resume.whole)
  }
}
