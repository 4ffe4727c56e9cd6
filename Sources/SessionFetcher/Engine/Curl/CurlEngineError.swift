/// Why a ``CurlEngine`` could not be made.
package enum CurlEngineError: Error, Equatable, CustomStringConvertible {
  /// libcurl cannot be used; the text says why (see ``CurlLibrary/unavailableReason``).
  case unavailable(String)

  package var description: String {
    switch self {
    case .unavailable(let reason): return "The libcurl engine is unavailable: \(reason)"
    }
  }
}
