import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// Decoding a body from a real connection, and a stop while the parse runs. What is parsed,
/// where, and what each failure gives are in `ScriptedDecodingTests`.
@Suite("Parse-then-complete and typed decoding", .ownThreads)
struct DecodingTests {
  struct User: Codable, Sendable, Equatable {
    var id: Int
    var name: String
  }

  struct ParseRefused: Error, Equatable {}

  /// A callback queue that can tell whether code runs on it.
  final class MarkedQueue: Sendable {
    let queue = DispatchQueue(label: "test.decoding.callbacks")
    private let key = DispatchSpecificKey<Int>()

    init() {
      queue.setSpecific(key: key, value: 1)
    }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == 1 }
  }

  private func serverWithUser() throws -> TestServer {
    let server = try TestServer()
    server.route("/user") { _ in .json(#"{"id":7,"name":"Ada Lovelace"}"#) }
    server.route("/not-json") { _ in .text("<html>maintenance</html>") }
    return server
  }

  private func result<Value: Sendable>(
    _ begin: (@escaping @Sendable (Result<Value, any Error>) -> Void) -> Void
  ) async -> Result<Value, any Error> {
    await withCheckedContinuation { continuation in
      begin { continuation.resume(returning: $0) }
    }
  }

  @Test func asyncDecodingReturnsTheValue() async throws {
    let server = try serverWithUser()
    defer { server.stop() }
    let user = try await server.fetcher("/user").beginFetch(decoding: User.self)
    #expect(user == User(id: 7, name: "Ada Lovelace"))
  }

  @Test func stoppingDuringTheParseDeliversNothing() async throws {
    let server = try serverWithUser()
    defer { server.stop() }
    let watched = WeakReference<SessionFetcher>()
    let parseStarted = Gate()
    let releaseParse = Gate()
    let completions = Recorder<String>()
    do {
      let fetcher = server.fetcher("/user")
      watched.object = fetcher
      fetcher.beginFetch(
        parsing: { data, _ in
          parseStarted.open()
          releaseParse.wait()
          return data.count
        },
        completionHandler: { _ in completions.append("completed") })
      await offThePool { parseStarted.wait() }
      fetcher.stopFetching()
      releaseParse.open()
      #expect(await offThePool { fetcher.waitForCompletion(timeout: 30) })
    }
    // The parse's end hands the result to a block on the callback queue that holds the fetcher:
    // once the fetcher is freed, that block has run (or was never queued).
    #expect(await eventually { watched.object == nil }, "the fetcher is still held")
    #expect(completions.count == 0)
  }

}
