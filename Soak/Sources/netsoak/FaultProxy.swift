import Foundation
import SoakSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Plain POSIX socket helpers for the fault proxy.
enum Sockets {
  /// A connected, blocking TCP socket, or -1 after `timeout` seconds or on failure.
  static func connect(host: String, port: UInt16, timeout: TimeInterval) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return -1 }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    inet_pton(AF_INET, host, &address.sin_addr)
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    let result = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    if result != 0 {
      guard errno == EINPROGRESS else {
        close(fd)
        return -1
      }
      var pending = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
      var error: Int32 = 0
      var length = socklen_t(MemoryLayout<Int32>.size)
      guard poll(&pending, 1, Int32(timeout * 1000)) == 1,
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error == 0
      else {
        close(fd)
        return -1
      }
    }
    _ = fcntl(fd, F_SETFL, flags)
    return fd
  }

  /// Closes with a TCP reset (SO_LINGER 0) instead of a FIN.
  static func reset(_ fd: Int32) {
    var option = linger(l_onoff: 1, l_linger: 0)
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    close(fd)
  }

  /// Writes everything (MSG_NOSIGNAL: a closed peer is an error here, not a SIGPIPE); false on error.
  static func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let sent = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
      if sent < 0 && errno == EINTR { continue }
      guard sent > 0 else { return false }
      offset += sent
    }
    return true
  }

  static func setNoDelay(_ fd: Int32) {
    var on: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
  }
}

/// A TCP proxy of the soak's own between the client (on 127.0.0.1) and nginx in the namespace. A
/// share of its connections meets one fault: latency, responses split into tiny segments, a stall
/// past the client's timeout, or a reset in the middle of the response headers, the response body
/// or the request body. A fault counts only when it happened (a cut beyond the end of a short
/// response never does).
final class FaultProxy: @unchecked Sendable {
  // `@unchecked Sendable`: `listener`, `port` and the settings are set in `init`; `counts` and
  // `running` are guarded.
  enum Fault: String, CaseIterable {
    case latency = "proxy latency"
    case tinySegments = "proxy tiny segments"
    case stall = "proxy stall"
    case resetHeaders = "proxy reset mid-headers"
    case resetBody = "proxy reset mid-body"
    case resetUpload = "proxy reset mid-upload"
  }

  let port: UInt16
  private let listener: Int32
  private let upstreamHost: String
  private let upstreamPort: UInt16
  private let faultRate: Double
  private let stallDuration: TimeInterval
  private let running = Guarded(true)
  let counts = Guarded<[Fault: Int]>([:])

  init(upstreamHost: String, upstreamPort: UInt16, faultRate: Double, stallDuration: TimeInterval) throws {
    self.upstreamHost = upstreamHost
    self.upstreamPort = upstreamPort
    self.faultRate = faultRate
    self.stallDuration = stallDuration
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    self.listener = listener
    var on: Int32 = 1
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(listener, $0, length) == 0 && listen(listener, 256) == 0
          && getsockname(listener, $0, &length) == 0
      }
    }
    guard bound else { throw SoakError.setup("the fault proxy could not listen on 127.0.0.1") }
    port = UInt16(bigEndian: address.sin_port)
  }

  func start() {
    let thread = Thread { [self] in
      while running.with({ $0 }) {
        let client = accept(listener, nil, nil)
        guard client >= 0 else {
          if errno == EINTR || errno == ECONNABORTED { continue }
          return
        }
        let connection = Thread { [self] in serve(client) }
        connection.stackSize = 256 * 1024
        connection.start()
      }
    }
    thread.start()
  }

  func stop() {
    running.with { $0 = false }
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
  }

  var total: Int { counts.with { $0.values.reduce(0, +) } }

  private func count(_ fault: Fault) { counts.with { $0[fault, default: 0] += 1 } }

  private func serve(_ client: Int32) {
    let upstream = Sockets.connect(host: upstreamHost, port: upstreamPort, timeout: 3)
    guard upstream >= 0 else {
      Sockets.reset(client)
      return
    }
    var random = SystemRandomNumberGenerator()
    let fault: Fault? =
      Double.random(in: 0..<1, using: &random) < faultRate
      ? Fault.allCases.randomElement(using: &random) : nil
    // Where a cut or stall happens, in bytes of the response stream (request stream for uploads).
    let cut: Int
    switch fault {
    case .resetHeaders: cut = Int.random(in: 5...60, using: &random)
    case .resetUpload: cut = Int(exp(Double.random(in: log(16_384.0)...log(4_194_304.0), using: &random)))
    case .resetBody, .stall: cut = Int(exp(Double.random(in: log(400.0)...log(4_194_304.0), using: &random)))
    default: cut = 0
    }
    if fault == .tinySegments { Sockets.setNoDelay(client) }
    var sentDown = 0
    var sentUp = 0
    var happened = false
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var fds = [
      pollfd(fd: client, events: Int16(POLLIN), revents: 0),
      pollfd(fd: upstream, events: Int16(POLLIN), revents: 0),
    ]
    func end(reset: Bool) {
      if reset {
        Sockets.reset(client)
        Sockets.reset(upstream)
      } else {
        close(client)
        close(upstream)
      }
    }
    while true {
      fds[0].revents = 0
      fds[1].revents = 0
      guard poll(&fds, 2, 1000) >= 0 || errno == EINTR else { return end(reset: false) }
      if fds[0].revents != 0 {
        let received = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress!, $0.count, 0) }
        guard received > 0 else { return end(reset: false) }
        if fault == .resetUpload, sentUp + received > cut {
          let part = cut - sentUp
          _ = buffer.withUnsafeBytes {
            Sockets.sendAll(upstream, UnsafeRawBufferPointer(rebasing: $0[0..<part]))
          }
          count(.resetUpload)
          return end(reset: true)
        }
        if fault == .latency, sentUp < 262_144 {
          Thread.sleep(forTimeInterval: Double.random(in: 0.02...0.15, using: &random))
          if !happened { count(.latency) }
          happened = true
        }
        guard
          buffer.withUnsafeBytes({
            Sockets.sendAll(upstream, UnsafeRawBufferPointer(rebasing: $0[0..<received]))
          })
        else { return end(reset: true) }
        sentUp += received
      }
      if fds[1].revents != 0 {
        let received = buffer.withUnsafeMutableBytes { recv(upstream, $0.baseAddress!, $0.count, 0) }
        guard received > 0 else { return end(reset: false) }
        var start = 0
        switch fault {
        case .resetHeaders, .resetBody:
          if sentDown + received > cut {
            let part = cut - sentDown
            _ = buffer.withUnsafeBytes {
              Sockets.sendAll(client, UnsafeRawBufferPointer(rebasing: $0[0..<part]))
            }
            count(fault!)
            return end(reset: true)
          }
        case .stall:
          if sentDown + received > cut {
            let part = cut - sentDown
            _ = buffer.withUnsafeBytes {
              Sockets.sendAll(client, UnsafeRawBufferPointer(rebasing: $0[0..<part]))
            }
            count(.stall)
            Thread.sleep(forTimeInterval: stallDuration)
            return end(reset: true)
          }
        case .latency:
          if sentDown < 262_144 {
            Thread.sleep(forTimeInterval: Double.random(in: 0.02...0.15, using: &random))
            if !happened { count(.latency) }
            happened = true
          }
        case .tinySegments:
          // The first 16 KiB of the responses in segments of 1–7 bytes.
          while start < received && sentDown + start < 16_384 {
            let size = min(Int.random(in: 1...7, using: &random), received - start)
            let written = buffer.withUnsafeBytes {
              Sockets.sendAll(client, UnsafeRawBufferPointer(rebasing: $0[start..<start + size]))
            }
            guard written else { return end(reset: true) }
            start += size
            if !happened { count(.tinySegments) }
            happened = true
            if start % 64 < 7 { usleep(200) }
          }
        case .resetUpload, nil:
          break
        }
        let ok = buffer.withUnsafeBytes {
          Sockets.sendAll(client, UnsafeRawBufferPointer(rebasing: $0[start..<received]))
        }
        guard ok else { return end(reset: true) }
        sentDown += received
      }
    }
  }
}
