import Foundation
import SessionFetcher

/// Serves the requests of one TCP connection, one after another, on the connection's own thread.
struct Connection {
  let core: ServerCore
  let socket: ConnectionSocket
  let connectionID: Int

  /// Serves requests until the client closes, a response closes the connection, the request is
  /// malformed (400, then close) or the server stops. Always closes the socket.
  func serve() {
    let reader = RequestReader(socket: socket)
    let writer = ResponseWriter(socket: socket, stopSignal: core.stopSignal)
    while true {
      do {
        guard try serveOneRequest(reader: reader, writer: writer) else { return }
      } catch .badRequest(let reason) {
        let plan = BuiltInRoutes.badRequest(reason)
        try? writer.write(plan, omitBody: false, connectionHeader: "close")
        socket.close(.graceful)
        return
      } catch {
        socket.close(.graceful)
        return
      }
    }
  }

  /// Reads one request and answers it.
  ///
  /// - Returns: `true` to read another request from the connection, `false` once it is closed.
  private func serveOneRequest(reader: RequestReader, writer: ResponseWriter) throws(ConnectionError) -> Bool
  {
    guard let headBytes = try reader.readHead() else {
      socket.close(.graceful)
      return false
    }
    let head = try RequestHead(parsing: headBytes)
    let framing = try head.bodyFraming()
    let target = RequestTarget(head.target)

    if head.expectsContinue && framing != .none {
      try writer.writeRaw(Data("HTTP/1.1 100 Continue\r\n\r\n".utf8))
    }
    if let cut = core.uploadReset(for: target), framing != .none {
      // Take part of the body, then reset the connection while the client is still sending.
      var discarded = BodySink(keepsBytes: false)
      if case .contentLength(let length) = framing {
        try reader.readBody(count: min(cut, length), into: &discarded)
      }
      socket.close(.reset)
      return false
    }
    var sink: BodySink
    switch framing {
    case .none:
      sink = BodySink(keepsBytes: true)
    case .contentLength(let length):
      sink = BodySink(keepsBytes: core.keepsBody(of: target), expectedLength: length)
      try reader.readBody(count: length, into: &sink)
    case .chunked:
      sink = BodySink(keepsBytes: core.keepsBody(of: target))
      try reader.readChunkedBody(into: &sink)
    }

    var request = RecordedRequest(
      method: head.method, target: head.target, version: head.version, headers: head.headers,
      wasChunked: framing == .chunked, connectionID: connectionID)
    request.body = sink.data
    request.bodyLength = sink.length
    request.bodyChecksum = sink.hash.hexDigest
    request = core.record(request)

    let action = core.action(for: request)
    return try perform(action, for: head, writer: writer)
  }

  /// Carries out a route's answer.
  ///
  /// - Returns: `true` when the connection stays open for another request.
  private func perform(
    _ action: ResponseAction, for head: RequestHead, writer: ResponseWriter
  ) throws(ConnectionError) -> Bool {
    switch action {
    case .respond(let plan):
      // `?ignoreConnectionClose` plays a server that keeps the connection open although the
      // client asked to close it: only the client's own handling of its header ends it then.
      let ignoresClose = RequestTarget(head.target).query["ignoreConnectionClose"] != nil
      let keepsAlive =
        (head.wantsKeepAlive || ignoresClose) && !core.stopSignal.isFired && plan.ending == .complete
        && !plan.headers.values(named: "Connection").contains { $0.equalsIgnoringASCIICase("close") }
      var connectionHeader: String?
      if plan.ending == .complete {
        // Faults end the connection without announcing it, like a real broken server.
        if !keepsAlive {
          connectionHeader = "close"
        } else if head.version == "HTTP/1.0" {
          connectionHeader = "keep-alive"
        }
      }
      let path = RequestTarget(head.target).path
      try writer.write(plan, omitBody: head.method == "HEAD", connectionHeader: connectionHeader) { [core] in
        core.countBytesWritten($0, path: path)
      }
      switch plan.ending {
      case .complete:
        if keepsAlive { return true }
        socket.close(.graceful)
      case .close:
        socket.close(.graceful)
      case .reset:
        socket.close(.reset)
      case .stall:
        socket.waitForPeerToLeave()
        socket.close(.graceful)
      }
    case .hang:
      socket.waitForPeerToLeave()
      socket.close(.graceful)
    case .closeWithoutResponse:
      socket.close(.graceful)
    case .garbage(let bytes):
      try writer.writeRaw(bytes)
      socket.close(.graceful)
    }
    return false
  }
}
