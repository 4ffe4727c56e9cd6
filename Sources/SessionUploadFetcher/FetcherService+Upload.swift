import FetcherService
import Foundation

extension FetcherService {
  /// An upload fetcher that resumes the upload at `location` (an upload URL kept from
  /// ``SessionUploadFetcher/uploadLocationURL``, perhaps by another process), with this service's
  /// defaults: see ``SessionUploadFetcher/init(location:uploadMIMEType:chunkSize:fetcherService:)``.
  ///
  /// Nil when `location` is not an absolute `http` or `https` URL with a host and without user
  /// information: an upload URL read back from storage is never trusted to name a local file or
  /// another scheme.
  ///
  /// ```swift
  /// guard let saved = try? String(contentsOf: locationFile, encoding: .utf8), let url = URL(string: saved),
  ///   let resumed = service.uploadFetcher(location: url, uploadMIMEType: "video/mp4")
  /// else { return }
  /// resumed.uploadFileURL = movieURL
  /// let answer = try await resumed.beginFetch()
  /// ```
  public func uploadFetcher(
    location: URL, uploadMIMEType: String, chunkSize: Int64 = SessionUploadFetcher.standardChunkSize
  ) -> SessionUploadFetcher? {
    guard UploadLocation.isAcceptable(location) else { return nil }
    return SessionUploadFetcher(
      location: location, uploadMIMEType: uploadMIMEType, chunkSize: chunkSize, fetcherService: self)
  }
}
