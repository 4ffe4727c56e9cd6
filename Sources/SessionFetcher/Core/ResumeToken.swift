import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A part file kept for a later attempt or fetcher: the resume token's content.
///
/// Version 1 tokens (no request fields) are still read: they continue a GET without headers.
/// Version 2 adds the request's method and headers, credentials excepted (see
/// ``ResumeToken/isCredentialHeader(_:)``), and the URL the fetcher was made with.
struct ParkedDownload: Codable, Equatable, Sendable {
  static let currentVersion = 2
  var version = ParkedDownload.currentVersion
  /// The part file beside the destination.
  var partFileURL: URL
  var destination: URL
  /// The URL the bytes came from (after redirects).
  var sourceURL: URL
  var validator: DownloadValidator
  /// Bytes in the part file.
  var length: Int64
  /// The URL of the request the download began with (nil in version 1 tokens).
  var requestURL: URL?
  /// The request's method (nil in version 1 tokens: GET).
  var method: String?
  /// The request's headers without credentials (nil in version 1 tokens).
  var headers: [String: String]?
}

/// Reading and writing resume tokens. A token is data from outside the process (an app stores it
/// on disk, where others may change it): nothing in it is trusted as a path to touch until it was
/// checked to name one of the fetcher's own part files (``isPartFileName(_:for:)``)
/// beside its destination, as a regular file of its own.
package enum ResumeToken {
  /// Why a token was refused.
  enum Refusal: Error, Equatable, CustomStringConvertible {
    case notAToken
    case unsupportedVersion(Int)
    case unsupportedMethod(String)
    case notAPartFile(String)
    case destinationIsNotAFile(String)

    var description: String {
      switch self {
      case .notAToken: return "the data is not a resume token"
      case .unsupportedVersion(let version): return "the resume token's version \(version) is not supported"
      case .unsupportedMethod(let method): return "a resume token continues a GET, not a \(method)"
      case .notAPartFile(let path):
        return "the resume token names \(path), which is not one of its part files"
      case .destinationIsNotAFile(let path): return "the resume token's destination \(path) is not a file"
      }
    }
  }

  /// Header names (lowercased) never written into a token: credentials (the service, the
  /// authorizer or the caller set them again), and what the fetcher sets itself.
  static let excludedHeaders: Set<String> = [
    "authorization", "proxy-authorization", "cookie", "cookie2", "x-api-key", "x-auth-token",
    "x-access-token", "x-csrf-token", "x-xsrf-token", "x-goog-api-key", "x-amz-security-token", "api-key",
    "range", "if-range", "user-agent",
  ]

  /// Name words (between `-` and `_`) that mark a header as a credential.
  static let credentialWords: Set<String> = [
    "auth", "authorization", "authentication", "token", "secret", "password", "passwd", "cookie",
    "session", "key", "apikey", "credential", "credentials", "signature",
  ]

  /// Whether a header named `name` carries a credential and stays out of a token: the usual
  /// credential headers, and any name with a word such as `token`, `secret`, `key` or `session`
  /// (`X-Session-Id`, `X-Upload-Token`, `X-MyApp-Key`).
  package static func isCredentialHeader(_ name: String) -> Bool {
    let lowered = name.lowercased()
    if excludedHeaders.contains(lowered) { return true }
    let words = lowered.split { $0 == "-" || $0 == "_" }
    return words.contains { word in
      credentialWords.contains(String(word)) || word.hasSuffix("token") || word.hasSuffix("secret")
    }
  }

  /// The headers of `request` a token keeps.
  static func storedHeaders(of request: URLRequest) -> [String: String] {
    (request.allHTTPHeaderFields ?? [:]).filter { !isCredentialHeader($0.key) }
  }

  static func encode(_ parked: ParkedDownload) -> Data? {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return try? encoder.encode(parked)
  }

  /// Decodes `data` and checks what it names: the part file must be a `.<name>.<UUID>.part` file in
  /// the destination's own folder (no `.` or `..` in either path), and, when it exists, a regular
  /// file with one link (not a symlink, a folder nor a hard link to a file elsewhere); the
  /// destination, when it exists, must not be a folder. `length` is set to the part file's size
  /// (0 when there is none).
  static func decode(_ data: Data) -> Result<ParkedDownload, Refusal> {
    guard var parked = try? JSONDecoder().decode(ParkedDownload.self, from: data) else {
      return .failure(.notAToken)
    }
    guard (1...ParkedDownload.currentVersion).contains(parked.version) else {
      return .failure(.unsupportedVersion(parked.version))
    }
    let method = (parked.method ?? "GET").uppercased()
    guard method == "GET" else { return .failure(.unsupportedMethod(method)) }
    let part = parked.partFileURL
    let destination = parked.destination
    guard isPlainAbsoluteFilePath(part), isPlainAbsoluteFilePath(destination),
      part.deletingLastPathComponent().standardizedFileURL.path
        == destination.deletingLastPathComponent().standardizedFileURL.path,
      isPartFileName(part.lastPathComponent, for: destination)
    else { return .failure(.notAPartFile(part.path)) }
    switch PartFile.kind(of: destination) {
    case .absent, .regular: break
    case .other: return .failure(.destinationIsNotAFile(destination.path))
    }
    switch PartFile.kind(of: part) {
    case .absent:
      parked.length = 0
    case .regular(let size):
      parked.length = size
    case .other:
      return .failure(.notAPartFile(part.path))
    }
    return .success(parked)
  }

  /// Whether `name` is the name a part file for `destination` gets: `.<name>.<UUID>.part`.
  package static func isPartFileName(_ name: String, for destination: URL) -> Bool {
    let prefix = ".\(destination.lastPathComponent)."
    let suffix = ".part"
    guard !destination.lastPathComponent.isEmpty, destination.lastPathComponent != "/",
      name.hasPrefix(prefix), name.hasSuffix(suffix), name.count > prefix.count + suffix.count
    else { return false }
    let uuid = name.dropFirst(prefix.count).dropLast(suffix.count)
    return UUID(uuidString: String(uuid)) != nil
  }

  /// A file URL with an absolute path and no `.` or `..` component.
  static func isPlainAbsoluteFilePath(_ url: URL) -> Bool {
    guard url.isFileURL, url.path.hasPrefix("/") else { return false }
    return !url.path.split(separator: "/").contains { $0 == "." || $0 == ".." }
  }

  /// The request a token continues: a GET of its source URL with its headers.
  static func request(for parked: ParkedDownload) -> URLRequest {
    var request = URLRequest(url: parked.sourceURL)
    request.httpMethod = parked.method ?? "GET"
    for (name, value) in parked.headers ?? [:] where !isCredentialHeader(name) {
      request.setValue(value, forHTTPHeaderField: name)
    }
    return request
  }
}
