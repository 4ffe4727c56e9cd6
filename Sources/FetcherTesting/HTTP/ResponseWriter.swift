import Foundation

/// Performs a ``ResponsePlan`` on a connection: builds the head, frames and paces the body.
///
/// Bytes go out through a 64 KiB buffer, so a head and a small body leave in one `send(2)` and a
/// large body (generated on the fly when it is the pattern) leaves in 64 KiB writes, never held
/// whole in memory.
struct ResponseWriter {
  static let writeSize = 64 * 1024

  let socket: ConnectionSocket
  let stopSignal: StopSignal

  /// Writes the head and, unless `omitBody` (a HEAD request) or the status forbids one, the body.
  ///
  /// - Parameter connectionHeader: the `Connection` value to add (`close`, `keep-alive`), if any.
  ///   - onSend: told the number of bytes of every write that reached the socket.
  func write(
    _ plan: ResponsePlan, omitBody: Bool, connectionHeader: String?, onSend: ((Int) -> Void)? = nil
  ) throws(ConnectionError) {
    let head = ResponseWriter.head(for: plan, connectionHeader: connectionHeader)
    let sendsBody = !omitBody && !plan.statusForbidsBody
    // A buffer the size of the whole response when it is small, so head and body leave in one
    // write; 64 KiB for large and chunked bodies.
    let wholeSize = sendsBody && plan.chunkSize == nil ? head.count + plan.body.count : head.count
    let capacity = sendsBody && plan.chunkSize != nil ? ResponseWriter.writeSize : wholeSize
    var output = OutputBuffer(
      socket: socket, capacity: min(max(capacity, 4096), ResponseWriter.writeSize))
    output.onSend = onSend
    try output.append(head)
    if sendsBody {
      try writeBody(of: plan, to: &output)
    }
    try output.flush()
  }

  /// Sends raw bytes (interim responses, garbage).
  func writeRaw(_ data: Data) throws(ConnectionError) {
    try socket.send(data)
  }

  static func head(for plan: ResponsePlan, connectionHeader: String?) -> Data {
    var head = "HTTP/1.1 \(plan.status) \(reasonPhrase(for: plan.status))\r\n"
    for field in plan.headers { head += "\(field.name): \(field.value)\r\n" }
    if !plan.statusForbidsBody {
      if plan.chunkSize != nil {
        if !plan.headers.contains(named: "Transfer-Encoding") { head += "Transfer-Encoding: chunked\r\n" }
      } else if !plan.headers.contains(named: "Content-Length") {
        head += "Content-Length: \(plan.announcedLength ?? plan.body.count)\r\n"
      }
    }
    if let connectionHeader, !plan.headers.contains(named: "Connection") {
      head += "Connection: \(connectionHeader)\r\n"
    }
    head += "\r\n"
    return Data(head.utf8)
  }

  private func writeBody(of plan: ResponsePlan, to output: inout OutputBuffer) throws(ConnectionError) {
    let total = plan.body.count
    let pieces = plan.pieceEnds?.count ?? max(1, min(plan.pieces, max(total, 1)))
    var position = 0
    for index in 0..<pieces {
      let pieceEnd = plan.pieceEnds.map { min(total, $0[index]) } ?? total * (index + 1) / pieces
      if index > 0 {
        try output.flush()
        if !stopSignal.sleep(seconds: plan.pieceInterval) { throw .stopped }
      }
      if let chunkSize = plan.chunkSize {
        try writeChunked(plan.body, from: position, to: pieceEnd, chunkSize: max(1, chunkSize), to: &output)
      } else {
        try writeBytes(plan.body, from: position, to: pieceEnd, to: &output)
      }
      position = pieceEnd
    }
    if plan.chunkSize != nil && plan.ending == .complete {
      try output.append(Data("0\r\n\r\n".utf8))
    }
  }

  private func writeChunked(
    _ body: ResponsePlan.Body, from start: Int, to end: Int, chunkSize: Int, to output: inout OutputBuffer
  ) throws(ConnectionError) {
    var position = start
    while position < end {
      // Chunk boundaries are multiples of chunkSize from the start of the body.
      let chunkEnd = min(end, (position / chunkSize + 1) * chunkSize)
      try output.append(Data("\(String(chunkEnd - position, radix: 16))\r\n".utf8))
      try writeBytes(body, from: position, to: chunkEnd, to: &output)
      try output.append(Data("\r\n".utf8))
      position = chunkEnd
    }
  }

  private func writeBytes(
    _ body: ResponsePlan.Body, from start: Int, to end: Int, to output: inout OutputBuffer
  ) throws(ConnectionError) {
    guard start < end else { return }
    switch body {
    case .empty:
      return
    case .data(let data):
      try data.withUnsafeBytes { all in
        Result { () throws(ConnectionError) in
          try output.append(UnsafeRawBufferPointer(rebasing: all[start..<end]))
        }
      }.get()
    case .pattern(let offset, _):
      var position = start
      while position < end {
        let count = min(PatternBytes.maximumPiece, end - position)
        try PatternBytes.withPiece(at: offset + position, count: count) { piece in
          Result { () throws(ConnectionError) in try output.append(piece) }
        }.get()
        position += count
      }
    case .repeating(let prefix, let unit, _, let suffix):
      let middleEnd = body.count - suffix.count
      try writeBytes(.data(prefix), from: start, to: min(end, prefix.count), to: &output)
      if unit.isEmpty == false, end > prefix.count, start < middleEnd {
        // Whole units side by side in a block of about 64 KiB, written slice by slice.
        let block = Data(Array(repeating: unit, count: max(1, 65_536 / unit.count)).joined())
        var position = max(start, prefix.count)
        let stop = min(end, middleEnd)
        while position < stop {
          let inBlock = (position - prefix.count) % block.count
          let count = min(block.count - inBlock, stop - position)
          try writeBytes(.data(block), from: inBlock, to: inBlock + count, to: &output)
          position += count
        }
      }
      if end > middleEnd {
        try writeBytes(.data(suffix), from: max(0, start - middleEnd), to: end - middleEnd, to: &output)
      }
    }
  }

  static func reasonPhrase(for status: Int) -> String {
    switch status {
    case 100: return "Continue"
    case 101: return "Switching Protocols"
    case 200: return "OK"
    case 201: return "Created"
    case 202: return "Accepted"
    case 203: return "Non-Authoritative Information"
    case 204: return "No Content"
    case 205: return "Reset Content"
    case 206: return "Partial Content"
    case 300: return "Multiple Choices"
    case 301: return "Moved Permanently"
    case 302: return "Found"
    case 303: return "See Other"
    case 304: return "Not Modified"
    case 307: return "Temporary Redirect"
    case 308: return "Permanent Redirect"
    case 400: return "Bad Request"
    case 401: return "Unauthorized"
    case 403: return "Forbidden"
    case 404: return "Not Found"
    case 405: return "Method Not Allowed"
    case 406: return "Not Acceptable"
    case 407: return "Proxy Authentication Required"
    case 408: return "Request Timeout"
    case 409: return "Conflict"
    case 410: return "Gone"
    case 411: return "Length Required"
    case 412: return "Precondition Failed"
    case 413: return "Content Too Large"
    case 414: return "URI Too Long"
    case 415: return "Unsupported Media Type"
    case 416: return "Range Not Satisfiable"
    case 417: return "Expectation Failed"
    case 422: return "Unprocessable Content"
    case 429: return "Too Many Requests"
    case 431: return "Request Header Fields Too Large"
    case 500: return "Internal Server Error"
    case 501: return "Not Implemented"
    case 502: return "Bad Gateway"
    case 503: return "Service Unavailable"
    case 504: return "Gateway Timeout"
    default: return "Status \(status)"
    }
  }
}

/// Accumulates outgoing bytes and sends them in writes of at most `capacity` bytes; a full-sized
/// piece arriving at an empty buffer is sent without copying.
struct OutputBuffer {
  private let socket: ConnectionSocket
  private let capacity: Int
  private var storage: [UInt8]
  private var used = 0
  /// Told the size of every send.
  var onSend: ((Int) -> Void)?

  init(socket: ConnectionSocket, capacity: Int) {
    self.socket = socket
    self.capacity = capacity
    storage = [UInt8](repeating: 0, count: capacity)
  }

  mutating func append(_ data: Data) throws(ConnectionError) {
    try data.withUnsafeBytes { buffer in
      Result { () throws(ConnectionError) in try append(buffer) }
    }.get()
  }

  mutating func append(_ buffer: UnsafeRawBufferPointer) throws(ConnectionError) {
    var remaining = buffer
    while !remaining.isEmpty {
      if used == 0 && remaining.count >= capacity {
        try socket.send(UnsafeRawBufferPointer(rebasing: remaining[..<capacity]))
        onSend?(capacity)
        remaining = UnsafeRawBufferPointer(rebasing: remaining[capacity...])
        continue
      }
      let piece = min(capacity - used, remaining.count)
      let destinationStart = used
      storage.withUnsafeMutableBytes { destination in
        UnsafeMutableRawBufferPointer(rebasing: destination[destinationStart..<(destinationStart + piece)])
          .copyMemory(from: UnsafeRawBufferPointer(rebasing: remaining[..<piece]))
      }
      used += piece
      remaining = UnsafeRawBufferPointer(rebasing: remaining[piece...])
      if used == capacity { try flush() }
    }
  }

  mutating func flush() throws(ConnectionError) {
    guard used > 0 else { return }
    let count = used
    used = 0
    try storage.withUnsafeBytes { buffer in
      Result { () throws(ConnectionError) in
        try socket.send(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
      }
    }.get()
    onSend?(count)
  }
}
