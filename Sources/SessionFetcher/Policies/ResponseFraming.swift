import Foundation

/// Framing a response may not use: `Content-Length` fields that name different lengths, whether as
/// repeated fields or as one comma-separated list (RFC 9112 §6.3: the framing is invalid, and a
/// user agent must not use the response). Repeats of one length are allowed. A value that is not a
/// number is not judged here: both engines' libcurl refuses it.
///
/// The URLSession engine applies the same rule in its header gate (CCurl), before
/// FoundationNetworking sees the head.
package enum ResponseFraming {
  /// Whether `values` (each a field value, possibly a list) name more than one length.
  package static func contentLengthsDisagree(_ values: [String]) -> Bool {
    var first: UInt64?
    for value in values {
      for item in value.split(separator: ",") {
        let text = item.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        if text.isEmpty { continue }
        guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
          let length = UInt64(text)
        else { return false }
        if let first, first != length { return true }
        first = length
      }
    }
    return false
  }
}
