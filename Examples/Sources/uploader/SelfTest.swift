import FetcherTesting
import Foundation
import MIMEDocument
import SessionFetcher

/// `uploader --selftest`: uploads to `PhotoServer` in this process and checks what the server
/// received: the form and its file, the 401 that refreshes the token, and a problem body.
enum UploaderSelfTest {
  static func run(engine: FetcherEngine?) async -> Int32 {
    var passed = 0
    var failed = 0
    func check(_ condition: Bool, _ what: String) {
      if condition { passed += 1 } else { failed += 1 }
      Console.out(condition ? "  ok: \(what)" : "  FAILED: \(what)")
    }
    do {
      let server = try PhotoServer()
      defer { server.stop() }
      let file = FileManager.default.temporaryDirectory.appendingPathComponent("uploader-\(getpid()).jpg")
      let bytes = TestServer.patternBytes(count: 3_000_000, offset: 7)
      try bytes.write(to: file)
      defer { try? FileManager.default.removeItem(at: file) }
      var request = UploadRequest(
        server: server.baseURL, file: file, title: "Beach", fields: [("description", "Low tide, 7 am")],
        tags: ["beach", "2024"], token: "token-1", refreshToken: "refresh-1", engine: engine)

      Console.out("uploader self-test: a 3 MB form, then a PUT whose token has expired")
      let run = UploadRun(request, showsProgress: false)
      let photo = try await run.run()
      Console.out("  uploaded \(photo.id): \(photo.size) bytes, \"\(photo.title)\", tags \(photo.tags)")
      let upload = server.upload
      check(
        upload?.fields == ["title": "Beach", "description": "Low tide, 7 am"] && upload?.file == bytes,
        "the server got the fields and the file's \(bytes.count) bytes")
      let length = upload?.contentLength ?? -1
      check(
        upload?.wasChunked == false && length == upload?.bodyLength,
        "the form went with Content-Length: \(length), not chunked")
      let sent = run.sent.withLock { $0 }
      check(
        sent.bytes == length && sent.expected == length,
        "send progress reached \(sent.bytes) of \(sent.expected) bytes")
      check(
        server.puts == ["Bearer token-1 -> 401", "Bearer token-2 -> 200"] && run.authorizer.refreshCount == 1
          && server.refreshes == 1,
        "the first PUT got a 401, the token was refreshed once and the PUT sent again: \(server.puts)")
      check(
        photo == Photo(id: "p1", title: "Beach", tags: ["beach", "2024"], size: bytes.count, version: 2),
        "the reply decoded as a Photo")

      Console.out("uploader self-test: a tag the service refuses (400, application/problem+json)")
      server.reset()
      request.tags = ["bad tag"]
      do {
        _ = try await UploadRun(request, showsProgress: false).run()
        check(false, "the PUT with a bad tag succeeded")
      } catch let failure as UploadFailure {
        Console.out("  uploader: \(failure)")
        check(
          failure.description.hasPrefix("PUT /photos/p1: HTTP 400 (")
            && failure.description.hasSuffix("): Invalid tag: the tag 'bad tag' has a space")
            && failure.exitStatus == 1,
          "one line with the status, the problem's title and its detail; exit status 1")
      }

      Console.out("uploader self-test: a file that is not there")
      request.file = file.appendingPathExtension("missing")
      let uploadsBefore = server.uploadCount
      do {
        _ = try await UploadRun(request, showsProgress: false).run()
        check(false, "a missing file was uploaded")
      } catch let failure as UploadFailure {
        Console.out("  uploader: \(failure)")
        check(
          failure.exitStatus == 2 && server.uploadCount == uploadsBefore,
          "one line, exit status 2, nothing sent")
      }
    } catch {
      check(false, "the self-test could not run: \(error)")
    }
    Console.out(failed == 0 ? "uploader: self-test passed (\(passed) checks)" : "uploader: self-test FAILED")
    return failed == 0 ? 0 : 1
  }
}

/// The photo service on 127.0.0.1: `POST /oauth/token` (a `refresh_token` grant), `POST /uploads`
/// (a multipart form; the access token expires once it is taken, so that the next request gets a
/// 401), and `PUT /photos/p1` (JSON; a tag with a space is refused with a problem body).
final class PhotoServer: Sendable {
  struct Upload: Sendable {
    var fields: [String: String] = [:]
    var file: Data?
    var contentLength: Int?
    var bodyLength: Int
    var wasChunked: Bool
  }

  private struct State {
    var validToken = "token-1"
    var refreshes = 0
    var uploads: [Upload] = []
    var puts: [String] = []
  }

  private let server: TestServer
  private let state = UploaderLock(State())

  var baseURL: URL { server.baseURL }
  var upload: Upload? { state.withLock { $0.uploads.last } }
  var uploadCount: Int { state.withLock { $0.uploads.count } }
  var puts: [String] { state.withLock { $0.puts } }
  var refreshes: Int { state.withLock { $0.refreshes } }

  init() throws {
    server = try TestServer()
    server.route("/oauth/token") { [state] request in
      guard request.method == "POST", request.bodyText.contains("refresh_token=refresh-1") else {
        return .json(#"{"error":"invalid_grant"}"#, status: 400)
      }
      state.withLock { state in
        state.validToken = "token-2"
        state.refreshes += 1
      }
      return .json(#"{"access_token":"token-2","token_type":"Bearer","expires_in":3600}"#)
    }
    server.route("/uploads") { [state] request in
      guard Self.isAuthorized(request, state) else { return Self.unauthorized }
      var upload = Upload(
        contentLength: request.header("Content-Length").flatMap { Int($0) }, bodyLength: request.bodyLength,
        wasChunked: request.wasChunked)
      let boundary = request.header("Content-Type")?.components(separatedBy: "boundary=").last ?? ""
      for part in (try? MIMEDocument.parse(boundary: boundary, data: request.body)) ?? [] {
        let disposition = part.headers["Content-Disposition"] ?? ""
        let name = disposition.components(separatedBy: "name=\"").dropFirst().first?.prefix { $0 != "\"" }
        if disposition.contains("filename=") {
          upload.file = part.body
        } else if let name {
          upload.fields[String(name)] = String(decoding: part.body, as: UTF8.self)
        }
      }
      let size = upload.file?.count ?? 0
      state.withLock { state in
        state.uploads.append(upload)
        state.validToken = "token-expired"
      }
      return .json(#"{"id":"p1","size":\#(size)}"#, status: 201)
    }
    server.route("/photos/p1") { [state] request in
      let authorized = Self.isAuthorized(request, state)
      let auth = request.header("Authorization") ?? "none"
      state.withLock { $0.puts.append("\(auth) -> \(authorized ? 200 : 401)") }
      guard authorized else { return Self.unauthorized }
      struct Update: Decodable { let title: String, tags: [String] }
      guard request.method == "PUT", let update = try? JSONDecoder().decode(Update.self, from: request.body)
      else { return .json(#"{"error":"expected a JSON PUT"}"#, status: 400) }
      if let bad = update.tags.first(where: { $0.contains(" ") }) {
        let problem = """
          {"type":"https://photos.example/problems/invalid-tag","title":"Invalid tag","status":400,\
          "detail":"the tag '\(bad)' has a space"}
          """
        return TestResponse(
          status: 400, headers: [("Content-Type", "application/problem+json")], body: Data(problem.utf8))
      }
      let size = state.withLock { $0.uploads.last?.file?.count ?? 0 }
      let tags = update.tags.map { "\"\($0)\"" }.joined(separator: ",")
      return .json(#"{"id":"p1","title":"\#(update.title)","tags":[\#(tags)],"size":\#(size),"version":2}"#)
    }
  }

  func stop() { server.stop() }

  /// Back to the first token, and no PUTs.
  func reset() {
    state.withLock { state in
      state.validToken = "token-1"
      state.puts = []
    }
  }

  private static func isAuthorized(_ request: RecordedRequest, _ state: UploaderLock<State>) -> Bool {
    request.header("Authorization") == "Bearer \(state.withLock { $0.validToken })"
  }

  private static let unauthorized = TestResponse(
    status: 401, headers: [("WWW-Authenticate", #"Bearer realm="photos", error="invalid_token""#)],
    body: Data(#"{"error":"invalid_token"}"#.utf8))
}
