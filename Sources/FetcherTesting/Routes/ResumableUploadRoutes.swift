import Foundation
import SessionFetcher

/// The server side of the resumable ("X-Goog-Upload") upload protocol, as the original library's
/// test server implements it: `*.location` starts an upload, `*.upload` takes its commands.
///
/// The query of the `*.location` request is carried over to the upload URL, so a test steers the
/// upload's commands from the URL it gives the upload fetcher (`uploadStatus`, `queryStatus`, …).
enum ResumableUploadRoutes {
  /// The answer for `request` when its path ends in `.location` or `.upload`, else `nil`.
  static func action(for request: RecordedRequest, uploads: ResumableUploadStore, baseURL: URL)
    -> ResponseAction?
  {
    if request.path.hasSuffix(".location") {
      return .respond(start(request, uploads: uploads, baseURL: baseURL))
    }
    if request.path.hasSuffix(".upload") {
      return .respond(command(request, uploads: uploads))
    }
    return nil
  }

  private static func header(_ name: String, _ value: String) -> HTTPHeader {
    HTTPHeader(name: name, value: value)
  }

  private static func statusResponse(_ status: String, extra: [HTTPHeader] = []) -> ResponsePlan {
    .text(status, headers: [header("X-Goog-Upload-Status", status)] + extra)
  }

  // MARK: - Start

  private static func start(_ request: RecordedRequest, uploads: ResumableUploadStore, baseURL: URL)
    -> ResponsePlan
  {
    let method = request.method.uppercased()
    guard method == "POST" || method == "PUT",
      request.header("X-Goog-Upload-Protocol")?.lowercased() == "resumable",
      request.header("X-Goog-Upload-Command")?.lowercased() == "start",
      let contentType = request.header("X-Goog-Upload-Content-Type"),
      request.header("X-Goog-Upload-Content-Length") != nil
    else {
      return BuiltInRoutes.errorResponse(503, retryAfter: nil)
    }
    let uploadPath = String(request.path.dropLast(".location".count)) + ".upload"
    let declared = request.header("X-Goog-Upload-Content-Length").flatMap { Int64($0) } ?? -1
    let granularity = request.header("GTM-Upload-Granularity-Request").flatMap { Int64($0) }
    uploads.begin(
      ResumableUpload(
        path: uploadPath, contentType: contentType, declaredLength: declared,
        granularity: granularity, metadata: request.body))
    var location = baseURL.absoluteString + uploadPath
    if let query = RequestTarget(request.target).rawQuery { location += "?" + query }
    var headers = [header("X-Goog-Upload-URL", location)]
    if let granularity { headers.append(header("X-Goog-Upload-Chunk-Granularity", String(granularity))) }
    return statusResponse("active", extra: headers)
  }

  // MARK: - Commands

  private static func command(_ request: RecordedRequest, uploads: ResumableUploadStore) -> ResponsePlan {
    guard let commandHeader = request.header("X-Goog-Upload-Command") else {
      return BuiltInRoutes.badRequest("no X-Goog-Upload-Command")
    }
    // Every command of the original carries the protocol's name.
    guard request.header("X-Goog-Upload-Protocol")?.lowercased() == "resumable" else {
      return BuiltInRoutes.badRequest("no X-Goog-Upload-Protocol: resumable")
    }
    let commands = Set(
      commandHeader.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    return uploads.update(path: request.path) { stored -> ResponsePlan in
      guard var upload = stored else { return BuiltInRoutes.notFound() }
      defer { stored = upload }
      if commands.contains("query") { return query(request, &upload) }
      if commands.contains("cancel") {
        if upload.status != .final { upload.status = .cancelled }
        return statusResponse(upload.status.rawValue)
      }
      guard commands.contains("upload") || commands.contains("finalize") else {
        return BuiltInRoutes.badRequest("unknown command \(commandHeader)")
      }
      return chunk(request, finalize: commands.contains("finalize"), &upload)
    }
  }

  private static func query(_ request: RecordedRequest, _ upload: inout ResumableUpload) -> ResponsePlan {
    switch request.query["queryStatus"]?.lowercased() {
    case "error"?:
      return BuiltInRoutes.errorResponse(502, retryAfter: nil)
    case "final"?:
      return statusResponse(
        "final", extra: [header("X-Goog-Upload-Size-Received", String(upload.body.count))])
    case "cancelled"?:
      return statusResponse("cancelled")
    default:
      break
    }
    if let forced = request.query["bytesReceived"].flatMap({ Int($0) }), forced >= 0 {
      // Pretend the server holds `forced` bytes: later offsets are checked against it.
      if forced <= upload.body.count {
        upload.body = upload.body.prefix(forced)
      } else {
        upload.body.append(Data(count: forced - upload.body.count))
      }
    }
    guard upload.status == .active else { return statusResponse(upload.status.rawValue) }
    // A broken server: the size received as the test wrote it, even one no upload can have.
    let received = request.query["querySizeReceived"] ?? String(upload.body.count)
    return statusResponse("active", extra: [header("X-Goog-Upload-Size-Received", received)])
  }

  private static func chunk(_ request: RecordedRequest, finalize: Bool, _ upload: inout ResumableUpload)
    -> ResponsePlan
  {
    upload.chunkRequests += 1
    if let forced = request.query["uploadStatus"].flatMap({ Int($0) }) {
      let chunks = request.query["uploadStatusChunks"].map {
        Set($0.split(separator: ",").compactMap { Int($0) })
      }
      if chunks?.contains(upload.chunkRequests) ?? true {
        return BuiltInRoutes.errorResponse(forced, retryAfter: nil)
      }
    }
    guard upload.status == .active else { return statusResponse(upload.status.rawValue) }
    if upload.declaredLength >= 0,
      request.header("X-Goog-Upload-Content-Length") != String(upload.declaredLength)
    {
      // The original sends the upload's length with every chunk when it is known.
      return BuiltInRoutes.badRequest("a chunk without X-Goog-Upload-Content-Length \(upload.declaredLength)")
    }
    guard let offset = request.header("X-Goog-Upload-Offset").flatMap({ Int($0) }),
      offset == upload.body.count
    else {
      return BuiltInRoutes.errorResponse(503, retryAfter: nil)
    }
    upload.body.append(request.body)
    let received = upload.body.count
    if let granularity = upload.granularity, granularity > 0, !finalize,
      request.body.count % Int(granularity) != 0
    {
      return BuiltInRoutes.badRequest("a chunk that is not the last must be a multiple of the granularity")
    }
    if upload.declaredLength >= 0 {
      if finalize && Int64(received) != upload.declaredLength {
        return BuiltInRoutes.badRequest("finalized at \(received) of \(upload.declaredLength) bytes")
      }
      if !finalize && Int64(received) >= upload.declaredLength {
        return BuiltInRoutes.badRequest("the last chunk must carry finalize")
      }
    }
    guard finalize else {
      var answered = String(received)
      if let forced = request.query["sizeReceived"],
        request.query["sizeReceivedChunks"].map({
          Set($0.split(separator: ",").compactMap { Int($0) }).contains(upload.chunkRequests)
        }) ?? true
      {
        // A broken server: the size received as the test wrote it, even one no upload can have.
        answered = forced
      }
      return statusResponse("active", extra: [header("X-Goog-Upload-Size-Received", answered)])
    }
    upload.status = .final
    var plan = ResponsePlan.json(
      .object([
        ("length", .integer(received)),
        ("checksum", .string(TestServer.checksum(upload.body))),
        ("contentType", .string(upload.contentType)),
      ]))
    plan.headers += [
      header("X-Goog-Upload-Status", "final"), header("X-Goog-Upload-Size-Received", String(received)),
    ]
    return plan
  }
}

/// The uploads a ``TestServer`` holds, by upload path, behind their own lock.
final class ResumableUploadStore: Sendable {
  private let uploads = LockedState([String: ResumableUpload]())

  /// Starts (or restarts) the upload at `upload.path`.
  func begin(_ upload: ResumableUpload) {
    uploads.withLock { $0[upload.path] = upload }
  }

  /// Applies one command to the upload at `path` (nil when none was started) under the lock, so
  /// that commands on one upload take effect one at a time. `body` must not block.
  func update<Result>(path: String, _ body: (inout ResumableUpload?) -> Result) -> Result {
    uploads.withLock { body(&$0[path]) }
  }

  /// The upload at `path`, if one was started.
  subscript(path: String) -> ResumableUpload? {
    uploads.withLock { $0[path] }
  }
}
