import FetcherService
import Foundation
import MIMEDocument
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What to upload, and where.
struct UploadRequest: Sendable {
  var server: URL
  var file: URL
  var title: String
  var fields: [(String, String)] = []
  var tags: [String] = []
  var token: String
  var refreshToken: String?
  var engine: FetcherEngine?
  var insecureHTTP = false
}

/// The service's answer to the form: the stored file.
struct UploadReceipt: Decodable, Sendable {
  let id: String
  let size: Int
}

/// The `PUT`'s body.
struct PhotoUpdate: Encodable, Sendable {
  let title: String
  let tags: [String]
}

/// The service's answer to the `PUT`: the photo as it now stands.
struct Photo: Decodable, Sendable, Equatable {
  let id: String
  let title: String
  let tags: [String]
  let size: Int
  let version: Int
}

/// RFC 9457's problem details, as the service sends them with a 4xx
/// (`Content-Type: application/problem+json`).
struct Problem: Decodable, Sendable {
  let type: String?
  let title: String?
  let status: Int?
  let detail: String?
}

/// Why the upload did not happen, in one line.
struct UploadFailure: Error, CustomStringConvertible {
  let description: String
  var exitStatus: Int32 = 1
}

/// The two requests, through one `FetcherService` with the bearer-token authorizer.
final class UploadRun: Sendable {
  let service = FetcherService()
  let authorizer: BearerAuthorizer
  private let request: UploadRequest
  private let showsProgress: Bool

  init(_ request: UploadRequest, showsProgress: Bool) {
    self.request = request
    self.showsProgress = showsProgress && isatty(STDERR_FILENO) == 1
    authorizer = BearerAuthorizer(
      token: request.token, refreshToken: request.refreshToken,
      tokenURL: request.server.appendingPathComponent("oauth/token"))
    service.callbackQueue = DispatchQueue(label: "uploader callbacks")
    service.isRetryEnabled = true
    // Without a cap, a refused connection is retried for as long as the backoff allows: a quarter
    // of an hour for a POST, whose delays may grow to 600 s.
    service.maxRetryCount = 3
    service.allowLocalhostRequest = true
    if request.insecureHTTP { service.allowedInsecureSchemes = ["http"] }
    if let engine = request.engine { service.engine = engine }
    service.authorizer = authorizer
  }

  /// The largest send progress seen, and the total it announced.
  let sent = UploaderLock((bytes: Int64(0), expected: Int64(0)))

  func run() async throws -> Photo {
    let receipt = try await sendForm()
    return try await describe(receipt)
  }

  /// The form: the text fields, then the file, streamed from disk and sent with a `Content-Length`.
  private func sendForm() async throws -> UploadReceipt {
    guard FileManager.default.isReadableFile(atPath: request.file.path) else {
      throw UploadFailure(description: "cannot read \(request.file.path)", exitStatus: 2)
    }
    let form = MIMEDocument()
    form.appendFormField(name: "title", value: request.title)
    for (name, value) in request.fields { form.appendFormField(name: name, value: value) }
    form.appendFormFile(
      name: "file", filename: request.file.lastPathComponent, contentType: "application/octet-stream",
      fileURL: request.file)
    let fetcher = service.fetcher(url: request.server.appendingPathComponent("uploads"))
    do {
      try fetcher.setBody(form)
    } catch {
      throw UploadFailure(description: "cannot read \(request.file.path): \(error)", exitStatus: 2)
    }
    fetcher.sendProgressBlock = { [sent, showsProgress] _, total, expected in
      sent.withLock { $0 = (max($0.bytes, total), expected) }
      guard showsProgress else { return }
      let percent = expected > 0 ? " (\(total * 100 / expected)%)" : ""
      FileHandle.standardError.write(Data("\r\u{1B}[Ksent \(total) of \(expected) bytes\(percent)".utf8))
    }
    defer { if showsProgress { FileHandle.standardError.write(Data("\n".utf8)) } }
    return try await fetch(fetcher, "POST", decoding: UploadReceipt.self)
  }

  /// The JSON `PUT` that gives the uploaded file its title and tags.
  private func describe(_ receipt: UploadReceipt) async throws -> Photo {
    var put = URLRequest(url: request.server.appendingPathComponent("photos/\(receipt.id)"))
    put.httpMethod = "PUT"
    let fetcher = service.fetcher(request: put)
    try fetcher.setJSONBody(PhotoUpdate(title: request.title, tags: request.tags))
    return try await fetch(fetcher, "PUT", decoding: Photo.self)
  }

  /// Fetches and decodes the reply; an HTTP error becomes one line, with the problem details when
  /// the server sent them.
  private func fetch<Reply: Decodable & Sendable>(
    _ fetcher: SessionFetcher, _ method: String, decoding: Reply.Type
  ) async throws -> Reply {
    let what = "\(method) \(fetcher.request?.url?.path ?? "")"
    do {
      return try await fetcher.beginFetch(decoding: Reply.self)
    } catch SessionFetcherError.status(let code, let data) {
      let reason = HTTPURLResponse.localizedString(forStatusCode: code)
      var line = "\(what): HTTP \(code) (\(reason))"
      let type = fetcher.response?.mimeType ?? ""
      if type == "application/problem+json", let data,
        let problem = try? JSONDecoder().decode(Problem.self, from: data)
      {
        line += [problem.title, problem.detail].compactMap { $0 }.map { ": \($0)" }.joined()
      }
      throw UploadFailure(description: line)
    } catch let error as DecodingError {
      throw UploadFailure(description: "\(what): the reply is not what the service sends: \(error)")
    } catch let error as UploadFailure {
      throw error
    } catch let error as URLError {
      throw UploadFailure(description: "\(what): \(error.localizedDescription)")
    } catch {
      throw UploadFailure(description: "\(what): \(error)")
    }
  }
}
