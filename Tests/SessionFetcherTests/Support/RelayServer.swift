import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `send(2)` that never raises SIGPIPE: per call on Linux; Darwin has no such flag (the test
/// process ignores SIGPIPE there, as `TestServer` makes it).
private func sendWithoutSignal(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
  #if canImport(Glibc)
    send(fd, bytes, count, Int32(MSG_NOSIGNAL))
  #else
    send(fd, bytes, count, 0)
  #endif
}

/// A small in-process relay for transport tests, on raw sockets: an HTTP forward proxy
/// (absolute-form requests and CONNECT, optionally demanding Basic `Proxy-Authorization`), a SOCKS5
/// server (optionally demanding a username and password), or a Unix-socket listener forwarding to a
/// TCP port. It relays only to 127.0.0.1 and records what it was asked for.
final class RelayServer: @unchecked Sendable {
  enum Kind: Sendable {
    /// An HTTP proxy; `login` ("user:password") makes it answer 407 to requests without it.
    case httpProxy(login: String?)
    /// A SOCKS5 server; `login` requires username/password authentication; `closeAfterGreeting`
    /// closes the connection after reading the client's greeting.
    case socks5(login: (user: String, password: String)?, closeAfterGreeting: Bool = false)
    /// A Unix socket at `path` whose connections are relayed to 127.0.0.1:`port`.
    case unixForward(path: String, port: UInt16)
  }

  /// The TCP port (0 for a Unix-socket listener).
  let port: UInt16
  private let kind: Kind
  private let listener: Int32
  /// Guards the fields below; signalled when a relay thread ends, which ``stop()`` waits for.
  private let lock = NSCondition()
  private var stopped = false
  private var threads = 0
  private var recorded: [String] = []

  init(_ kind: Kind) throws {
    self.kind = kind
    if case .unixForward(let path, _) = kind {
      listener = try Self.listenUnix(path: path)
      port = 0
    } else {
      (listener, port) = try Self.listenLoopback()
    }
    spawn { [self] in acceptLoop() }
  }

  deinit { stop() }

  /// What the relay was asked for, in order: "GET http://…", "CONNECT host:port", "407",
  /// "socks host:port", "socks login rejected", "unix".
  var log: [String] { lock.withLock { recorded } }

  /// Stops accepting; relays in progress end within a fraction of a second. Waits up to 5 s.
  func stop() {
    lock.withLock { stopped = true }
    let deadline = Date().addingTimeInterval(5)
    lock.withLock {
      while threads > 0 && lock.wait(until: deadline) {}
    }
    if case .unixForward(let path, _) = kind { unlink(path) }
  }

  private var isStopped: Bool { lock.withLock { stopped } }

  private func record(_ line: String) { lock.withLock { recorded.append(line) } }

  private func spawn(_ body: @escaping @Sendable () -> Void) {
    lock.withLock { threads += 1 }
    let thread = Thread { [self] in
      body()
      lock.withLock {
        threads -= 1
        lock.broadcast()
      }
    }
    thread.start()
  }

  // MARK: Sockets

  private static var streamType: Int32 {
    #if canImport(Glibc)
      Int32(SOCK_STREAM.rawValue)
    #else
      SOCK_STREAM
    #endif
  }

  private static func listenLoopback() throws -> (Int32, UInt16) {
    let fd = socket(AF_INET, streamType, 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
      }
    }
    guard fd >= 0, ok, listen(fd, 64) == 0 else {
      close(fd)
      throw PortUnavailable(description: "relay: cannot listen on 127.0.0.1 (errno \(errno))")
    }
    return (fd, UInt16(bigEndian: address.sin_port))
  }

  private static func unixAddress(_ path: String) -> sockaddr_un {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
    }
    return address
  }

  private static func listenUnix(path: String) throws -> Int32 {
    unlink(path)
    let fd = socket(AF_UNIX, streamType, 0)
    var address = unixAddress(path)
    let ok = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
      }
    }
    guard fd >= 0, ok, listen(fd, 64) == 0 else {
      close(fd)
      throw PortUnavailable(description: "relay: cannot listen on \(path) (errno \(errno))")
    }
    return fd
  }

  /// A connected socket to 127.0.0.1:`port`, or -1.
  private static func connectLoopback(port: UInt16) -> Int32 {
    let fd = socket(AF_INET, streamType, 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let ok = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
    if !ok {
      close(fd)
      return -1
    }
    return fd
  }

  private func acceptLoop() {
    defer { close(listener) }
    while !isStopped {
      var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, 100) > 0 else { continue }
      let client = accept(listener, nil, nil)
      guard client >= 0 else { continue }
      spawn { [self] in
        var connection = Connection(fd: client, relay: self)
        serve(&connection)
        close(client)
      }
    }
  }

  /// A client connection with the bytes read past what was taken.
  struct Connection {
    let fd: Int32
    let relay: RelayServer
    var pending = Data()

    /// Reads more; false at the end, an error or a stop.
    mutating func fill() -> Bool {
      while !relay.isStopped {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 100) > 0 else { continue }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return false }
        pending.append(contentsOf: buffer[0..<count])
        return true
      }
      return false
    }

    mutating func take(_ count: Int) -> Data? {
      while pending.count < count { guard fill() else { return nil } }
      let taken = Data(pending.prefix(count))
      pending = Data(pending.dropFirst(count))
      return taken
    }

    mutating func head() -> String? {
      while pending.range(of: Data("\r\n\r\n".utf8)) == nil {
        guard pending.count < 65_536, fill() else { return nil }
      }
      guard let end = pending.range(of: Data("\r\n\r\n".utf8)) else { return nil }
      let head = String(decoding: pending[pending.startIndex..<end.upperBound], as: UTF8.self)
      pending = Data(pending[end.upperBound...])
      return head
    }

    func send(_ data: Data) {
      data.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
          let sent = sendWithoutSignal(fd, raw.baseAddress! + offset, raw.count - offset)
          guard sent > 0 else { return }
          offset += sent
        }
      }
    }
  }

  private func serve(_ connection: inout Connection) {
    switch kind {
    case .httpProxy(let login): serveHTTP(&connection, login: login)
    case .socks5(let login, let closeAfterGreeting):
      serveSOCKS(&connection, login: login, closeAfterGreeting: closeAfterGreeting)
    case .unixForward(_, let port):
      record("unix")
      let upstream = Self.connectLoopback(port: port)
      guard upstream >= 0 else { return }
      relay(&connection, upstream: upstream)
    }
  }

  // MARK: HTTP proxy

  private func serveHTTP(_ connection: inout Connection, login: String?) {
    while let head = connection.head() {
      var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
      guard !lines.isEmpty else { return }
      let parts = lines.removeFirst().split(separator: " ").map(String.init)
      guard parts.count == 3 else { return }
      let (method, target) = (parts[0], parts[1])
      if let login {
        let expected = "Basic " + Data(login.utf8).base64EncodedString()
        let given = lines.first { $0.lowercased().hasPrefix("proxy-authorization:") }
          .map { $0.dropFirst("proxy-authorization:".count).trimmingCharacters(in: .whitespaces) }
        guard given == expected else {
          record("407")
          connection.send(
            Data(
              ("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"relay\"\r\n"
                + "Content-Length: 0\r\n\r\n").utf8))
          continue
        }
      }
      record("\(method) \(target)")
      if method == "CONNECT" {
        guard let port = target.split(separator: ":").last.flatMap({ UInt16($0) }) else { return }
        let upstream = Self.connectLoopback(port: port)
        guard upstream >= 0 else {
          connection.send(Data("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n".utf8))
          return
        }
        connection.send(Data("HTTP/1.1 200 Connection established\r\n\r\n".utf8))
        relay(&connection, upstream: upstream)
        return
      }
      guard let url = URL(string: target), let port = url.port else { return }
      let upstream = Self.connectLoopback(port: UInt16(port))
      guard upstream >= 0 else { return }
      let path = url.path.isEmpty ? "/" : url.path
      let query = url.query.map { "?" + $0 } ?? ""
      let kept = lines.filter {
        let name = $0.lowercased()
        return !name.hasPrefix("proxy-") && !name.hasPrefix("connection:")
      }
      let forwarded = (["\(method) \(path)\(query) HTTP/1.1"] + kept + ["Connection: close", "", ""])
        .joined(separator: "\r\n")
      var request = Data(forwarded.utf8)
      request.append(connection.pending)
      connection.pending = Data()
      Connection(fd: upstream, relay: self).send(request)
      relay(&connection, upstream: upstream)
      return
    }
  }

  // MARK: SOCKS5

  private func serveSOCKS(
    _ connection: inout Connection, login: (user: String, password: String)?, closeAfterGreeting: Bool
  ) {
    guard let greeting = connection.take(2), greeting[greeting.startIndex] == 5,
      let methods = connection.take(Int(greeting[greeting.startIndex + 1]))
    else { return }
    if closeAfterGreeting {
      record("socks closed")
      return
    }
    if let login {
      guard methods.contains(2) else {
        connection.send(Data([5, 0xFF]))
        return
      }
      connection.send(Data([5, 2]))
      guard let version = connection.take(2), version.first == 1,
        let user = connection.take(Int(version[version.startIndex + 1])),
        let passwordLength = connection.take(1),
        let password = connection.take(Int(passwordLength[passwordLength.startIndex]))
      else { return }
      guard String(decoding: user, as: UTF8.self) == login.user,
        String(decoding: password, as: UTF8.self) == login.password
      else {
        record("socks login rejected")
        connection.send(Data([1, 1]))
        return
      }
      connection.send(Data([1, 0]))
    } else {
      guard methods.contains(0) else {
        connection.send(Data([5, 0xFF]))
        return
      }
      connection.send(Data([5, 0]))
    }
    guard let request = connection.take(4), request[request.startIndex + 1] == 1 else { return }
    let host: String
    switch request[request.startIndex + 3] {
    case 1:
      guard let address = connection.take(4) else { return }
      host = address.map(String.init).joined(separator: ".")
    case 3:
      guard let length = connection.take(1), let name = connection.take(Int(length[length.startIndex])) else {
        return
      }
      host = String(decoding: name, as: UTF8.self)
    default:
      return
    }
    guard let portBytes = connection.take(2) else { return }
    let port = UInt16(portBytes[portBytes.startIndex]) << 8 | UInt16(portBytes[portBytes.startIndex + 1])
    record("socks \(host):\(port)")
    let upstream = host == "127.0.0.1" || host == "localhost" ? Self.connectLoopback(port: port) : -1
    guard upstream >= 0 else {
      connection.send(Data([5, 5, 0, 1, 0, 0, 0, 0, 0, 0]))
      return
    }
    connection.send(Data([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]))
    relay(&connection, upstream: upstream)
  }

  // MARK: Relay

  /// Copies bytes both ways until either side closes or the relay stops; closes `upstream`.
  private func relay(_ connection: inout Connection, upstream: Int32) {
    defer { close(upstream) }
    let client = connection.fd
    if !connection.pending.isEmpty {
      Connection(fd: upstream, relay: self).send(connection.pending)
      connection.pending = Data()
    }
    var descriptors = [
      pollfd(fd: client, events: Int16(POLLIN), revents: 0),
      pollfd(fd: upstream, events: Int16(POLLIN), revents: 0),
    ]
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while !isStopped {
      descriptors[0].revents = 0
      descriptors[1].revents = 0
      guard poll(&descriptors, 2, 100) > 0 else { continue }
      for (index, from) in [client, upstream].enumerated() where descriptors[index].revents != 0 {
        let count = recv(from, &buffer, buffer.count, 0)
        guard count > 0 else {
          shutdown(index == 0 ? upstream : client, Int32(SHUT_WR))
          return
        }
        Connection(fd: index == 0 ? upstream : client, relay: self).send(Data(buffer[0..<count]))
      }
    }
  }
}
