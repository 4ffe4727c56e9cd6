import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("async/await")
struct AsyncTests {
  @Test func beginFetchReturnsTheBody() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let data = try await server.fetcher("/bytes/1234").beginFetch()
    #expect(data == TestServer.patternBytes(count: 1234))
  }

  @Test func beginFetchThrowsStatusErrorsWithTheBody() async throws {
    let server = try TestServer()
    defer { server.stop() }
    do {
      _ = try await server.fetcher("/status/404").beginFetch()
      Issue.record("expected an error")
    } catch let error as SessionFetcherError {
      #expect(error.statusCode == 404)
      #expect(error.data?.isEmpty == false)
    }
  }

  @Test func cancellingTheTaskStopsTheFetch() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/hang")
    let counter = NotificationRecorder([fetcher])
    let task = Task { try await fetcher.beginFetch() }
    #expect(await eventually { server.requestCount(path: "/hang") == 1 })
    task.cancel()
    let result = await task.result
    #expect((result.error as? SessionFetcherError) == .cancelled)
    #expect(!fetcher.isFetching)
    #expect(await eventually { counter.stopped == 1 })
  }

  @Test func stopFetchingEndsTheAwaitEvenWithoutTheFlag() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/hang")
    #expect(!fetcher.stopFetchingTriggersCompletionHandler)
    let task = Task { try await fetcher.beginFetch() }
    #expect(await eventually { server.requestCount(path: "/hang") == 1 })
    fetcher.stopFetching()
    #expect((await task.result.error as? SessionFetcherError) == .cancelled)
  }
}

extension Result {
  var error: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
