import Foundation

/// The response head of one exchange as the fetcher keeps it: a `URLResponse` an engine or a test
/// block made, or an engine's ``ParsedResponseHead`` with its `HTTPURLResponse` made only when
/// something asks for ``response``.
///
/// Making FoundationNetworking's `HTTPURLResponse` canonicalizes every header name through
/// `NSString` and parses `Content-Type` one scalar at a time, a large share of a small GET's cost.
/// The fetcher's own decisions (the status, `Set-Cookie`,
/// `Content-Encoding`, `Content-Length`, `WWW-Authenticate`, `ETag`) read the parsed head instead.
/// ``response`` is made once, on first use, by the same call the engine made before, and the same
/// object is returned from then on, so whoever sees it sees what they saw before.
///
/// ``value(forHTTPHeaderField:)`` and ``expectedContentLength`` answer exactly what the
/// `HTTPURLResponse` would: when the head cannot tell without it (a name received in two spellings,
/// whose value FoundationNetworking picks by dictionary order, or a name that is not ASCII), they
/// make the response and ask it.
///
/// `@unchecked Sendable`: the `URLResponse`, made once under `made`'s lock, is immutable once
/// made (every property read-only), so sharing it between threads is safe; only its `Sendable`
/// conformance differs between Apple's Foundation and swift-corelibs-foundation.
package final class ResponseHead: @unchecked Sendable {
  /// The HTTP status code; nil when the response is not an `HTTPURLResponse`.
  package let statusCode: Int?
  /// The head as the engine parsed it, nil when the response was made already.
  private let parsed: ParsedResponseHead?
  /// The URL of the response.
  package let url: URL?
  // `Locked`, not `Mutex`: the package builds for macOS 13, and `Mutex` needs macOS 15.
  private let made: Locked<URLResponse?>

  /// The head of a response already made (the URLSession engine, a test block, a cache).
  package init(_ response: URLResponse) {
    statusCode = (response as? HTTPURLResponse)?.statusCode
    parsed = nil
    url = response.url
    made = Locked(response)
  }

  /// The head an engine received for `url`; its `HTTPURLResponse` is made on first use.
  package init(parsed head: ParsedResponseHead, url: URL) {
    statusCode = head.statusCode
    parsed = head
    self.url = url
    made = Locked(nil)
  }

  /// The response, made now if it was not yet (always the same object).
  package var response: URLResponse {
    made.withLock { made in
      if let made { return made }
      let response = makeResponse()
      made = response
      return response
    }
  }

  /// ``response`` as an `HTTPURLResponse`, nil when it is not one.
  package var httpResponse: HTTPURLResponse? {
    statusCode == nil ? nil : response as? HTTPURLResponse
  }

  /// Whether ``response`` was made (for tests: the fetcher's own path must not make it).
  package var isResponseMade: Bool { made.withLock { $0 != nil } }

  private func makeResponse() -> URLResponse {
    // Only a parsed head gets here (a head made from a response holds it from the start).
    let url = url ?? URL(fileURLWithPath: "/")
    // `HTTPURLResponse.init` does not fail in FoundationNetworking; the plain response is a guard.
    return parsed?.response(url: url)
      ?? URLResponse(url: url, mimeType: nil, expectedContentLength: -1, textEncodingName: nil)
  }

  /// What `HTTPURLResponse.value(forHTTPHeaderField:)` answers for `name`; nil for a response that
  /// is not HTTP.
  package func value(forHTTPHeaderField name: String) -> String? {
    // A lookup by ASCII case is the one FoundationNetworking makes with `lowercased()` when both
    // names are ASCII.
    if let parsed, parsed.namesAreASCII {
      let (key, isASCII) = ParsedResponseHead.nameKey(name)
      if isASCII, case .found(let value) = parsed.joinedValue(named: name, key: key) { return value }
    }
    return httpResponse?.value(forHTTPHeaderField: name)
  }

  /// What `URLResponse.expectedContentLength` answers: the `Content-Length`, -1 when there is none
  /// or it is not a number.
  package var expectedContentLength: Int64 {
    if let parsed, parsed.namesAreASCII, case .found(let value) = parsed.joinedValue(named: "Content-Length")
    {
      return value.flatMap { Int64($0) } ?? -1
    }
    return response.expectedContentLength
  }
}
