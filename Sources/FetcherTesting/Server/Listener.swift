import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A bound, listening TCP socket.
struct Listener {
  let descriptor: Int32
  let port: UInt16
  let isIPv6: Bool

  /// Binds `host` (a numeric IPv4 or IPv6 address, or a name such as `localhost`) and `port`
  /// (`0` for an ephemeral port), with `SO_REUSEADDR`, and starts listening.
  init(host: String, port: UInt16) throws {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = POSIX.streamSocketType
    hints.ai_flags = AI_PASSIVE
    var results: UnsafeMutablePointer<addrinfo>?
    let lookup = getaddrinfo(host, String(port), &hints, &results)
    guard lookup == 0, let first = results else {
      throw TestServerError.invalidHost(host)
    }
    defer { freeaddrinfo(results) }

    var lastError: Int32 = 0
    var candidate: UnsafeMutablePointer<addrinfo>? = first
    while let info = candidate {
      candidate = info.pointee.ai_next
      let family = info.pointee.ai_family
      guard family == AF_INET || family == AF_INET6 else { continue }
      let fd = POSIX.makeStreamSocket(family: family)
      guard fd >= 0 else {
        lastError = POSIX.errorNumber
        continue
      }
      var one: Int32 = 1
      _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
      if family == AF_INET6 {
        _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
      }
      guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0,
        listen(fd, 1024) == 0
      else {
        lastError = POSIX.errorNumber
        POSIX.closeDescriptor(fd)
        continue
      }
      guard let boundPort = Listener.boundPort(of: fd) else {
        lastError = POSIX.errorNumber
        POSIX.closeDescriptor(fd)
        continue
      }
      self.descriptor = fd
      self.port = boundPort
      self.isIPv6 = family == AF_INET6
      return
    }
    throw TestServerError.systemCall("bind", lastError)
  }

  private static func boundPort(of fd: Int32) -> UInt16? {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let result = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard result == 0 else { return nil }
    switch Int32(storage.ss_family) {
    case AF_INET:
      return withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
      }
    case AF_INET6:
      return withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
      }
    default:
      return nil
    }
  }
}
