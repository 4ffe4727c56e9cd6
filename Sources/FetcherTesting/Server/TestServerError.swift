/// Why a ``TestServer`` could not start.
public enum TestServerError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The host is neither a numeric address nor a name that resolves.
  case invalidHost(String)
  /// A system call failed with this `errno` (for example `bind` with `EADDRINUSE`).
  case systemCall(String, Int32)

  /// A readable explanation.
  public var description: String {
    switch self {
    case .invalidHost(let host): return "TestServer: cannot resolve host \(host)"
    case .systemCall(let call, let error): return "TestServer: \(call) failed with errno \(error)"
    }
  }
}
