import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A request's header fields read out once, for several lookups by name.
///
/// On Linux `URLRequest.value(forHTTPHeaderField:)` copies the fields out of the request and
/// compares every name with `lowercased()` on both sides, for each lookup; ``value(_:)`` answers
/// exactly what it would (the same fields, the same order, the same match), comparing by ASCII case
/// first and by `lowercased()` only where a name is not ASCII.
package struct RequestHeaderFields {
  #if canImport(FoundationNetworking)
    private let fields: [String: String]
  #else
    private let request: URLRequest
  #endif

  /// The header fields of `request`.
  package init(_ request: URLRequest) {
    #if canImport(FoundationNetworking)
      fields = request.allHTTPHeaderFields ?? [:]
    #else
      self.request = request
    #endif
  }

  /// The fields as `URLRequest.allHTTPHeaderFields` gives them (none: empty).
  package var all: [String: String] {
    #if canImport(FoundationNetworking)
      fields
    #else
      request.allHTTPHeaderFields ?? [:]
    #endif
  }

  /// What `URLRequest.value(forHTTPHeaderField:)` answers for `name`.
  package func value(_ name: String) -> String? {
    #if canImport(FoundationNetworking)
      guard !fields.isEmpty else { return nil }
      let nameIsASCII = Self.isASCII(name)
      var lowercasedName: String?
      for (key, value) in fields {
        // Equal but for ASCII case: their `lowercased()` forms are equal too.
        if key.equalsIgnoringASCIICase(name) { return value }
        // Two ASCII names that differ by more than ASCII case: so do their `lowercased()` forms.
        if nameIsASCII && Self.isASCII(key) { continue }
        if lowercasedName == nil { lowercasedName = name.lowercased() }
        if key.lowercased() == lowercasedName { return value }
      }
      return nil
    #else
      return request.value(forHTTPHeaderField: name)
    #endif
  }

  private static func isASCII(_ text: String) -> Bool {
    text.utf8.withContiguousStorageIfAvailable { bytes in bytes.allSatisfy { $0 < 0x80 } }
      ?? text.utf8.allSatisfy { $0 < 0x80 }
  }
}
