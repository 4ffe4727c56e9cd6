import Foundation
import SessionFetcher

#if canImport(Glibc)
  import Glibc
#endif

/// A fetch times out while its engine cannot take a cancellation. Run by `TimeoutTests` in a child
/// process, because the hold it makes is process-wide on the URLSession engine: a stream body's read
/// holds FoundationNetworking's work queue, which every URLSession of the process shares, so no
/// task anywhere in the process can be made, cancelled, or report anything meanwhile.
///
///     timeout-probe [TIMEOUT]   (the engine is the process's default: SESSIONFETCHER_ENGINE)
///     timeout-probe redirect-cancel        (see `RedirectCancel`)
///     timeout-probe begin-while-held       (see `BeginWhileHeld`)
///     timeout-probe begin-cost [COUNT]     (see `BeginCost`: a measurement)
///     timeout-probe stream-pause [TIMEOUT SLEEP]   (see `StreamPause`)
///     timeout-probe trim-threshold ENGINE [opt-out]   (see `TrimThreshold`)
///
/// A GET that gets no answer, with a timeout of TIMEOUT seconds (default 5), goes on the wire; then
/// an upload whose body stream's first read waits until released. The probe prints one line,
/// `error <code> while held: <true|false>` (whether the read was being held when the GET ended),
/// releases the read and exits 0; or exits 1 with what it waited for in vain.
@main
enum TimeoutProbe {
  static func main() {
    switch CommandLine.arguments.dropFirst().first {
    case "redirect-cancel": RedirectCancel.run()
    case "begin-while-held": BeginWhileHeld.run()
    case "stream-pause":
      let numbers = CommandLine.arguments.dropFirst(2).compactMap { TimeInterval($0) }
      StreamPause.run(timeout: numbers.first ?? 60, sleep: numbers.dropFirst().first ?? 0)
    case "trim-threshold":
      let rest = Array(CommandLine.arguments.dropFirst(2))
      TrimThreshold.run(engine: rest.first ?? "urlSession", optOut: rest.contains("opt-out"))
    case "begin-cost":
      BeginCost.run(count: CommandLine.arguments.dropFirst(2).first.flatMap { Int($0) } ?? 10_000)
    default: break
    }
    let server = SilentServer()
    let queue = DispatchQueue(label: "timeout-probe")
    var request = URLRequest(url: server.url("/hang"))
    let timeout = CommandLine.arguments.dropFirst().first.flatMap { TimeInterval($0) } ?? 5
    request.timeoutInterval = timeout
    let fetcher = SessionFetcher(request: request)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = queue
    let hold = ReadHold()
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    fetcher.beginFetch { _, error in
      let code = (error as? URLError).map { "\($0.code.rawValue)" } ?? "\(String(describing: error))"
      outcome.set("error \(code) while held: \(hold.isHolding)")
      done.signal()
    }
    // On the wire before the hold: making a task waits for the work queue.
    guard server.waitForConnection(timeout: 20) else { fail("the GET never connected") }

    let uploader = SessionFetcher.fetcher(url: server.url("/upload"))
    uploader.allowLocalhostRequest = true
    uploader.callbackQueue = queue
    uploader.bodyStreamProvider = { HeldStream(hold) }
    uploader.beginFetch { _, _ in }
    guard hold.waitUntilReading(timeout: 20) else { fail("the upload's body was never read") }

    let ended = done.wait(timeout: .now() + 20) == .success
    hold.release()
    guard ended else { fail("the GET did not end within 20 s of its \(timeout) s timeout") }
    print(outcome.get())
    finish(0)
  }

  static func fail(_ reason: String) -> Never {
    print("failed: \(reason)")
    finish(1)
  }

  /// Flushes the output and ends without exit handlers: the held upload is still in flight.
  static func finish(_ status: Int32) -> Never {
    fflush(nil)
    _exit(status)
  }
}

/// A loopback server that accepts connections and reads them to the end, never answering.
final class SilentServer: @unchecked Sendable {
  // `@unchecked Sendable`: `port` is set in init; `accepted` is a semaphore.
  private let listener: Int32
  let port: UInt16
  private let accepted = DispatchSemaphore(value: 0)

  init() {
    #if canImport(Glibc)
      let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
      let listener = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(listener, $0, length) == 0 && listen(listener, 16) == 0
          && getsockname(listener, $0, &length) == 0
      }
    }
    guard bound else { TimeoutProbe.fail("no loopback socket: errno \(errno)") }
    self.listener = listener
    port = UInt16(bigEndian: address.sin_port)
    let accepted = self.accepted
    Thread.detachNewThread {
      while true {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        accepted.signal()
        Thread.detachNewThread {
          var buffer = [UInt8](repeating: 0, count: 65_536)
          while read(connection, &buffer, buffer.count) > 0 {}
          close(connection)
        }
      }
    }
  }

  func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

  func waitForConnection(timeout: TimeInterval) -> Bool {
    accepted.wait(timeout: .now() + timeout) == .success
  }
}

/// The hold of a ``HeldStream``: whether its read is waiting, and the release.
final class ReadHold: @unchecked Sendable {
  // `@unchecked Sendable`: the flags are only touched under `condition`.
  private let condition = NSCondition()
  private var reading = false
  private var released = false

  /// The read is waiting, and not released yet.
  var isHolding: Bool { condition.withLock { reading && !released } }

  /// Called by the read: waits until released, at most 45 s (longer than the probe's own waits).
  func holdRead() {
    condition.withLock {
      reading = true
      condition.broadcast()
      let deadline = Date().addingTimeInterval(45)
      while !released && condition.wait(until: deadline) {}
    }
  }

  func waitUntilReading(timeout: TimeInterval) -> Bool {
    condition.withLock {
      let deadline = Date().addingTimeInterval(timeout)
      while !reading && condition.wait(until: deadline) {}
      return reading
    }
  }

  func release() {
    condition.withLock {
      released = true
      condition.broadcast()
    }
  }
}

/// A body stream whose first read waits until the hold is released, then ends with one byte.
final class HeldStream: InputStream {
  private let hold: ReadHold
  private let lock = NSLock()
  private var status: Stream.Status = .notOpen

  init(_ hold: ReadHold) {
    self.hold = hold
    super.init(data: Data())
  }

  override var streamStatus: Stream.Status { lock.withLock { status } }
  override var hasBytesAvailable: Bool { streamStatus == .open }
  override func open() { lock.withLock { status = .open } }
  override func close() { lock.withLock { status = .closed } }

  override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
    guard streamStatus == .open, length > 0 else { return 0 }
    hold.holdRead()
    lock.withLock { status = .atEnd }
    buffer[0] = UInt8(ascii: "a")
    return 1
  }

  override func getBuffer(
    _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
  ) -> Bool {
    false
  }

  override func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}
  override func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}
}

/// The GET's outcome, written on the callback queue and read on the main thread.
final class Outcome: @unchecked Sendable {
  // `@unchecked Sendable`: `text` is only touched under `lock`.
  private let lock = NSLock()
  private var text = "no completion"

  func set(_ value: String) { lock.withLock { text = value } }
  func get() -> String { lock.withLock { text } }
}
