import FetcherService
import Foundation
import SessionFetcher
import SessionUploadFetcher

extension StorageClient {
  /// What an upload did, for the tour to check.
  struct UploadReport: Sendable {
    let size: Int
    let chunkCommands: Int
    let queries: Int
    let paused: Bool
  }

  /// Uploads `fileURL` with the resumable protocol in 256 KiB chunks, as the SDK's upload task did
  /// with `GTMSessionUploadFetcher`. The service authorizes the start; the upload URL the server
  /// answers is the credential of the chunks. `failingChunk` asks the example's server to answer
  /// that chunk with a 503 once; `pauseAfterFirstChunk` pauses once the first chunk's bytes are sent
  /// and resumes a moment later, as a user's pause button would.
  func upload(
    fileURL: URL, as name: String, mimeType: String, failingChunk: Int? = nil,
    pauseAfterFirstChunk: Bool = false
  ) async throws -> UploadReport {
    var components = URLComponents(url: uploadStartURL(name), resolvingAgainstBaseURL: false)
    if let failingChunk {
      // The test server carries the start's query over to the upload URL.
      components?.queryItems = [
        URLQueryItem(name: "uploadStatus", value: "503"),
        URLQueryItem(name: "uploadStatusChunks", value: String(failingChunk)),
      ]
    }
    guard let startURL = components?.url else { throw StorageError.notFound(name) }
    var request = URLRequest(url: startURL)
    request.httpMethod = "POST"
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    request.httpBody = Data(#"{"name":"\#(name)"}"#.utf8)

    let upload = SessionUploadFetcher(
      request: request, uploadMIMEType: mimeType, chunkSize: 256 * 1024, fetcherService: service)
    upload.uploadFileURL = fileURL
    upload.comment = "upload \(name)"
    let commands = ExampleLock((chunks: 0, queries: 0, paused: false))
    upload.willBeginCommandFetcher = { fetcher in
      let command = fetcher.request?.value(forHTTPHeaderField: "X-Goog-Upload-Command") ?? ""
      commands.withLock { counts in
        if command.contains("query") { counts.queries += 1 }
        if command.contains("upload") || command.contains("finalize") { counts.chunks += 1 }
      }
    }
    upload.sendProgressBlock = { [weak upload] _, totalSent, _ in
      guard pauseAfterFirstChunk, totalSent >= 256 * 1024, let upload else { return }
      let pauses = commands.withLock { counts in
        defer { counts.paused = true }
        return !counts.paused
      }
      guard pauses else { return }
      upload.pauseFetching()
      DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { upload.resumeFetching() }
    }
    do {
      _ = try await upload.beginFetch()
    } catch {
      throw StorageError(error, object: name)
    }
    let counts = commands.withLock { $0 }
    return UploadReport(
      size: Int(upload.uploadedLength), chunkCommands: counts.chunks, queries: counts.queries,
      paused: counts.paused)
  }
}
