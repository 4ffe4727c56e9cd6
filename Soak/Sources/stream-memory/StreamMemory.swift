// Streams 1 GiB of server-sent events and of text lines from an in-process raw-socket server
// through `FetcherStream.events` and `FetcherStream.lines`, consumed as they arrive, and prints the
// peak RSS growth of each: memory must stay flat (at most --max-growth-mb, default 64) however long
// the stream. The body is an endless `text/event-stream`-like answer without a length or ranges, as
// a real event stream is: nothing but the fetcher's own backpressure bounds what waits in memory.
//
//   swift run -c release --package-path Soak stream-memory [--bytes N] [--mode events|lines|both]
//       [--max-growth-mb M]
//
// SESSIONFETCHER_ENGINE=libcurl picks the libcurl engine. Exits 1 when a growth is past the bound
// or the stream did not arrive whole.

import FetcherTesting
import Foundation
import SessionFetcher
import SoakSupport

#if canImport(Glibc)
  import Glibc
#endif

struct Options {
  var bytes: Int64 = 1 << 30
  var modes = ["events", "lines"]
  var maxGrowthMB: Int64 = 64

  init(_ arguments: [String]) {
    var index = 1
    func value() -> String {
      index += 1
      guard index < arguments.count else {
        FileHandle.standardError.write(Data("missing value for \(arguments[index - 1])\n".utf8))
        exit(2)
      }
      return arguments[index]
    }
    while index < arguments.count {
      switch arguments[index] {
      case "--bytes": bytes = Int64(value()) ?? bytes
      case "--mode":
        let mode = value()
        modes = mode == "both" ? ["events", "lines"] : [mode]
      case "--max-growth-mb": maxGrowthMB = Int64(value()) ?? maxGrowthMB
      default:
        FileHandle.standardError.write(Data("unknown argument \(arguments[index])\n".utf8))
        exit(2)
      }
      index += 1
    }
  }
}

/// The process's peak RSS since the last reset (`VmHWM`), in bytes.
func peakResidentBytes() -> Int64 {
  guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
  for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
    return (Int64(line.filter(\.isNumber)) ?? 0) * 1024
  }
  return 0
}

/// Resets `VmHWM` to the current RSS (Linux 4.0 and later); false where that is not possible.
func resetPeakResidentBytes() -> Bool {
  guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
  defer { try? handle.close() }
  return (try? handle.write(contentsOf: Data("5".utf8))) != nil
}

/// One repeated block of the body: events of 100 bytes of data for `events`, lines of 100 bytes
/// for `lines`, 640 of them (about 64 KiB).
func block(_ mode: String) -> (data: Data, items: Int) {
  let payload = String(repeating: "x", count: 92)
  var text = ""
  for index in 0..<640 {
    let value = String(format: "%08d", index) + payload
    text += mode == "events" ? "data: \(value)\n\n" : "\(value)\n"
  }
  return (Data(text.utf8), 640)
}

struct Outcome {
  var items = 0
  var bytes: Int64 = 0
  var error: (any Error)?
}

func stream(mode: String, server: HostileServer, bytes: Int64) async -> Outcome {
  let fetcher = SessionFetcher(request: URLRequest(url: server.url("/\(mode)")))
  fetcher.allowLocalhostRequest = true
  fetcher.callbackQueue = DispatchQueue(label: "stream-memory.callbacks")
  var outcome = Outcome()
  do {
    let stream = try await fetcher.beginStreaming()
    if mode == "events" {
      for try await event in stream.events {
        outcome.items += 1
        outcome.bytes += Int64(event.data.utf8.count)
      }
    } else {
      for try await line in stream.lines {
        outcome.items += 1
        outcome.bytes += Int64(line.utf8.count)
      }
    }
  } catch {
    outcome.error = error
  }
  return outcome
}

let options = Options(CommandLine.arguments)
let engine = ProcessInfo.processInfo.environment["SESSIONFETCHER_ENGINE"] ?? "urlSession"
let head = Data("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n".utf8)
var failed = false

for mode in options.modes {
  let (chunk, itemsPerBlock) = block(mode)
  let blocks = max(1, options.bytes / Int64(chunk.count))
  let total = Int64(head.count) + blocks * Int64(chunk.count)
  let server: HostileServer
  do {
    server = try HostileServer { _ in .repeating(head: head, chunk: chunk, totalBytes: total) }
  } catch {
    print("stream-memory: cannot start the server: \(error)")
    exit(1)
  }
  // A short stream first, so that the session, the server's threads and the code are in place.
  let warmUp = try! HostileServer { _ in .repeating(head: head, chunk: chunk, totalBytes: 8 << 20) }
  _ = await stream(mode: mode, server: warmUp, bytes: 8 << 20)
  warmUp.stop()
  let baseline = residentBytesAfterTrim()
  let canReset = resetPeakResidentBytes()
  let sampled = Guarded<Int64>(baseline)
  let sampling = Guarded(true)
  let sampler = Thread {
    while sampling.with({ $0 }) {
      let now = residentBytes()
      sampled.with { $0 = max($0, now) }
      usleep(5_000)
    }
  }
  sampler.start()
  let start = Date()
  let outcome = await stream(mode: mode, server: server, bytes: total)
  let seconds = Date().timeIntervalSince(start)
  sampling.with { $0 = false }
  server.stop()
  let peak = max(canReset ? peakResidentBytes() : 0, sampled.with { $0 })
  let growth = peak - baseline
  let expectedItems = Int(blocks) * itemsPerBlock
  let mb = { (bytes: Int64) in String(format: "%.1f MB", Double(bytes) / 1_000_000) }
  print(
    "stream-memory \(engine) \(mode): \(mb(total)) in \(String(format: "%.1f", seconds)) s, "
      + "\(outcome.items) \(mode), baseline RSS \(mb(baseline)), peak \(mb(peak)), growth \(mb(growth))")
  if let error = outcome.error {
    print("  FAIL: the stream ended with \(error)")
    failed = true
  } else if outcome.items != expectedItems {
    print("  FAIL: \(outcome.items) \(mode) arrived, \(expectedItems) were sent")
    failed = true
  }
  if growth > options.maxGrowthMB * 1_000_000 {
    print("  FAIL: RSS grew by more than \(options.maxGrowthMB) MB")
    failed = true
  }
}
exit(failed ? 1 : 0)
