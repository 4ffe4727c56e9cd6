import FetcherTesting
import Foundation
import SessionFetcher

/// `timeout-probe stream-pause [TIMEOUT SLEEP]`: a consumer that stops reading an endless answer
/// that cannot be continued with a Range request (chunked, no length, as an event stream), on the
/// engine the process runs on. Run by `UncontinuableStreamTests` in a child process, so that what it
/// moves through FoundationNetworking's work queue (which every URLSession of a process shares)
/// holds up no other test; and the server sends at most about 32 MB/s (64 KiB every 2 ms), so that
/// the machine stays free for them too.
///
/// The consumer reads the first chunk, waits (at most 30 s: an unpaused transfer would not stop
/// sooner) until the server has sent nothing more for half a second, sleeps SLEEP seconds more (the
/// request's timeout is TIMEOUT seconds; default 60 and 0), then reads on until 4 MiB past what the
/// server had sent while it slept, checking every byte. Prints one line:
/// `sent <bytes> settled <bool> read <bytes> mismatches <n> connections <n> error <description|none>`.
enum StreamPause {
  static let path = "/stream"

  /// What the consumer read, checked byte for byte against the server's pattern.
  struct Reader {
    var total = 0
    var mismatches = 0

    mutating func add(_ data: Data) {
      if data != TestServer.patternBytes(count: data.count, offset: total) { mismatches += 1 }
      total += data.count
    }
  }

  static func run(timeout: TimeInterval, sleep: TimeInterval) {
    let server: TestServer
    do {
      server = try TestServer()
    } catch {
      TimeoutProbe.fail("no server: \(error)")
    }
    let line = SharedLine()
    let done = DispatchSemaphore(value: 0)
    Task {
      line.set(await consume(server, timeout: timeout, sleep: sleep))
      done.signal()
    }
    guard done.wait(timeout: .now() + 120) == .success else { TimeoutProbe.fail("the consumer never ended") }
    server.stop()
    print(line.get())
    TimeoutProbe.finish(0)
  }

  static func consume(_ server: TestServer, timeout: TimeInterval, sleep: TimeInterval) async -> String {
    var request = URLRequest(url: server.url("\(path)?bytes=\(2 << 30)&chunkSize=65536&interval=2"))
    request.timeoutInterval = timeout
    let fetcher = SessionFetcher(request: request)
    fetcher.allowLocalhostRequest = true
    defer { fetcher.stopFetching() }
    var reader = Reader()
    var sent = -1
    var settled = false
    var failure = "none"
    do {
      let stream = try await fetcher.beginStreaming(highWaterMark: 256 * 1024)
      var iterator = stream.makeAsyncIterator()
      if let first = try await iterator.next() { reader.add(first) }
      var plateau = 0
      for _ in 0..<300 where plateau < 5 {
        try await Task.sleep(nanoseconds: 100_000_000)
        let now = server.bytesWritten(path: path)
        plateau = now == sent ? plateau + 1 : 0
        sent = now
      }
      settled = plateau >= 5
      try await Task.sleep(nanoseconds: UInt64(sleep * 1e9))
      while reader.total < sent + (4 << 20), let chunk = try await iterator.next() { reader.add(chunk) }
    } catch {
      failure = String(describing: error).replacingOccurrences(of: "\n", with: " ")
    }
    return "sent \(sent) settled \(settled) read \(reader.total) mismatches \(reader.mismatches) "
      + "connections \(server.requestCount(path: path)) error \(failure)"
  }
}

/// The probe's result line, set by the consuming task and read by the main thread.
final class SharedLine: @unchecked Sendable {
  // `@unchecked Sendable`: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value = ""

  func get() -> String { lock.withLock { value } }
  func set(_ newValue: String) { lock.withLock { value = newValue } }
}
