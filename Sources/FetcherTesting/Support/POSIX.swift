#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The few POSIX calls whose spelling differs between Darwin and Linux, in one place.
///
/// Everything else in the server calls plain POSIX functions directly.
enum POSIX {
  /// `SOCK_STREAM` as the `Int32` that `socket(2)` wants (an enum on Glibc, an `Int32` on Darwin).
  static var streamSocketType: Int32 {
    #if canImport(Darwin)
      return SOCK_STREAM
    #else
      return Int32(SOCK_STREAM.rawValue)
    #endif
  }

  /// Makes SIGPIPE harmless for the whole process, once. The server never raises it (see
  /// ``sendFlags``), yet a test process running many clients and servers in parallel was once
  /// killed by one from elsewhere (its source is not established); a test process must fail a
  /// test, not die.
  static let ignoreBrokenPipes: Void = {
    _ = signal(SIGPIPE, SIG_IGN)
  }()

  /// `send(2)` flags: Linux suppresses SIGPIPE per call; Darwin does it per socket
  /// (see ``configureAcceptedSocket(_:)``).
  static var sendFlags: Int32 {
    #if canImport(Darwin)
      return 0
    #else
      return Int32(MSG_NOSIGNAL)
    #endif
  }

  /// The current thread's `errno`.
  static var errorNumber: Int32 { errno }

  /// Creates a TCP socket that is close-on-exec and non-blocking.
  static func makeStreamSocket(family: Int32) -> Int32 {
    let fd = socket(family, streamSocketType, 0)
    if fd >= 0 {
      setCloseOnExec(fd)
      setNonBlocking(fd)
    }
    return fd
  }

  /// Accepts one connection from a non-blocking listener; `-1` with `errno` set when none is ready.
  static func acceptConnection(_ listener: Int32) -> Int32 {
    let fd = accept(listener, nil, nil)
    if fd >= 0 {
      setCloseOnExec(fd)
      setNonBlocking(fd)
    }
    return fd
  }

  /// Per-connection options: no Nagle delay (tests measure latency, heads and bodies are already
  /// coalesced by the server), and no SIGPIPE on Darwin.
  static func configureAcceptedSocket(_ fd: Int32) {
    var one: Int32 = 1
    _ = setsockopt(
      fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    #if canImport(Darwin)
      _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
    #endif
  }

  /// Makes the next `close(2)` of `fd` send a TCP RST instead of a FIN.
  static func setAbortiveClose(_ fd: Int32) {
    var option = linger(l_onoff: 1, l_linger: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
  }

  /// Shuts down the sending side (sends a FIN) while still allowing reads.
  static func shutdownWrite(_ fd: Int32) {
    #if canImport(Darwin)
      _ = shutdown(fd, SHUT_WR)
    #else
      _ = shutdown(fd, Int32(SHUT_WR))
    #endif
  }

  /// Creates a pipe whose both ends are close-on-exec and non-blocking.
  static func makePipe() -> (read: Int32, write: Int32)? {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return nil }
    for fd in fds {
      setCloseOnExec(fd)
      setNonBlocking(fd)
    }
    return (fds[0], fds[1])
  }

  static func setNonBlocking(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFL, 0)
    if flags >= 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
  }

  static func setCloseOnExec(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFD, 0)
    if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
  }

  /// `close(2)`, ignoring the result (nothing useful can be done about a failed close).
  static func closeDescriptor(_ fd: Int32) {
    _ = close(fd)
  }
}
