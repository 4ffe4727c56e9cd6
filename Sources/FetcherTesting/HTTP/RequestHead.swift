/// The request line and header fields of one request, parsed and validated.
struct RequestHead: Equatable {
  /// How the request body is delimited.
  enum BodyFraming: Equatable {
    case none
    case contentLength(Int)
    case chunked
  }

  var method: String
  var target: String
  var version: String
  var headers: [HTTPHeader]

  /// Parses the bytes of a request head, up to but not including the blank line that ends it.
  /// Lines end in CRLF (a bare LF is tolerated).
  init(parsing bytes: some Collection<UInt8>) throws(ConnectionError) {
    var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
      .map { line -> ArraySlice<UInt8> in
        var line = ArraySlice(line)
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return line
      }
    // RFC 9112 §2.2: a server should ignore at least one empty line before the request line.
    while lines.first?.isEmpty == true { lines.removeFirst() }
    while lines.last?.isEmpty == true { lines.removeLast() }
    guard let requestLine = lines.first else { throw .badRequest("empty request") }

    let parts = requestLine.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
    guard parts.count == 3, let method = RequestHead.token(parts[0]),
      let target = RequestHead.visibleASCII(parts[1]), let version = RequestHead.visibleASCII(parts[2])
    else { throw .badRequest("malformed request line") }
    guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
      throw .badRequest("unsupported version \(version)")
    }
    guard
      target.hasPrefix("/") || target.hasPrefix("http://") || target.hasPrefix("https://")
        || target == "*"
    else { throw .badRequest("malformed request-target") }

    var headers: [HTTPHeader] = []
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
        let name = RequestHead.token(line[line.startIndex..<colon])
      else { throw .badRequest("malformed header field") }
      let rawValue = line[(colon + 1)...]
      guard !rawValue.contains(where: { $0 < 0x20 && $0 != 0x09 || $0 == 0x7F }) else {
        throw .badRequest("control character in header \(name)")
      }
      let value = String(decoding: rawValue, as: UTF8.self).trimmingHTTPWhitespace()
      headers.append(HTTPHeader(name: name, value: value))
    }
    self.method = method
    self.target = target
    self.version = version
    self.headers = headers
  }

  /// The body framing the headers announce (RFC 9112 §6.3).
  func bodyFraming() throws(ConnectionError) -> BodyFraming {
    let transferEncodings = headers.values(named: "Transfer-Encoding")
    if !transferEncodings.isEmpty {
      let codings = transferEncodings.flatMap { $0.split(separator: ",") }
        .map { String($0).trimmingHTTPWhitespace().lowercased() }
      guard codings.last == "chunked", codings.filter({ $0 == "chunked" }).count == 1 else {
        throw .badRequest("unsupported Transfer-Encoding")
      }
      guard codings.allSatisfy({ $0 == "chunked" || $0 == "identity" }) else {
        throw .badRequest("unsupported Transfer-Encoding")
      }
      return .chunked
    }
    let lengths = headers.values(named: "Content-Length").flatMap { $0.split(separator: ",") }
      .map { String($0).trimmingHTTPWhitespace() }
    guard let first = lengths.first else { return .none }
    guard lengths.allSatisfy({ $0 == first }), !first.isEmpty, first.count <= 18,
      first.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
      let length = Int(first)
    else { throw .badRequest("invalid Content-Length") }
    return length == 0 ? .none : .contentLength(length)
  }

  /// Whether the client asked to keep the connection open after this exchange.
  var wantsKeepAlive: Bool {
    let options = headers.values(named: "Connection").flatMap { $0.split(separator: ",") }
      .map { String($0).trimmingHTTPWhitespace().lowercased() }
    if options.contains("close") { return false }
    if version == "HTTP/1.0" { return options.contains("keep-alive") }
    return true
  }

  /// Whether the client waits for `100 Continue` before sending the body.
  var expectsContinue: Bool {
    version == "HTTP/1.1"
      && headers.values(named: "Expect").contains { $0.equalsIgnoringASCIICase("100-continue") }
  }

  private static func token(_ bytes: some Collection<UInt8>) -> String? {
    guard !bytes.isEmpty, bytes.allSatisfy(isTokenCharacter) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
  }

  private static func visibleASCII(_ bytes: some Collection<UInt8>) -> String? {
    guard !bytes.isEmpty, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
  }

  private static func isTokenCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default:
      return "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
  }
}

extension String {
  /// Removes leading and trailing spaces and horizontal tabs (HTTP's optional whitespace).
  func trimmingHTTPWhitespace() -> String {
    var scalars = Substring(self)
    while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
    while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
    return String(scalars)
  }
}
