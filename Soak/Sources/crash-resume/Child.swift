import Foundation
import SessionFetcher
import SessionUploadFetcher
import SoakSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The child processes' side: a transfer that saves what resumes it, then prints its progress
/// (`p N`) until it ends or is killed; or the resumer, which continues from what was saved.
/// Every child prints `ready` once its resume state is on disk, and exits 0 only on success.
enum Child {
  /// `download URL DESTINATION TOKEN-FILE`: downloads with `keepsPartialDownloadForResume`,
  /// saving the part file's resume token (atomically) whenever it changes.
  static func download(url: URL, destination: URL, tokenFile: URL) -> Int32 {
    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.allowLocalhostRequest = true
    fetcher.allowedInsecureSchemes = ["http"]
    fetcher.callbackQueue = DispatchQueue(label: "crash-resume child")
    fetcher.destinationFileURL = destination
    fetcher.keepsPartialDownloadForResume = true
    let saved = Guarded<Data?>(nil)
    fetcher.downloadProgressBlock = { [weak fetcher] _, written, _ in
      let last = saved.with { $0 }
      if let token = fetcher?.partFileResumeData, token != last {
        do {
          try writeAtomically(token, to: tokenFile)
        } catch {
          FileHandle.standardError.write(Data("child: cannot save the token: \(error)\n".utf8))
          exit(3)
        }
        if last == nil { say("ready") }
        saved.with { $0 = token }
      }
      if saved.with({ $0 != nil }) { say("p \(written)") }
    }
    return finish(fetcher)
  }

  /// `download-resume TOKEN-FILE`: continues the download the token describes.
  static func resumeDownload(tokenFile: URL) -> Int32 {
    guard let token = try? Data(contentsOf: tokenFile), let fetcher = SessionFetcher(resumeData: token) else {
      FileHandle.standardError.write(Data("child: no usable token in \(tokenFile.path)\n".utf8))
      return 4
    }
    fetcher.allowLocalhostRequest = true
    fetcher.allowedInsecureSchemes = ["http"]
    fetcher.callbackQueue = DispatchQueue(label: "crash-resume resumer")
    say("ready")
    return finish(fetcher)
  }

  /// `upload START-URL FILE LOCATION-FILE CHUNK`: a resumable upload of the file, saving the upload
  /// URL (atomically) as soon as the server gives it.
  static func upload(start: URL, file: URL, locationFile: URL, chunkSize: Int64) -> Int32 {
    var request = URLRequest(url: start)
    request.httpMethod = "POST"
    let fetcher = SessionUploadFetcher(
      request: request, uploadMIMEType: "application/octet-stream", chunkSize: chunkSize)
    configure(fetcher, file: file)
    let saved = Guarded(false)
    let observer = NotificationCenter.default.addObserver(
      forName: .sessionUploadFetcherLocationObtained, object: fetcher, queue: nil
    ) { _ in
      guard let location = fetcher.uploadLocationURL else { return }
      do {
        try writeAtomically(Data(location.absoluteString.utf8), to: locationFile)
      } catch {
        FileHandle.standardError.write(Data("child: cannot save the upload URL: \(error)\n".utf8))
        exit(3)
      }
      saved.with { $0 = true }
      say("ready")
    }
    defer { NotificationCenter.default.removeObserver(observer) }
    fetcher.sendProgressBlock = { _, sent, _ in
      if saved.with({ $0 }) { say("p \(sent)") }
    }
    return finish(fetcher)
  }

  /// `upload-resume LOCATION-FILE FILE CHUNK`: continues the upload at the saved upload URL.
  static func resumeUpload(locationFile: URL, file: URL, chunkSize: Int64) -> Int32 {
    guard let text = try? String(contentsOf: locationFile, encoding: .utf8), let location = URL(string: text)
    else {
      FileHandle.standardError.write(Data("child: no upload URL in \(locationFile.path)\n".utf8))
      return 4
    }
    let fetcher = SessionUploadFetcher(
      location: location, uploadMIMEType: "application/octet-stream", chunkSize: chunkSize)
    configure(fetcher, file: file)
    say("ready")
    return finish(fetcher)
  }

  private static func configure(_ fetcher: SessionUploadFetcher, file: URL) {
    fetcher.allowLocalhostRequest = true
    fetcher.allowedInsecureSchemes = ["http"]
    fetcher.callbackQueue = DispatchQueue(label: "crash-resume child")
    fetcher.uploadFileURL = file
    // A chunk the killed process had sent whole may reach the server's store after the resumer's
    // query: the next chunk's offset is then refused (503), and a retry queries again.
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.05
    fetcher.maxRetryInterval = 10
  }

  private static func finish(_ fetcher: SessionFetcher) -> Int32 {
    finish { fetcher.beginFetch(completionHandler: $0) }
  }

  private static func finish(_ fetcher: SessionUploadFetcher) -> Int32 {
    finish { fetcher.beginFetch(completionHandler: $0) }
  }

  /// Begins a fetch through `begin` and waits for its completion.
  private static func finish(_ begin: (@escaping FetcherCompletionHandler) -> Void) -> Int32 {
    let done = DispatchSemaphore(value: 0)
    let failure = Guarded<String?>(nil)
    begin { _, error in
      failure.with { $0 = error.map { "\($0)" } }
      done.signal()
    }
    return ended(done, failure)
  }

  private static func ended(_ done: DispatchSemaphore, _ failure: Guarded<String?>) -> Int32 {
    guard done.wait(timeout: .now() + 600) == .success else {
      FileHandle.standardError.write(Data("child: timed out\n".utf8))
      return 5
    }
    if let message = failure.with({ $0 }) {
      FileHandle.standardError.write(Data("child: failed: \(message)\n".utf8))
      return 1
    }
    say("done")
    return 0
  }

  /// Prints one line to the parent, at once.
  static func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
  }
}
