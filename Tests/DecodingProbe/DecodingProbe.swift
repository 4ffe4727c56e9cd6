import FetcherTesting
import Foundation
import SessionFetcher

#if canImport(Glibc)
  import Glibc
#endif

/// The peak memory of a fetch that meets a compression bomb. Run by `DecompressionTests` in a child
/// process, so that no other test's memory counts: peak RSS is process-wide.
///
///     decoding-probe LIMIT_BYTES [chunked]    (the engine is the process's default: SESSIONFETCHER_ENGINE)
///
/// Fetches a body of about 6.5 MiB that decodes to 1 GiB of zeros, with `maximumResponseBodyLength`
/// LIMIT_BYTES, and prints one line: `error <description> baseline <KiB> peak <KiB>`, the peak RSS
/// before and after the fetch (a small fetch first warms the engine up). Exits 1 if the fetch did
/// not end within 120 s.
@main
enum DecodingProbe {
  static func main() {
    let arguments = CommandLine.arguments.dropFirst()
    guard let limit = arguments.first.flatMap({ Int64($0) }) else {
      print("usage: decoding-probe LIMIT_BYTES [chunked]")
      exit(2)
    }
    let chunked = arguments.dropFirst().first == "chunked"
    let server: TestServer
    do {
      server = try TestServer()
    } catch {
      print("no server: \(error)")
      exit(1)
    }
    _ = fetch(server.url("/encoded?bytes=100000"), limit: nil)
    let baseline = peakKiB()
    let outcome = fetch(server.url("/bomb?decoded=\(1 << 30)\(chunked ? "&chunked=1" : "")"), limit: limit)
    guard let outcome else {
      print("the fetch did not end")
      exit(1)
    }
    print("error \(outcome) baseline \(baseline) peak \(peakKiB())")
    server.stop()
    exit(0)
  }

  /// The fetch's error, described (`none` for success), or nil if it did not end in time.
  private static func fetch(_ url: URL, limit: Int64?) -> String? {
    let fetcher = SessionFetcher(request: URLRequest(url: url))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = DispatchQueue(label: "decoding-probe")
    fetcher.maximumResponseBodyLength = limit
    let done = DispatchSemaphore(value: 0)
    let result = LockedText()
    fetcher.beginFetch { _, error in
      result.set(error.map { String(describing: $0) } ?? "none")
      done.signal()
    }
    guard done.wait(timeout: .now() + 120) == .success else { return nil }
    return result.get()
  }

  private static func peakKiB() -> Int {
    var usage = rusage()
    #if canImport(Glibc)
      getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
      getrusage(RUSAGE_SELF, &usage)
    #endif
    return usage.ru_maxrss
  }
}

/// A string set on the callback queue and read on the main thread.
private final class LockedText: @unchecked Sendable {
  // `@unchecked Sendable`: `value` is behind `lock`.
  private let lock = NSLock()
  private var value = ""
  func set(_ text: String) { lock.withLock { value = text } }
  func get() -> String { lock.withLock { value } }
}
