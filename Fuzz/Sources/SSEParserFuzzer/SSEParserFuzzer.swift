// libFuzzer target for the server-sent events parser (`ServerSentEventParser`).
//
// Run with `Fuzz/run.sh 60 SSEParserFuzzer` (seeds in Corpus/SSE). The first input byte picks how
// the rest is cut into pieces; beyond not crashing, the target checks that the events do not depend
// on how the stream is split, and traps (a finding) when they do.

import Foundation
import SessionFetcher

@_cdecl("LLVMFuzzerTestOneInput")
public func sseParserFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  guard let selector = bytes.first else { return 0 }
  let stream = Data(bytes.dropFirst())

  // The default limits (16 MiB) are far above any input the fuzzer makes: parsing never throws.
  var whole = ServerSentEventParser()
  guard let expected = try? whole.parse(stream) else { preconditionFailure("the parser threw") }

  var pieces = ServerSentEventParser()
  var events: [ServerSentEvent] = []
  let step = Int(selector % 7) + 1
  var start = stream.startIndex
  while start < stream.endIndex {
    let end = min(stream.endIndex, start + step)
    guard let more = try? pieces.parse(stream[start..<end]) else { preconditionFailure("the parser threw") }
    events += more
    start = end
  }
  precondition(events == expected, "events depend on how the stream is split")
  precondition(pieces.lastEventID == whole.lastEventID, "last event ID depends on the split")
  precondition(pieces.reconnectionTime == whole.reconnectionTime, "retry depends on the split")
  for event in expected {
    precondition(!event.event.isEmpty, "empty event type")
    precondition(!(event.id ?? "x").isEmpty, "empty id instead of nil")
    precondition(!(event.id ?? "").contains("\u{0}"), "NUL in id")
  }
  return 0
}
