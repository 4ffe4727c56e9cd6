import FetcherService
import Foundation
import SessionFetcher
import SessionUploadFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The SDK's entry point: one `FetcherService` for every request it makes (its retry rules,
/// authorizer and callback queue reach every fetcher and upload the service makes), as a
/// GTMSessionFetcher SDK keeps one `GTMSessionFetcherService`.
final class StorageClient: Sendable {
  let service: FetcherService
  private let baseURL: URL

  init(baseURL: URL, authorizer: TokenAuthorizer) {
    self.baseURL = baseURL
    let service = FetcherService()
    service.callbackQueue = DispatchQueue(label: "storage client callbacks")
    // The example's server is plain http on loopback; a real SDK keeps https only.
    service.allowLocalhostRequest = true
    service.allowedInsecureSchemes = ["http"]
    service.isRetryEnabled = true
    service.minRetryInterval = 0.05
    // "Retry when offline", as the SDK's retry block did: the library's suggestion, plus any
    // connection that could not be made.
    service.retryBlock = { suggested, error, response in
      let offline = (error as? URLError).map {
        [.notConnectedToInternet, .cannotConnectToHost].contains($0.code)
      }
      response(suggested || offline == true)
    }
    service.authorizer = authorizer
    self.service = service
  }

  /// An object's metadata, as the server's JSON describes it.
  struct Metadata: Decodable, Sendable {
    let name: String
    let size: Int
    let contentType: String
  }

  func metadata(of name: String) async throws -> Metadata {
    let fetcher = service.fetcher(url: objectURL(name))
    do {
      let data = try await fetcher.beginFetch()
      return try JSONDecoder().decode(Metadata.self, from: data)
    } catch {
      throw StorageError(error, object: name)
    }
  }

  func objectURL(_ name: String) -> URL {
    baseURL.appendingPathComponent("\(StorageServer.bucket)/\(name)")
  }

  func mediaURL(_ name: String) -> URL {
    baseURL.appendingPathComponent("/download\(StorageServer.bucket)/\(name)")
  }

  func uploadStartURL(_ name: String) -> URL {
    baseURL.appendingPathComponent("/upload\(StorageServer.bucket)/\(name).location")
  }
}

/// The SDK's own errors, made from the fetcher's the way the GTM-based SDK made them: an `NSError`
/// in GTM's status domain carries the HTTP status as its code and the body under `"data"`.
enum StorageError: Error, CustomStringConvertible {
  case notFound(String)
  case unauthenticated
  case server(status: Int, message: String)
  case transport(any Error)

  init(_ error: any Error, object: String) {
    if error is TokenAuthorizer.SignedOut {
      self = .unauthenticated
      return
    }
    let nsError = error as NSError
    guard nsError.domain == SessionFetcherError.statusDomain, nsError.code > 0 else {
      self = .transport(error)
      return
    }
    let body = nsError.userInfo[SessionFetcherError.statusDataKey] as? Data
    switch nsError.code {
    case 404: self = .notFound(object)
    case 401: self = .unauthenticated
    default:
      self = .server(status: nsError.code, message: body.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }
  }

  var description: String {
    switch self {
    case .notFound(let name): "no such object: \(name)"
    case .unauthenticated: "not signed in"
    case .server(let status, let message): "server error \(status): \(message)"
    case .transport(let error): "transport error: \(error)"
    }
  }
}
