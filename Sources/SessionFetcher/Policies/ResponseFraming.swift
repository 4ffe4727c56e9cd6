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
      // Every response is judged: the lists are read as bytes, without a `Character` or a
      // `CharacterSet`. A value that is not ASCII goes the `Character` way, where a comma and a
      // combining mark after it make one character.
      var value = value
      let judged = value.withUTF8 { bytes -> Judgement in
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return .notASCII }
        for item in bytes.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
          switch asciiLength(item) {
          case .empty: continue
          case .notANumber: return .notANumber
          case .length(let length):
            if let first, first != length { return .disagree }
            first = length
          }
        }
        return .agree
      }
      switch judged {
      case .agree: continue
      case .disagree: return true
      case .notANumber: return false
      case .notASCII:
        if let verdict = judgeByCharacters(value, first: &first) { return verdict }
      }
    }
    return false
  }

  private enum Judgement {
    case agree, disagree, notANumber, notASCII
  }

  private enum Item {
    case empty
    case notANumber
    case length(UInt64)
  }

  /// One item of a list, between optional spaces and tabs.
  private static func asciiLength(_ item: Slice<UnsafeBufferPointer<UInt8>>) -> Item {
    let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
    guard let start = item.firstIndex(where: { !isBlank($0) }) else { return .empty }
    let end = item.lastIndex(where: { !isBlank($0) })! + 1
    var length: UInt64 = 0
    for byte in item[start..<end] {
      guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return .notANumber }
      let (times10, overflow) = length.multipliedReportingOverflow(by: 10)
      let (sum, overflowAdding) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
      guard !overflow, !overflowAdding else { return .notANumber }
      length = sum
    }
    return .length(length)
  }

  /// The rule read by `Character`: nil to go on with the next value, else the verdict.
  private static func judgeByCharacters(_ value: String, first: inout UInt64?) -> Bool? {
    for item in value.split(separator: ",") {
      let text = item.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
      if text.isEmpty { continue }
      guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
        let length = UInt64(text)
      else { return false }
      if let first, first != length { return true }
      first = length
    }
    return nil
  }
}
