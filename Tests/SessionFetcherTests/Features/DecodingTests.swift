import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

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

  @Test func theDecoderIsUsed() async throws {
    let server = try TestServer()
    defer { server.stop() }
    server.route("/snake") { _ in .json(#"{"id":1,"display_name":"x"}"#) }
    struct Profile: Decodable, Sendable { var displayName: String }
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    let profile = try await server.fetcher("/snake").beginFetch(decoding: Profile.self, using: decoder)
    #expect(profile.displayName == "x")
  }

  @Test func closureDecodingDeliversOnTheCallbackQueue() async throws {
    let server = try serverWithUser()
    defer { server.stop() }
    let marked = MarkedQueue()
    let fetcher = server.fetcher("/user", queue: marked.queue)
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

  @Test func aBodyThatDoesNotDecodeFailsWithTheDecodingError() async throws {
    let server = try serverWithUser()
    defer { server.stop() }
    let fetcher = server.fetcher("/not-json")
    await #expect(throws: DecodingError.self) {
      _ = try await fetcher.beginFetch(decoding: User.self)
    }
    // The fetch itself succeeded: its body stays available for diagnosis.
    #expect(fetcher.error == nil)
    #expect(fetcher.downloadedData == Data("<html>maintenance</html>".utf8))
  }

  @Test func closureDecodingFailureIsADecodingError() async throws {
    let server = try serverWithUser()
    defer { server.stop() }
    let fetcher = server.fetcher("/not-json")
    let result = await result { done in fetcher.beginFetch(decoding: User.self, completionHandler: done) }
    #expect(result.error is DecodingError)
  }

  @Test func anHTTPErrorArrivesAsAStatusErrorWithTheBodyAndIsNotParsed() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let parsed = Recorder<Int>()
    let fetcher = server.fetcher("/status/404")
    let result = await result { done in
      fetcher.beginFetch(
        parsing: { data, _ in
          parsed.append(data.count)
          return data.count
        }, completionHandler: done)
    }
    let error = try #require(result.error as? SessionFetcherError)
    #expect(error.statusCode == 404)
    #expect(String(decoding: error.data ?? Data(), as: UTF8.self).contains("Server Status 404"))
    #expect(parsed.count == 0)

    await #expect(throws: SessionFetcherError.self) {
      _ = try await server.fetcher("/status/500").beginFetch(decoding: User.self)
    }
  }

  @Test func theParseRunsOffTheCallbackQueueWhichStaysFree() async throws {
    let server = try serverWithUser()
    defer { server.stop() }
    let marked = MarkedQueue()
    let fetcher = server.fetcher("/user", queue: marked.queue)
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

  @Test func aParseErrorPassesThroughUnchanged() async throws {
    let server = try serverWithUser()
    defer { server.stop() }
    let fetcher = server.fetcher("/user")
    let result: Result<Int, any Error> = await result { done in
      fetcher.beginFetch(parsing: { _, _ in throw ParseRefused() }, completionHandler: done)
    }
    #expect(result.error as? ParseRefused == ParseRefused())
  }

  @Test func stoppingDuringTheParseDeliversNothing() async throws {
    let server = try serverWithUser()
    defer { server.stop() }
    let fetcher = server.fetcher("/user")
    let parseStarted = Gate()
    let releaseParse = Gate()
    let completions = Recorder<String>()
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
    try await Task.sleep(nanoseconds: 200_000_000)
    #expect(completions.count == 0)
  }

  @Test func cancellingTheTaskStopsADecodingFetch() async throws {
    let server = try serverWithUser()
    defer { server.stop() }
    let fetcher = server.fetcher("/hang")
    let task = Task { try await fetcher.beginFetch(decoding: User.self) }
    #expect(await eventually { server.requestCount(path: "/hang") == 1 })
    task.cancel()
    #expect((await task.result.error as? SessionFetcherError) == .cancelled)
  }
}
