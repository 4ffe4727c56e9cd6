import Foundation

/// The `userInfo` keys of the errors engines report that the fetcher reads, the same on every
/// engine: an engine sets them, the fetcher's policies read them without knowing which engine
/// made the error.
package enum EngineErrorKeys {
  /// The libcurl result code (`CURLcode`, an `Int`) behind an error, where libcurl moved the bytes
  /// (the libcurl engine, and FoundationNetworking's URLSession, which runs on libcurl).
  package static let curlCode = "SessionFetcherCurlCode"
  /// `NSURLErrorFailingURLStringErrorKey`'s value (the constant is deprecated on Linux).
  package static let failingURLString = "NSErrorFailingURLStringKey"
}
