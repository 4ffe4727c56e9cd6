import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Why a connection stopped being served.
enum ConnectionError: Error, Equatable {
  /// The server is stopping.
  case stopped
  /// The peer closed or reset the connection.
  case peerClosed
  /// A socket call failed with this `errno`.
  case failed(Int32)
  /// The bytes received are not an acceptable HTTP/1.1 request.
  case badRequest(String)
}

/// One accepted TCP connection, used by exactly one server thread.
///
/// The descriptor is non-blocking; every wait is a `poll(2)` on the socket *and* the server's
/// ``StopSignal``, so ``TestServer/stop()`` interrupts reads, writes and sleeps alike, including a
/// write to a client that stopped reading.
final class ConnectionSocket {
  /// How a connection ends.
  enum CloseMode {
    /// FIN, then wait (briefly) for the peer's FIN so unread input cannot turn the close into a
    /// RST that would destroy the response still in flight.
    case graceful
    /// RST (`SO_LINGER` with a zero timeout).
    case reset
  }

  private let descriptor: Int32
  private let stopSignal: StopSignal
  private var isClosed = false

  init(descriptor: Int32, stopSignal: StopSignal) {
    self.descriptor = descriptor
    self.stopSignal = stopSignal
  }

  deinit {
    if !isClosed { POSIX.closeDescriptor(descriptor) }
  }

  /// Receives at most `buffer.count` bytes, waiting as long as needed.
  ///
  /// - Returns: the number of bytes received, `0` at end of stream.
  func receive(into buffer: UnsafeMutableRawBufferPointer) throws(ConnectionError) -> Int {
    while true {
      let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
      if count >= 0 { return count }
      let error = POSIX.errorNumber
      switch error {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: try wait(for: Int16(POLLIN), timeoutMilliseconds: -1)
      case ECONNRESET, EPIPE, ENOTCONN: throw .peerClosed
      default: throw .failed(error)
      }
    }
  }

  /// Sends all of `bytes`, waiting for buffer space as needed.
  func send(_ bytes: UnsafeRawBufferPointer) throws(ConnectionError) {
    var offset = 0
    while offset < bytes.count {
      let count = sendWithoutSignal(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
      if count > 0 {
        offset += count
        continue
      }
      let error = POSIX.errorNumber
      switch error {
      case EINTR: continue
      case EAGAIN, EWOULDBLOCK: try wait(for: Int16(POLLOUT), timeoutMilliseconds: -1)
      case ECONNRESET, EPIPE, ENOTCONN: throw .peerClosed
      default: throw .failed(error)
      }
    }
  }

  /// Sends all of `data`.
  func send(_ data: Data) throws(ConnectionError) {
    try data.withUnsafeBytes { buffer in
      Result { () throws(ConnectionError) in try send(buffer) }
    }.get()
  }

  /// Blocks until the peer closes (or resets) the connection or the server stops, discarding
  /// anything the peer sends meanwhile. Used by routes that never finish their response.
  func waitForPeerToLeave() {
    var scratch = [UInt8](repeating: 0, count: 4096)
    while true {
      let outcome = scratch.withUnsafeMutableBytes { buffer in
        Result { () throws(ConnectionError) in try receive(into: buffer) }
      }
      guard case .success(let count) = outcome, count > 0 else { return }
    }
  }

  /// Closes the connection; see ``CloseMode``. Idempotent.
  func close(_ mode: CloseMode) {
    guard !isClosed else { return }
    isClosed = true
    switch mode {
    case .reset:
      POSIX.setAbortiveClose(descriptor)
    case .graceful:
      POSIX.shutdownWrite(descriptor)
      drainUntilPeerCloses(timeout: 2)
    }
    POSIX.closeDescriptor(descriptor)
  }

  private func drainUntilPeerCloses(timeout: Double) {
    let deadline = Date().addingTimeInterval(timeout)
    var scratch = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = scratch.withUnsafeMutableBytes { buffer in
        recv(descriptor, buffer.baseAddress, buffer.count, 0)
      }
      if count > 0 { continue }
      if count == 0 { return }
      let error = POSIX.errorNumber
      if error == EINTR { continue }
      guard error == EAGAIN || error == EWOULDBLOCK else { return }
      let remaining = deadline.timeIntervalSinceNow
      guard remaining > 0 else { return }
      do {
        try wait(for: Int16(POLLIN), timeoutMilliseconds: Int32(remaining * 1000) + 1)
      } catch {
        return
      }
    }
  }

  /// Waits until the socket is ready for `events`, the timeout passes, or the server stops.
  private func wait(for events: Int16, timeoutMilliseconds: Int32) throws(ConnectionError) {
    var descriptors = [
      pollfd(fd: descriptor, events: events, revents: 0),
      pollfd(fd: stopSignal.readDescriptor, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      let result = poll(&descriptors, 2, timeoutMilliseconds)
      if result < 0 {
        let error = POSIX.errorNumber
        if error == EINTR { continue }
        throw .failed(error)
      }
      if descriptors[1].revents != 0 { throw .stopped }
      return
    }
  }
}

/// `send(2)` without SIGPIPE (a free function so the method of the same name does not shadow it).
private func sendWithoutSignal(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
  send(fd, bytes, count, POSIX.sendFlags)
}
