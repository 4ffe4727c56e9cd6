import FetcherTesting
import Foundation

/// The cloud side, on loopback: FetcherTesting's `TestServer`, whose resumable-upload routes
/// (`NAME.location` to start, `NAME.upload` for the commands) take the uploads, and two routes of
/// this example's own per object: its metadata (JSON) and its media, both for a bearer token only,
/// the media with `ETag` and byte ranges. The first media answer sends half the object and then
/// nothing more, so that the client has something to pause.
final class StorageServer: Sendable {
  static let bucket = "/storage/v1/b/photos/o"
  let validToken = "token-2"
  private let server: TestServer
  private let state = ExampleLock(ServerState())

  private struct ServerState {
    var stallsFirstMedia = true
    var lastMediaRange: String?
  }

  init() throws {
    server = try TestServer()
  }

  var baseURL: URL { server.baseURL }

  /// The `Range` header of the latest media request (nil when it had none).
  var lastMediaRange: String? { state.withLock { $0.lastMediaRange } }

  /// Every request the server has had.
  var requestCount: Int { server.requests.count }

  func stop() { server.stop() }

  /// The bytes the server holds for `name`'s finished upload.
  func uploadedBody(of name: String) -> Data? {
    guard let upload = server.resumableUpload(path: Self.uploadPath(name)), upload.status == .final else {
      return nil
    }
    return upload.body
  }

  static func uploadPath(_ name: String) -> String { "/upload\(bucket)/\(name).upload" }

  /// Serves `name`'s metadata and media once its upload has finished.
  func publish(_ name: String) {
    server.route("\(Self.bucket)/\(name)") { [weak self] request in
      guard let self, self.isAuthorized(request) else { return Self.unauthorized }
      guard let body = self.uploadedBody(of: name) else { return Self.notFound(name) }
      let json = #"{"name":"\#(name)","size":\#(body.count),"contentType":"image/jpeg"}"#
      return TestResponse(headers: [("Content-Type", "application/json")], body: Data(json.utf8))
    }
    server.route("/download\(Self.bucket)/\(name)") { [weak self] request in
      guard let self, self.isAuthorized(request) else { return Self.unauthorized }
      guard let body = self.uploadedBody(of: name) else { return Self.notFound(name) }
      return self.media(body, request)
    }
  }

  private func isAuthorized(_ request: RecordedRequest) -> Bool {
    request.header("Authorization") == "Bearer \(validToken)"
  }

  private func media(_ body: Data, _ request: RecordedRequest) -> TestResponse {
    let etag = "\"\(TestServer.checksum(body))\""
    let range = request.header("Range")
    let stalls = state.withLock { state in
      state.lastMediaRange = range
      defer { state.stallsFirstMedia = false }
      return state.stallsFirstMedia
    }
    var headers = [("ETag", etag), ("Accept-Ranges", "bytes"), ("Content-Type", "image/jpeg")]
    if let range, request.header("If-Range") == etag, range.hasPrefix("bytes="), range.hasSuffix("-"),
      let start = Int(range.dropFirst("bytes=".count).dropLast()), start < body.count
    {
      headers.append(("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)"))
      return TestResponse(status: 206, headers: headers, body: body.subdata(in: start..<body.count))
    }
    guard stalls else { return TestResponse(headers: headers, body: body) }
    var response = TestResponse(headers: headers, body: body.prefix(body.count / 2))
    response.fault = .stall(announcedLength: body.count)
    return response
  }

  private static let unauthorized = TestResponse(
    status: 401, headers: [("WWW-Authenticate", #"Bearer realm="storage", error="invalid_token""#)],
    body: Data(#"{"error":{"code":401,"message":"Invalid Credentials"}}"#.utf8))

  private static func notFound(_ name: String) -> TestResponse {
    TestResponse(
      status: 404, headers: [("Content-Type", "application/json")],
      body: Data(#"{"error":{"code":404,"message":"No such object: \#(name)"}}"#.utf8))
  }
}

/// A value behind a lock, for the state the example's callbacks share.
final class ExampleLock<Value>: @unchecked Sendable {
  // `@unchecked Sendable`: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
