import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Parse-then-complete and typed decoding on the scripted engine: what is parsed, where, and what
/// each failure gives. A JSON body decoded from a real connection, and a stop while the parse runs,
/// are in `DecodingTests`.
@Suite("Parse-then-complete and typed decoding (scripted)")
struct ScriptedDecodingTests {
  typealias User = DecodingTests.User
  typealias MarkedQueue = DecodingTests.MarkedQueue

  static let user = Data(#"{"id":7,"name":"Ada Lovelace"}"#.utf8)

  static func engine() -> ScriptedEngine {
    let engine = ScriptedEngine()
    engine.respond(to: "/user", with: .response(headers: ["Content-Type": "application/json"], body: user))
    engine.respond(to: "/not-json", with: .response(body: Data("<html>maintenance</html>".utf8)))
    return engine
  }

  private func result<Value: Sendable>(
    _ begin: (@escaping @Sendable (Result<Value, any Error>) -> Void) -> Void
  ) async -> Result<Value, any Error> {
    await withCheckedContinuation { continuation in
      begin { continuation.resume(returning: $0) }
    }
  }

  @Test func theDecoderIsUsed() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/snake", with: .response(body: Data(#"{"id":1,"display_name":"x"}"#.utf8)))
    struct Profile: Decodable, Sendable { var displayName: String }
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    let profile = try await engine.fetcher("/snake").beginFetch(decoding: Profile.self, using: decoder)
    #expect(profile.displayName == "x")
  }

  @Test func closureDecodingDeliversOnTheCallbackQueue() async throws {
    let marked = MarkedQueue()
    let fetcher = Self.engine().fetcher("/user")
    fetcher.callbackQueue = marked.queue
    let onQueue = Recorder<Bool>()
    let result = await result { done in
      fetcher.beginFetch(decoding: User.self) { result in
        onQueue.append(marked.isCurrent)
        done(result)
      }
    }
    #expect(try result.get() == User(id: 7, name: "Ada Lovelace"))
    #expect(onQueue.values == [true])
  }

  @Test func aBodyThatDoesNotDecodeFailsWithTheDecodingErrorBothWays() async throws {
    let engine = Self.engine()
    let fetcher = engine.fetcher("/not-json")
    await #expect(throws: DecodingError.self) {
      _ = try await fetcher.beginFetch(decoding: User.self)
    }
    // The fetch itself succeeded: its body stays available for diagnosis.
    #expect(fetcher.error == nil)
    #expect(fetcher.downloadedData == Data("<html>maintenance</html>".utf8))
    let closureForm = engine.fetcher("/not-json")
    let result = await result { done in closureForm.beginFetch(decoding: User.self, completionHandler: done) }
    #expect(result.error is DecodingError)
  }

  @Test func anHTTPErrorArrivesAsAStatusErrorWithTheBodyAndIsNotParsed() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/missing", with: .response(status: 404, body: Data("no such user".utf8)))
    engine.respond(to: "/broken", with: .response(status: 500, body: Self.user))
    let parsed = Recorder<Int>()
    let fetcher = engine.fetcher("/missing")
    let result = await result { done in
      fetcher.beginFetch(
        parsing: { data, _ in
          parsed.append(data.count)
          return data.count
        }, completionHandler: done)
    }
    #expect(result.error as? SessionFetcherError == .status(code: 404, data: Data("no such user".utf8)))
    #expect(parsed.count == 0)
    // A body that would decode is not decoded from an error status either.
    await #expect(throws: SessionFetcherError.status(code: 500, data: Self.user)) {
      _ = try await engine.fetcher("/broken").beginFetch(decoding: User.self)
    }
  }

  @Test func theParseRunsOffTheCallbackQueueWhichStaysFree() async throws {
    let marked = MarkedQueue()
    let fetcher = Self.engine().fetcher("/user")
    fetcher.callbackQueue = marked.queue
    let parseStarted = Gate()
    let releaseParse = Gate()
    let parseOnQueue = Recorder<Bool>()
    let events = Recorder<String>()
    fetcher.beginFetch(
      parsing: { data, response in
        parseOnQueue.append(marked.isCurrent)
        parseStarted.open()
        releaseParse.wait()
        events.append("parsed \(response?.statusCode ?? 0)")
        return try JSONDecoder().decode(User.self, from: data)
      },
      completionHandler: { result in
        events.append("completed \((try? result.get())?.id ?? 0)")
      })
    await offThePool { parseStarted.wait() }
    // While the parse is blocked, the callback queue still runs other work.
    await withCheckedContinuation { continuation in
      marked.queue.async {
        events.append("queue free")
        continuation.resume()
      }
    }
    releaseParse.open()
    #expect(await offThePool { fetcher.waitForCompletion(timeout: 30) })
    #expect(parseOnQueue.values == [false])
    #expect(events.values == ["queue free", "parsed 200", "completed 7"])
  }

  @Test func aParseErrorPassesThroughUnchanged() async {
    let fetcher = Self.engine().fetcher("/user")
    let result: Result<Int, any Error> = await result { done in
      fetcher.beginFetch(parsing: { _, _ in throw DecodingTests.ParseRefused() }, completionHandler: done)
    }
    #expect(result.error as? DecodingTests.ParseRefused == DecodingTests.ParseRefused())
  }

  @Test func cancellingTheTaskStopsADecodingFetch() async {
    let engine = ScriptedEngine()
    engine.respond(to: "/hang", with: .stall)
    let fetcher = engine.fetcher("/hang")
    let task = Task { try await fetcher.beginFetch(decoding: User.self) }
    #expect(await eventually { engine.requests.count == 1 })
    task.cancel()
    #expect((await task.result.error as? SessionFetcherError) == .cancelled)
    #expect(await eventually { engine.requests.first?.wasCancelled == true })
  }
}
