import Foundation

/// What built-in routes may use besides the request: the server's address, its stop signal (to
/// sleep interruptibly) and the per-key attempt counters of `/fail-first`.
struct RouteContext {
  /// `http://host:port`, for absolute `Location`s.
  var baseURL: URL
  var stopSignal: StopSignal
  /// Counts one more request for a `/fail-first` key and returns its 1-based attempt number.
  var nextAttempt: (String) -> Int
}

extension RecordedRequest {
  /// The query parameter `name` as an `Int`, or `fallback` when absent or not a number.
  func intParameter(_ name: String, default fallback: Int) -> Int {
    query[name].flatMap { Int($0.trimmingHTTPWhitespace()) } ?? fallback
  }

  /// The query parameter `name` as a `Double`, or `fallback` when absent or not a number.
  func doubleParameter(_ name: String, default fallback: Double) -> Double {
    query[name].flatMap { Double($0.trimmingHTTPWhitespace()) } ?? fallback
  }

  /// Whether the query parameter `name` is `1` or `true`.
  func flagParameter(_ name: String) -> Bool {
    guard let value = query[name]?.lowercased() else { return false }
    return value == "1" || value == "true" || value == "yes"
  }

  /// The path split at `/`, each component percent-decoded: `/a/b%20c` → `["a", "b c"]`.
  var decodedPathComponents: [String] {
    path.split(separator: "/", omittingEmptySubsequences: true).map {
      RequestTarget.percentDecoded($0)
    }
  }
}
