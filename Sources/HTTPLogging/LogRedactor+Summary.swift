import Foundation

extension LogRedactor {
  /// The parts of one request or response that a one-line log (swift-log, tracing attributes) shows,
  /// after redaction.
  public struct RedactedSummary: Sendable, Equatable {
    /// The URL with secret query items, fragment parameters and user-info password replaced.
    public var url: String?
    /// The header fields, secret values replaced (`Authorization` keeps its scheme).
    public var headers: [String: String]
    /// The free texts given (error descriptions, say), with every secret found scrubbed.
    public var texts: [String]
  }

  /// Redacts a URL, header fields and free texts of one fetch the way the file logs do: values found
  /// by name in any of them (sensitive headers, secret-looking query items, `name=value` pairs in
  /// the texts) are replaced, and each secret found is then scrubbed from all the others, since
  /// servers echo what they are sent.
  ///
  /// ```swift
  /// let summary = SessionFetcher.logRedactor.summary(
  ///   url: "https://api.example.com/v1?access_token=abc123", headers: ["Authorization": "Bearer abc123"])
  /// // summary.url == "https://api.example.com/v1?access_token=_snip_"
  /// ```
  ///
  /// - Parameters:
  ///   - url: the URL, as a string (nil when there is none).
  ///   - headers: header fields of the request or response.
  ///   - texts: other text that may echo a secret.
  /// - Returns: the redacted parts, in the same shape.
  public func summary(url: String?, headers: [String: String] = [:], texts: [String] = []) -> RedactedSummary
  {
    var secrets = SecretSet()
    var redactedHeaders: [String: String] = [:]
    for (name, value) in headers {
      redactedHeaders[name] = redactHeader(name: name, value: value, secrets: &secrets)
    }
    var redactedURL = url.map { redactURLString($0, secrets: &secrets) }
    var redactedTexts = texts.map { redactFreeText($0, secrets: &secrets) }
    let patterns = scrubPatterns(secrets)
    guard !patterns.isEmpty else {
      return RedactedSummary(url: redactedURL, headers: redactedHeaders, texts: redactedTexts)
    }
    redactedURL = redactedURL.map { scrub($0, patterns: patterns) }
    for (name, value) in redactedHeaders {
      redactedHeaders[name] = scrub(value, patterns: patterns)
    }
    redactedTexts = redactedTexts.map { scrub($0, patterns: patterns) }
    return RedactedSummary(url: redactedURL, headers: redactedHeaders, texts: redactedTexts)
  }
}
