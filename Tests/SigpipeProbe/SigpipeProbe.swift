import Foundation
import SessionFetcher

#if canImport(Glibc)
  import Glibc
#endif

/// Uploads to servers that break the connection under the upload, in a process that leaves SIGPIPE
/// at its default disposition (which kills the process), as a user's program does. Run by
/// `SigpipeTests` in a child process; prints the disposition it starts with, one line per fetch,
/// then `survived`, and exits 0. A SIGPIPE raised anywhere in the process ends it by signal 13.
///
///     sigpipe-probe ENGINE CA-FILE URL...     (ENGINE: urlSession or libcurl; CA-FILE: "-" for none)
///     sigpipe-probe control                  (writes to a socket whose peer is closed: must die)
///
/// Proxies come from the environment (`http_proxy`, `https_proxy`), as FoundationNetworking and
/// libcurl read them.
@main
enum SigpipeProbe {
  static func main() {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments == ["control"] { control() }
    guard arguments.count >= 3, let engine = FetcherEngine.parse(arguments[0]) else {
      print("usage: sigpipe-probe urlSession|libcurl CA-FILE|- URL...")
      exit(2)
    }
    var current = sigaction()
    sigaction(SIGPIPE, nil, &current)
    #if canImport(Glibc)
      let isDefault = unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == 0
    #else
      let isDefault = unsafeBitCast(current.__sigaction_u.__sa_handler, to: Int.self) == 0
    #endif
    var mask = sigset_t()
    pthread_sigmask(SIG_SETMASK, nil, &mask)
    print(
      "SIGPIPE disposition: \(isDefault ? "default" : "not default"), blocked: \(sigismember(&mask, SIGPIPE) == 1)"
    )
    guard isDefault else { finish(3) }

    var tls = TLSSettings()
    if arguments[1] != "-" { tls.additionalTrustRoots = [URL(fileURLWithPath: arguments[1])] }
    // Large enough that the server has closed long before the client stops writing.
    let body = Data(repeating: 0x5a, count: 32 << 20)
    let queue = DispatchQueue(label: "sigpipe-probe")
    for urlString in arguments.dropFirst(2) {
      guard let url = URL(string: urlString) else { continue }
      let fetcher = SessionFetcher.fetcher(url: url)
      fetcher.engine = engine
      if engine == .libcurl { fetcher.tlsSettings = tls }
      fetcher.allowLocalhostRequest = true
      fetcher.allowedInsecureSchemes = ["http"]
      fetcher.callbackQueue = queue
      fetcher.bodyData = body
      let done = DispatchSemaphore(value: 0)
      let outcome = Outcome()
      fetcher.beginFetch { _, error in
        outcome.set("status \(fetcher.statusCode), \(error.map { "error \($0)" } ?? "no error")")
        done.signal()
      }
      if done.wait(timeout: .now() + 60) == .timedOut {
        fetcher.stopFetching()
        outcome.set("timed out")
      }
      print("\(urlString): \(outcome.get())")
    }
    if engine == .libcurl {
      print(
        "libcurl loop thread blocks SIGPIPE: \(curlLoopThreadBlocksSIGPIPE().map(String.init) ?? "no such thread")"
      )
    }
    print("survived")
    finish(0)
  }

  /// Whether the libcurl engine's loop thread (named `SFetcher.curl`) has SIGPIPE in its blocked
  /// mask, from /proc; nil when there is no such thread.
  static func curlLoopThreadBlocksSIGPIPE() -> Bool? {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    for task in tasks {
      let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
      guard name.hasPrefix("SFetcher.curl"),
        let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
        let mask = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16)
      else { continue }
      return mask & (1 << (UInt64(SIGPIPE) - 1)) != 0
    }
    return nil
  }

  /// Flushes the output (every stream) and ends the process without running exit handlers: under the sanitizers,
  /// LeakSanitizer's check at exit would judge what fetchers left in flight, not SIGPIPE.
  static func finish(_ status: Int32) -> Never {
    fflush(nil)
    _exit(status)
  }

  /// Shows that SIGPIPE would kill this process: a plain `write(2)` to a socket whose peer is
  /// closed raises it.
  static func control() -> Never {
    var ends: [Int32] = [0, 0]
    #if canImport(Glibc)
      let streamType = Int32(SOCK_STREAM.rawValue)
    #else
      let streamType = SOCK_STREAM
    #endif
    guard socketpair(AF_UNIX, streamType, 0, &ends) == 0 else { exit(4) }
    close(ends[1])
    let byte: [UInt8] = [0]
    _ = write(ends[0], byte, 1)
    print("survived")
    finish(0)
  }
}

/// One fetch's outcome, written on the callback queue and read on the main thread.
final class Outcome: @unchecked Sendable {
  // `@unchecked Sendable`: `text` is only touched under `lock`.
  private let lock = NSLock()
  private var text = "no completion"

  func set(_ value: String) { lock.withLock { text = value } }
  func get() -> String { lock.withLock { text } }
}
