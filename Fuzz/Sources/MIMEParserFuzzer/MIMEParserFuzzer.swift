// libFuzzer target for MIMEDocument's parser and generator.
//
// Each input is used three ways:
// 1. parsed as a document with the boundary "END_OF_PART", with copied bodies and with bodies that
//    share the input;
// 2. when it starts with a line of 1–70 bytes, parsed with that line as the boundary and the rest
//    as the document (so the fuzzer controls both), both ways again, the shared bodies then slices
//    of an input whose indices start past 0;
// 3. split at 0xFF bytes into part bodies, generated into a document (seeded boundary search) both
//    as Data and as a stream read in input-dependent chunk sizes, and parsed back: the parts must
//    round-trip exactly.
// Beyond not crashing, a broken promise traps (with a message saying which), which libFuzzer
// reports as a finding.

import Foundation
import MIMEDocument

@_cdecl("LLVMFuzzerTestOneInput")
public func mimeParserFuzzerTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  let input = bytes.map { Data(bytes: $0, count: size) } ?? Data()
  checkParse(boundary: "END_OF_PART", data: input)
  if let lineEnd = input.firstIndex(where: { $0 == 0x0D || $0 == 0x0A }), lineEnd > 0, lineEnd <= 70 {
    checkParse(
      boundary: String(decoding: input[..<lineEnd], as: UTF8.self), data: input[(lineEnd + 1)...])
  }
  checkRoundTrip(input)
  return 0
}

/// `precondition` drops its message in optimized builds; a finding should say what broke.
private func check(_ condition: Bool, _ message: @autoclosure () -> String = "a check failed") {
  if !condition { fatalError(message()) }
}

/// Parsing never crashes, and what it returns is consistent with its input; parts that share the
/// input (parsed from `data` itself, whose indices may start past 0) equal the copies, and each
/// shared body is the slice of `data` at its own indices.
private func checkParse(boundary: String, data: Data) {
  let parts = MIMEDocument.parts(boundary: boundary, data: Data(data))
  let shared = MIMEDocument.parts(boundary: boundary, data: data, sharingInput: true)
  check(
    shared?.map(\.headers) == parts?.map(\.headers) && shared?.map { Data($0.body) } == parts?.map(\.body),
    "parts sharing the input differ from the copies")
  for part in shared ?? [] where !part.body.isEmpty {
    check(
      data.indices.contains(part.body.startIndex) && data.indices.contains(part.body.endIndex - 1)
        && data[part.body.indices] == part.body,
      "a shared body is not the slice of the input at its indices")
  }
  checkStrictParse(boundary: boundary, data: data)
  guard let parts else { return }
  check(!parts.isEmpty, "parts(boundary:data:) returned an empty array instead of nil")
  check(parts.allSatisfy { $0.body.startIndex == 0 }, "a copied body is not indexed from 0")
  let bodyBytes = parts.reduce(0) { $0 + $1.body.count }
  check(bodyBytes <= data.count, "parsed bodies are larger than the document")
}

/// RFC 2046 parsing: throws or gives parts whose bodies are slices of the input, in order and
/// not overlapping; copies equal the slices.
private func checkStrictParse(boundary: String, data: Data) {
  guard let shared = try? MIMEDocument.parse(boundary: boundary, data: data, sharingInput: true) else {
    return
  }
  var end = data.startIndex
  for part in shared {
    check(
      part.body.startIndex >= end && part.body.endIndex <= data.endIndex,
      "a strictly parsed body is outside the input or overlaps the one before")
    end = part.body.endIndex
  }
  let copies = try? MIMEDocument.parse(boundary: boundary, data: Data(data))
  check(copies?.map(\.body) == shared.map { Data($0.body) }, "strict copies differ from the slices")
}

private func checkRoundTrip(_ input: Data) {
  let bodies = input.split(separator: 0xFF, omittingEmptySubsequences: false).prefix(16).map { Data($0) }
  let document = MIMEDocument()
  document.seedRandom(with: 1)
  var expected: [MIMEDocument.Part] = []
  for (index, body) in bodies.enumerated() {
    let headers = index % 2 == 0 ? [:] : ["Content-Type": "application/octet-stream", "X-Index": "\(index)"]
    document.appendPart(headers: headers, body: body)
    expected.append(MIMEDocument.Part(headers: headers, body: body))
  }
  let generated: (data: Data, boundary: String)
  do {
    generated = try document.generateData()
  } catch {
    fatalError("generateData failed: \(error)")
  }
  // The original's last resort (two seeded numbers) is not checked against the parts, so an input
  // may contain it on purpose; only then may the round trip fail.
  if bodies.contains(where: { $0.range(of: Data(generated.boundary.utf8)) != nil }) { return }
  check(
    MIMEDocument.parts(boundary: generated.boundary, data: generated.data) == expected,
    "a generated document did not parse back into its parts")
  check(
    (try? MIMEDocument.parse(boundary: generated.boundary, data: generated.data)) == expected,
    "a generated document did not parse back into its parts by RFC 2046")

  guard let (stream, length, boundary) = try? document.generateInputStream() else {
    fatalError("generateInputStream failed")
  }
  check(
    boundary == generated.boundary && length == Int64(generated.data.count),
    "the stream's boundary or length differs from generateData's")
  let chunkSize = 1 + input.count % 97
  var buffer = [UInt8](repeating: 0, count: chunkSize)
  var streamed = Data()
  stream.open()
  while true {
    let count = stream.read(&buffer, maxLength: chunkSize)
    check(count >= 0, "the stream failed on a Data-only document")
    if count == 0 { break }
    streamed.append(contentsOf: buffer[..<count])
  }
  stream.close()
  check(streamed == generated.data, "the stream and generateData disagree")
}
