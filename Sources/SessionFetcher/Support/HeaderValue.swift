/// What may go in an HTTP header value as it is.
package enum HeaderValue {
  /// Whether `value` can be sent in a header as it is: no control character but tab (the rule of
  /// ``RequestValidation/isValidHeaderValue(_:)``).
  package static func isPlain(_ value: String) -> Bool {
    RequestValidation.isValidHeaderValue(value)
  }
}
