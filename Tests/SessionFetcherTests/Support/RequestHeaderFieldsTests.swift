import Foundation
import Testing

@testable import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite("Request header fields read once")
struct RequestHeaderFieldsTests {
  /// Header fields as a caller may set them, and names looked up in each.
  static let fieldSets: [[String: String]] = [
    [:],
    ["User-Agent": "a", "Accept": "*/*"],
    ["user-agent": "a", "CONNECTION": "close", "X-Empty": ""],
    // Names that differ only by ASCII case, both kept (set as a dictionary).
    ["X-Dup": "1", "x-dup": "2", "X-DUP": "3"],
    // Not ASCII: the Kelvin sign lowercases to "k", the capital E with acute to "é".
    ["\u{212A}ey": "kelvin", "Caf\u{c9}": "upper", "X-Caf\u{e9}": "lower"],
  ]
  static let names = [
    "User-Agent", "user-agent", "USER-AGENT", "Accept", "Connection", "X-Empty", "x-dup", "Key", "key",
    "caf\u{e9}", "CAF\u{c9}", "x-caf\u{c9}", "Range", "", "User-Agent ",
  ]

  @Test(arguments: fieldSets.indices)
  func lookupsAnswerAsTheRequestDoes(_ index: Int) {
    var request = URLRequest(url: URL(string: "http://127.0.0.1/")!)
    request.allHTTPHeaderFields = Self.fieldSets[index]
    let headers = RequestHeaderFields(request)
    #expect(headers.all == (request.allHTTPHeaderFields ?? [:]))
    if index == Self.fieldSets.count - 1 {
      // The fields that only `lowercased()` matches are there to be found.
      #expect(headers.value("KEY") == "kelvin" && headers.value("caf\u{e9}") == "upper")
    }
    for name in Self.names {
      #expect(headers.value(name) == request.value(forHTTPHeaderField: name), "\(name)")
    }
  }
}
