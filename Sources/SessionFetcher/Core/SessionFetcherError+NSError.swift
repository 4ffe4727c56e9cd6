import Foundation

extension SessionFetcherError: CustomNSError {
  /// The domain of a final HTTP status as an `NSError`: GTMSessionFetcher's
  /// `kGTMSessionFetcherStatusDomain`, `"com.google.HTTPStatus"`.
  public static let statusDomain = "com.google.HTTPStatus"

  /// The `userInfo` key of a status error's body (`Data`): GTM's `kGTMSessionFetcherStatusDataKey`,
  /// `"data"`. Absent when the response had no body.
  public static let statusDataKey = "data"

  /// GTM's `kGTMSessionFetcherStatusDataContentTypeKey`, `"data_content_type"`. This library's
  /// status errors do not carry it (see ``SessionFetcherError``): the content type is in the
  /// fetcher's ``SessionFetcher/responseHeaders``.
  public static let statusDataContentTypeKey = "data_content_type"

  /// ``statusDomain``, for every case: Foundation on Linux gives every value of an error type the
  /// type's domain, so a status could not keep GTM's domain otherwise. The library's own errors
  /// are told apart by their negative ``errorCode``.
  public static var errorDomain: String { statusDomain }

  /// The HTTP status of ``status(code:data:)``; a negative code of the library's own for the other
  /// cases (the table in ``SessionFetcherError``).
  public var errorCode: Int {
    switch self {
    case .status(let code, _): return code
    case .downloadFailed: return -1
    case .insecureRequest: return -5
    case .cancelled: return -7
    case .invalidURL: return -100
    case .bodyUnavailable: return -101
    case .invalidConfiguration: return -102
    case .authorizationFailed: return -103
    case .streamInterrupted: return -104
    case .responseTooLarge: return -105
    case .engineUnavailable: return -106
    case .unsupportedByEngine: return -107
    case .invalidTLSSettings: return -108
    }
  }

  /// ``description`` under `NSLocalizedDescriptionKey` (Foundation on Linux does not add it for a
  /// `CustomNSError`); a status's body under ``statusDataKey`` when it is not empty; a refused
  /// URL under `NSURLErrorFailingURLErrorKey`.
  public var errorUserInfo: [String: Any] {
    var info: [String: Any] = [NSLocalizedDescriptionKey: description]
    switch self {
    case .status(_, let data?) where !data.isEmpty:
      info[Self.statusDataKey] = data
    case .insecureRequest(let url):
      info[NSURLErrorFailingURLErrorKey] = url
    default:
      break
    }
    return info
  }
}
