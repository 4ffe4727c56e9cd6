import FetcherTesting
import Foundation

/// `demo --serve`: the tour's embedded server on its own, for the README's quick start
/// (`swift run --package-path Examples quickstart <address>`) or a try with curl.
enum LocalServer {
  /// Starts the server on 127.0.0.1, prints its address and the routes to try, and serves until the
  /// process is ended (Ctrl-C or a signal).
  static func serve() async throws -> Never {
    let server = try TestServer()
    let address = server.baseURL.absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
    Console.say("Serving on \(address) (loopback only) until stopped with Ctrl-C.")
    Console.say("Try: swift run --package-path Examples quickstart \(address)")
    Console.say(
      "Routes: /headers, /status/404, /bytes/1024, /delay/1, /drip, /sse, … (FetcherTesting's TestServer)")
    while true {
      try await Task.sleep(nanoseconds: 3_600_000_000_000)
      _ = server.baseURL  // served while the process runs
    }
  }
}
