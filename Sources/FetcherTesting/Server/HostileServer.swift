import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A raw-socket server that answers each request with exactly the bytes a test scripts, for
/// replaying what a hostile or broken server sends: impossible headers, stray interim responses,
/// endless lines, bodies that never end.
///
/// Unlike ``TestServer`` it parses nothing beyond the end of the request head (`\r\n\r\n`) and
/// adds nothing to the reply. It records every byte it receives on every connection, so a test
/// can also check what a client put on the wire (request splitting, injected headers).
///
/// ```swift
/// let server = try HostileServer { _ in
///   .bytes(Data("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\nabc".utf8))
/// }
/// defer { server.stop() }
/// let fetcher = SessionFetcher.fetcher(url: server.url("/"))
/// ```
public final class HostileServer: Sendable {
  /// What the server sends after it has read a request head.
  public enum Reply: Sendable {
    /// Send these bytes, then close the connection (FIN).
    case bytes(Data)
    /// Send `head`, then `chunk` again and again until `totalBytes` bytes (head included) are
    /// sent or the client leaves, then close. For endless lines and streams.
    case repeating(head: Data, chunk: Data, totalBytes: Int64)
    /// Send these bytes, then keep the connection open, sending nothing more, until the client
    /// leaves or the server stops.
    case bytesThenStall(Data)
    /// Close without sending anything.
    case close
    /// Send these bytes (none: nothing), then reset the connection (RST, `SO_LINGER` with a zero
    /// timeout) instead of closing it.
    case bytesThenReset(Data)
  }

  /// The TCP port the server listens on (loopback).
  public let port: UInt16
  /// `http://127.0.0.1:PORT`, without a trailing slash.
  public let baseURL: URL

  private let stopSignal: StopSignal
  private let workers = WorkerTracker()
  private let state = LockedState(Recorded())

  private struct Recorded: Sendable {
    var received = Data()
    var connections = 0
    var heads: [Data] = []
    var bytesSent: Int64 = 0
  }

  /// Starts listening on 127.0.0.1 with an ephemeral port.
  ///
  /// - Parameter reply: called on a server thread with the raw bytes of each request head
  ///   (request line and header fields, up to and including the blank line); answers with what to
  ///   send.
  public init(reply: @escaping @Sendable (_ requestHead: Data) -> Reply) throws {
    POSIX.ignoreBrokenPipes
    let stopSignal = try StopSignal()
    let listener = try Listener(host: "127.0.0.1", port: 0)
    guard let baseURL = URL(string: "http://127.0.0.1:\(listener.port)") else {
      POSIX.closeDescriptor(listener.descriptor)
      throw TestServerError.invalidHost("127.0.0.1")
    }
    self.port = listener.port
    self.baseURL = baseURL
    self.stopSignal = stopSignal
    let connection = Connection(stopSignal: stopSignal, state: state, reply: reply)
    workers.startThread(name: "HostileServer accept :\(listener.port)") { [workers] in
      Self.acceptLoop(listener: listener.descriptor, stopSignal: stopSignal) { fd in
        workers.startThread(name: "HostileServer connection") { connection.serve(fd) }
      }
    }
  }

  deinit {
    stop()
  }

  /// The URL of `path` on this server.
  public func url(_ path: String) -> URL {
    let suffix = path.hasPrefix("/") ? path : "/" + path
    guard let url = URL(string: baseURL.absoluteString + suffix) else {
      preconditionFailure("HostileServer.url: cannot make a URL of \(path)")
    }
    return url
  }

  /// Every byte received so far, from every connection, in arrival order per connection.
  public var receivedBytes: Data { state.withLock { $0.received } }

  /// The request heads read so far (one per request answered).
  public var requestHeads: [Data] { state.withLock { $0.heads } }

  /// How many connections were accepted.
  public var connectionCount: Int { state.withLock { $0.connections } }

  /// How many bytes were sent to clients.
  public var bytesSent: Int64 { state.withLock { $0.bytesSent } }

  /// Stops accepting, ends every connection, and waits (up to 5 seconds) for the server's
  /// threads. Idempotent.
  public func stop() {
    stopSignal.fire()
    _ = workers.waitUntilFinished(timeout: 5)
  }

  private static func acceptLoop(
    listener: Int32, stopSignal: StopSignal, accepted: (Int32) -> Void
  ) {
    defer { POSIX.closeDescriptor(listener) }
    var descriptors = [
      pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
      pollfd(fd: stopSignal.readDescriptor, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      descriptors[0].revents = 0
      descriptors[1].revents = 0
      if poll(&descriptors, 2, -1) < 0 {
        if POSIX.errorNumber == EINTR { continue }
        return
      }
      if descriptors[1].revents != 0 { return }
      while true {
        let fd = POSIX.acceptConnection(listener)
        guard fd >= 0 else { break }
        POSIX.configureAcceptedSocket(fd)
        accepted(fd)
      }
    }
  }

  /// Serves one connection: read a head, reply, repeat while the reply leaves it open.
  private struct Connection: Sendable {
    let stopSignal: StopSignal
    let state: LockedState<Recorded>
    let reply: @Sendable (Data) -> Reply

    func serve(_ fd: Int32) {
      state.withLock { $0.connections += 1 }
      let socket = ConnectionSocket(descriptor: fd, stopSignal: stopSignal)
      var pending = Data()
      var buffer = [UInt8](repeating: 0, count: 16_384)
      while true {
        guard let end = pending.range(of: Data("\r\n\r\n".utf8)) else {
          let count = buffer.withUnsafeMutableBytes { raw in
            (try? socket.receive(into: raw)) ?? 0
          }
          guard count > 0 else {
            socket.close(.graceful)
            return
          }
          let bytes = Data(buffer[0..<count])
          pending.append(bytes)
          state.withLock { $0.received.append(bytes) }
          continue
        }
        let head = Data(pending[pending.startIndex..<end.upperBound])
        pending = Data(pending[end.upperBound...])
        state.withLock { $0.heads.append(head) }
        switch reply(head) {
        case .close:
          socket.close(.graceful)
          return
        case .bytes(let data):
          send(data, on: socket)
          socket.close(.graceful)
          return
        case .bytesThenReset(let data):
          if !data.isEmpty { send(data, on: socket) }
          socket.close(.reset)
          return
        case .bytesThenStall(let data):
          send(data, on: socket)
          socket.waitForPeerToLeave()
          socket.close(.graceful)
          return
        case .repeating(let head, let chunk, let totalBytes):
          var sent = Int64(head.count)
          guard send(head, on: socket), !chunk.isEmpty else {
            socket.close(.graceful)
            return
          }
          while sent < totalBytes {
            let piece = sent + Int64(chunk.count) <= totalBytes ? chunk : chunk.prefix(Int(totalBytes - sent))
            guard send(piece, on: socket) else { break }
            sent += Int64(piece.count)
          }
          socket.close(.graceful)
          return
        }
      }
    }

    @discardableResult
    private func send(_ data: Data, on socket: ConnectionSocket) -> Bool {
      do {
        try socket.send(data)
        state.withLock { $0.bytesSent += Int64(data.count) }
        return true
      } catch {
        return false
      }
    }
  }
}
