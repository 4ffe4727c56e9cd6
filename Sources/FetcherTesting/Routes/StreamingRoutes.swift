import Foundation

/// The streaming routes: `/sse` (server-sent events) and `/stream` (a slow chunked body).
enum StreamingRoutes {
  /// `/sse?events=N&interval=MS&id=FIRST&retry=MS&dropAfter=K&event=TYPE`: N events numbered from
  /// FIRST (default 1), or from one past the request's `Last-Event-ID`; each event
  /// `id: n`, optional `event: TYPE`, `data: event n`, then an empty line; one event per chunk,
  /// MS milliseconds apart (default 0). `retry=MS` sends `retry: MS` first. `dropAfter=K` closes the
  /// connection (without the final chunk) after K events.
  static func sse(_ request: RecordedRequest) -> ResponsePlan {
    let count = max(0, request.intParameter("events", default: 3))
    var first = request.intParameter("id", default: 1)
    if let last = request.header("Last-Event-ID").flatMap({ Int($0) }) { first = last + 1 }
    let end = request.intParameter("id", default: 1) + count
    var pieces: [String] = []
    if let retry = request.query["retry"] { pieces.append("retry: \(retry)\n\n") }
    let type = request.query["event"]
    for number in first..<max(first, end) {
      pieces.append("id: \(number)\n\(type.map { "event: \($0)\n" } ?? "")data: event \(number)\n\n")
    }
    var plan = ResponsePlan(
      status: 200,
      headers: [
        HTTPHeader(name: "Content-Type", value: "text/event-stream"),
        HTTPHeader(name: "Cache-Control", value: "no-cache"),
      ])
    if let dropAfter = request.query["dropAfter"].flatMap({ Int($0) }) {
      let kept = (request.query["retry"] == nil ? 0 : 1) + max(0, dropAfter)
      if kept < pieces.count {
        pieces = Array(pieces.prefix(kept))
        plan.ending = .close
      }
    }
    var body = Data()
    var ends: [Int] = []
    for piece in pieces {
      body.append(Data(piece.utf8))
      ends.append(body.count)
    }
    plan.body = .data(body)
    plan.chunkSize = max(1, body.count)
    plan.pieceEnds = ends
    plan.pieces = max(1, ends.count)
    plan.pieceInterval = max(0, request.doubleParameter("interval", default: 0)) / 1000
    return plan
  }

  /// `/stream?bytes=N&chunkSize=S&interval=MS`: N pattern bytes, chunked, in chunks of S bytes
  /// (default 16384) sent MS milliseconds apart (default 10).
  static func stream(_ request: RecordedRequest) -> ResponsePlan {
    let count = max(0, request.intParameter("bytes", default: 65_536))
    let size = max(1, request.intParameter("chunkSize", default: 16_384))
    var plan = ResponsePlan(
      status: 200,
      headers: [HTTPHeader(name: "Content-Type", value: "application/octet-stream")],
      body: .pattern(offset: 0, count: count))
    plan.chunkSize = size
    plan.pieces = max(1, (count + size - 1) / size)
    plan.pieceInterval = max(0, request.doubleParameter("interval", default: 10)) / 1000
    return plan
  }
}
