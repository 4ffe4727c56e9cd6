// libFuzzer target for the rule every request passes before it is sent (`RequestValidation`).
//
// Run: `Fuzz/run.sh 60 RequestBuildingFuzzer` (seeds in Fuzz/Corpus/RequestBuilding; see
// Fuzz/README.md).
//
// The input is split at 0xFF bytes: the first piece is the method, the others alternate header
// names and values. The target builds the `URLRequest` a caller would, asks the rule about it, and
// traps (a finding) when the rule accepts anything that would put a CR, LF, NUL or other control
// on the wire, when it refuses a request whose every part is well formed, or when its message holds
// a line break.

import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// RFC 9110 `tchar`, written out again independently of the library.
private let tokenBytes: Set<UInt8> = Set("!#$%&'*+-.^_`|~".utf8)
  .union(UInt8(ascii: "0")...UInt8(ascii: "9"))
  .union(UInt8(ascii: "a")...UInt8(ascii: "z"))
  .union(UInt8(ascii: "A")...UInt8(ascii: "Z"))

private func isToken(_ text: String) -> Bool {
  !text.utf8.isEmpty && text.utf8.allSatisfy(tokenBytes.contains)
}

private func isSafeValue(_ text: String) -> Bool {
  text.unicodeScalars.allSatisfy { scalar in
    scalar.value == 0x09
      || (scalar.value >= 0x20 && scalar.value != 0x7F && !(0x80...0x9F).contains(scalar.value))
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func requestBuildingFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  let pieces = bytes.split(separator: 0xFF, omittingEmptySubsequences: false).map {
    String(decoding: $0, as: UTF8.self)
  }
  guard let method = pieces.first else { return 0 }

  // The single-field checks agree with the independent definitions.
  precondition(RequestValidation.isToken(method) == isToken(method), "isToken disagrees on the method")
  for piece in pieces.dropFirst() {
    precondition(RequestValidation.isToken(piece) == isToken(piece), "isToken disagrees")
    precondition(RequestValidation.isValidHeaderValue(piece) == isSafeValue(piece), "value check disagrees")
  }

  var request = URLRequest(url: URL(string: "http://127.0.0.1:9/")!)
  request.httpMethod = method
  var index = 1
  while index + 1 < pieces.count {
    request.setValue(pieces[index + 1], forHTTPHeaderField: pieces[index])
    index += 2
  }

  let problem = RequestValidation.problem(in: request)
  let headers = request.allHTTPHeaderFields ?? [:]
  let wellFormed =
    (request.httpMethod.map(isToken) ?? true)
    && headers.allSatisfy { isToken($0.key) && isSafeValue($0.value) }
  precondition((problem == nil) == wellFormed, "the rule \(problem == nil ? "accepts" : "refuses") wrongly")
  if let problem {
    precondition(!problem.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }, "line break in the message")
    return 0
  }
  // Accepted: the head as an engine writes it has exactly one line per field and no control but tab.
  var head = "\(request.httpMethod ?? "GET") / HTTP/1.1\r\n"
  for (name, value) in headers { head += "\(name): \(value)\r\n" }
  var lines = 0
  var previous: UInt8 = 0
  for byte in head.utf8 {
    if byte == 0x0A {
      precondition(previous == 0x0D, "bare LF in an accepted head")
      lines += 1
    } else if byte == 0x0D {
      // Only as the end of a line (checked with the LF that follows).
    } else {
      precondition(previous != 0x0D, "bare CR in an accepted head")
      precondition(byte == 0x09 || (byte >= 0x20 && byte != 0x7F), "control byte \(byte) in an accepted head")
    }
    previous = byte
  }
  precondition(lines == headers.count + 1, "an accepted head has \(lines) lines for \(headers.count) fields")
  return 0
}
