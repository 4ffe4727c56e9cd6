import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#endif

/// A deliberately small blocking HTTP/1.1 client over a raw socket, so the server is tested
/// without URLSession (whose own behaviour is what the rest of the package tests).
///
/// Every read has a receive timeout, so a server bug makes a test fail, never hang.
final class RawHTTPClient {
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// A parsed response.
  struct Response {
    var status: Int
    var reason: String
    var headers: [(name: String, value: String)]
    var body: Data
    /// Whether the body was chunked.
    var wasChunked: Bool

    func header(_ name: String) -> String? {
      headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    func headerValues(_ name: String) -> [String] {
      headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed as a JSON object.
    var json: [String: Any] {
      (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }
  }

  /// How a read ended when the peer went away.
  enum EndOfStream: Equatable {
    case closed
    case reset
    case timedOut
  }

  private let descriptor: Int32
  private var buffer: [UInt8] = []
  private var isOpen = true

  /// Connects to `host`:`port` with `timeout` seconds for every receive.
  init(host: String = "127.0.0.1", port: UInt16, timeout: Double = 10) throws {
    let family = host.contains(":") ? AF_INET6 : AF_INET
    #if canImport(Darwin)
      let type = SOCK_STREAM
    #else
      let type = Int32(SOCK_STREAM.rawValue)
    #endif
    descriptor = socket(family, type, 0)
    guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
    var seconds = timeval()
    seconds.tv_sec = .init(timeout.rounded(.down))
    seconds.tv_usec = .init((timeout - timeout.rounded(.down)) * 1e6)
    _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
    _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
    #if canImport(Darwin)
      var one: Int32 = 1
      _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
    #endif
    let result: Int32
    if family == AF_INET6 {
      var address = sockaddr_in6()
      address.sin6_family = sa_family_t(AF_INET6)
      address.sin6_port = port.bigEndian
      inet_pton(AF_INET6, host, &address.sin6_addr)
      result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
      }
    } else {
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_port = port.bigEndian
      inet_pton(AF_INET, host, &address.sin_addr)
      result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
    guard result == 0 else {
      let error = errno
      // Every stored property is set, so `deinit` runs for this failed init too: closing here as
      // well would close the descriptor number twice, by then perhaps another test's socket.
      close()
      throw Failure(description: "connect: errno \(error)")
    }
  }

  deinit {
    if isOpen { posixClose(descriptor) }
  }

  func close() {
    guard isOpen else { return }
    isOpen = false
    posixClose(descriptor)
  }

  /// Sends bytes, all of them.
  func send(_ data: Data) throws {
    try data.withUnsafeBytes { raw in
      var offset = 0
      while offset < raw.count {
        #if canImport(Darwin)
          let flags: Int32 = 0
        #else
          let flags = Int32(MSG_NOSIGNAL)
        #endif
        let count = posixSend(descriptor, raw.baseAddress! + offset, raw.count - offset, flags)
        if count < 0 {
          if errno == EINTR { continue }
          throw Failure(description: "send: errno \(errno)")
        }
        offset += count
      }
    }
  }

  func send(_ text: String) throws {
    try send(Data(text.utf8))
  }

  /// Sends a request with a `Content-Length` body (when `body` is not nil).
  func sendRequest(
    _ method: String = "GET", _ target: String, headers: [String] = [], body: Data? = nil
  ) throws {
    var head = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
    for line in headers { head += line + "\r\n" }
    if let body { head += "Content-Length: \(body.count)\r\n" }
    head += "\r\n"
    try send(Data(head.utf8) + (body ?? Data()))
  }

  /// One request, one response.
  func request(
    _ method: String = "GET", _ target: String, headers: [String] = [], body: Data? = nil
  ) throws -> Response {
    try sendRequest(method, target, headers: headers, body: body)
    return try readResponse(method: method)
  }

  /// Receives more bytes into the buffer; returns how the stream ended if it did.
  @discardableResult
  func receiveMore() -> EndOfStream? {
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
      let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
      if count > 0 {
        buffer += chunk[0..<count]
        return nil
      }
      if count == 0 { return .closed }
      switch errno {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: return .timedOut
      case ECONNRESET: return .reset
      default: return .closed
      }
    }
  }

  /// Reads until the peer closes; returns what arrived and how it ended.
  func readUntilEnd(limit: Int = 1 << 30) -> (Data, EndOfStream) {
    while buffer.count < limit {
      if let end = receiveMore() {
        defer { buffer = [] }
        return (Data(buffer), end)
      }
    }
    defer { buffer = [] }
    return (Data(buffer), .timedOut)
  }

  /// Reads one line (without CRLF).
  func readLine() throws -> String {
    while true {
      if let newline = buffer.firstIndex(of: 10) {
        var line = Array(buffer[0..<newline])
        if line.last == 13 { line.removeLast() }
        buffer.removeFirst(newline + 1)
        return String(decoding: line, as: UTF8.self)
      }
      if let end = receiveMore() { throw Failure(description: "stream ended (\(end)) while reading a line") }
    }
  }

  /// Reads exactly `count` bytes, passing them to `consume` as they come (nothing kept).
  func readBytes(_ count: Int, consume: (ArraySlice<UInt8>) -> Void) throws {
    var remaining = count
    while remaining > 0 {
      if buffer.isEmpty, let end = receiveMore() {
        throw Failure(description: "stream ended (\(end)) with \(remaining) of \(count) bytes missing")
      }
      let piece = min(remaining, buffer.count)
      consume(buffer[0..<piece])
      buffer.removeFirst(piece)
      remaining -= piece
    }
  }

  /// Reads a status line and headers only.
  func readHead() throws -> Response {
    let statusLine = try readLine()
    let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
      throw Failure(description: "bad status line: \(statusLine)")
    }
    var headers: [(name: String, value: String)] = []
    while true {
      let line = try readLine()
      if line.isEmpty { break }
      guard let colon = line.firstIndex(of: ":") else { throw Failure(description: "bad header: \(line)") }
      headers.append(
        (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
    }
    return Response(
      status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers, body: Data(),
      wasChunked: false)
  }

  /// Reads a whole response. With `consumeBody`, body bytes are handed over instead of kept.
  func readResponse(method: String = "GET", consumeBody: ((ArraySlice<UInt8>) -> Void)? = nil) throws
    -> Response
  {
    var response = try readHead()
    var body = Data()
    let sink: (ArraySlice<UInt8>) -> Void = consumeBody ?? { body.append(contentsOf: $0) }
    let noBody =
      method == "HEAD" || response.status == 204 || response.status == 304
      || (100..<200).contains(response.status)
    if noBody {
      // Nothing to read.
    } else if response.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
      response.wasChunked = true
      while true {
        let sizeLine = try readLine()
        guard let size = Int(sizeLine.split(separator: ";")[0], radix: 16) else {
          throw Failure(description: "bad chunk size \(sizeLine)")
        }
        if size == 0 {
          while try !readLine().isEmpty {}
          break
        }
        try readBytes(size, consume: sink)
        guard try readLine().isEmpty else { throw Failure(description: "no CRLF after chunk") }
      }
    } else if let length = response.header("Content-Length").flatMap({ Int($0) }) {
      try readBytes(length, consume: sink)
    } else {
      let (rest, _) = readUntilEnd()
      sink(ArraySlice(rest))
    }
    response.body = body
    return response
  }

  /// Whether the server has closed the connection (reads EOF or RST within `timeout`).
  func waitForClose(timeout: Double = 5) -> EndOfStream {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if let end = receiveMore(), end != .timedOut { return end }
    }
    return .timedOut
  }
}

/// `close(2)` under a name the client's own `close()` does not shadow.
private func posixClose(_ descriptor: Int32) {
  _ = close(descriptor)
}

/// `send(2)` under a name the client's own `send(_:)` does not shadow.
private func posixSend(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int {
  send(descriptor, bytes, count, flags)
}
