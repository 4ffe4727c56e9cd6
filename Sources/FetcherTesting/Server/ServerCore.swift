import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The part of a ``TestServer`` that its threads share: records, routes, counters, the stop
/// signal. The public `TestServer` object is not referenced by its threads, so dropping it runs
/// its `deinit`, which stops the server.
final class ServerCore: Sendable {
  typealias Handler = @Sendable (RecordedRequest) -> TestResponse

  /// Everything mutable, all behind ``state``'s lock.
  struct State {
    /// Every request received since the last `resetRecords()`, in arrival order.
    var requests: [RecordedRequest] = []
    /// Custom routes by exact path.
    var routes: [String: Handler] = [:]
    /// `/fail-first` attempts seen, per key.
    var attempts: [String: Int] = [:]
    /// Response bytes (head and body) that reached the socket, per request path.
    var bytesWritten: [String: Int] = [:]
    /// Paths whose request bodies are cut with a reset after this many bytes.
    var uploadResets: [String: Int] = [:]
    var nextConnectionID = 1
    var nextSequenceNumber = 1
    var isStopped = false
  }

  let baseURL: URL
  let stopSignal: StopSignal
  let workers = WorkerTracker()
  /// Protects all mutable server state; held only for short, non-blocking updates.
  let state = LockedState(State())
  /// The resumable uploads of `*.location` / `*.upload` (see `ResumableUploadRoutes`).
  let resumableUploads = ResumableUploadStore()

  init(baseURL: URL, stopSignal: StopSignal) {
    self.baseURL = baseURL
    self.stopSignal = stopSignal
  }

  // MARK: - Threads

  /// Starts a server thread running `body`, tracked so that `stop()` can wait for it.
  func startWorker(name: String, _ body: @escaping @Sendable () -> Void) {
    workers.startThread(name: name, body)
  }

  /// Accepts connections until the server stops, then closes the listener.
  func runAcceptLoop(listener: Int32) {
    defer { POSIX.closeDescriptor(listener) }
    var descriptors = [
      pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
      pollfd(fd: stopSignal.readDescriptor, events: Int16(POLLIN), revents: 0),
    ]
    while true {
      descriptors[0].revents = 0
      descriptors[1].revents = 0
      let ready = poll(&descriptors, 2, -1)
      if ready < 0 {
        if POSIX.errorNumber == EINTR { continue }
        return
      }
      if descriptors[1].revents != 0 { return }
      // Accept everything that is pending before polling again.
      while true {
        let fd = POSIX.acceptConnection(listener)
        if fd < 0 {
          let error = POSIX.errorNumber
          if error == EINTR || error == ECONNABORTED { continue }
          if error == EMFILE || error == ENFILE {
            // Out of descriptors: back off instead of spinning; connections wait in the backlog.
            _ = stopSignal.sleep(seconds: 0.05)
          }
          break
        }
        POSIX.configureAcceptedSocket(fd)
        let connectionID = state.withLock { state -> Int in
          defer { state.nextConnectionID += 1 }
          return state.nextConnectionID
        }
        startWorker(name: "TestServer connection \(connectionID)") { [self] in
          let socket = ConnectionSocket(descriptor: fd, stopSignal: stopSignal)
          Connection(core: self, socket: socket, connectionID: connectionID).serve()
        }
      }
    }
  }

  // MARK: - Requests

  /// Whether the body of a request for `target` must be kept in memory. Only `/upload?discard=1`
  /// (with no custom route on `/upload`) is counted and checksummed without being kept.
  func keepsBody(of target: RequestTarget) -> Bool {
    guard target.path == "/upload", target.query["discard"] == "1" else { return true }
    return state.withLock { $0.routes["/upload"] != nil }
  }

  /// After how many body bytes a request for `target` is cut with a reset, or nil.
  func uploadReset(for target: RequestTarget) -> Int? {
    state.withLock { $0.uploadResets[target.path] }
  }

  /// Adds `count` response bytes written for a request of `path`.
  func countBytesWritten(_ count: Int, path: String) {
    state.withLock { $0.bytesWritten[path, default: 0] += count }
  }

  /// Numbers and records a request; returns it as recorded.
  func record(_ request: RecordedRequest) -> RecordedRequest {
    state.withLock { state in
      var request = request
      request.sequenceNumber = state.nextSequenceNumber
      state.nextSequenceNumber += 1
      state.requests.append(request)
      return request
    }
  }

  /// Decides the answer: a custom route for the exact path, else a built-in route, else 404.
  func action(for request: RecordedRequest) -> ResponseAction {
    if let handler = state.withLock({ $0.routes[request.path] }) {
      let response = handler(request)
      if response.delay > 0 && !stopSignal.sleep(seconds: response.delay) {
        return .closeWithoutResponse
      }
      if response.fault == .closeWithoutResponse { return .closeWithoutResponse }
      return .respond(ResponsePlan(response))
    }
    if let action = ResumableUploadRoutes.action(for: request, uploads: resumableUploads, baseURL: baseURL) {
      return action
    }
    let context = RouteContext(
      baseURL: baseURL, stopSignal: stopSignal,
      nextAttempt: { [state] key in
        state.withLock { state in
          state.attempts[key, default: 0] += 1
          return state.attempts[key]!
        }
      })
    return BuiltInRoutes.action(for: request, context: context)
  }
}
