import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// `sessionFetcherCompletionInvoked` follows one rule, whatever ended the fetch: one post for every
/// call of a completion handler (or resume of an `async` caller), none without one. Counted per
/// fetcher object, on the engine the tests run on.
@Suite("sessionFetcherCompletionInvoked")
struct CompletionNotificationTests {
  /// The ways a fetch ends.
  enum EndKind: String, CaseIterable, CustomTestStringConvertible {
    case closureSuccess, closureHTTPError, asyncSuccess, asyncHTTPError
    case asyncTaskCancelledBeforeBegin, asyncTaskCancelledWhileRunning, asyncStopFetching
    case stopWithoutCompletionFlag, stopWithCompletionFlag, stopBeforeBeginWithCompletionFlag
    case stopBeforeBeginWithoutCompletionFlag, stopAllWithoutCompletionFlag, stopAllWithCompletionFlag
    case stopAllAsync, beganTwice

    var testDescription: String { rawValue }

    /// How many completions (and so posts) the fetcher gets.
    var expectedCompletions: Int {
      switch self {
      case .stopWithoutCompletionFlag, .stopBeforeBeginWithoutCompletionFlag, .stopAllWithoutCompletionFlag: 0
      case .beganTwice: 2
      default: 1
      }
    }
  }

  @Test("one post per completion call", arguments: EndKind.allCases)
  func onePostPerCompletion(kind: EndKind) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    let path: String =
      switch kind {
      case .closureSuccess, .asyncSuccess, .beganTwice: "/bytes/10"
      case .closureHTTPError, .asyncHTTPError: "/status/503"
      default: "/hang"
      }
    let fetcher = service.fetcher(url: server.url(path))
    let recorder = NotificationRecorder([fetcher])
    let completions = Recorder<String>()
    let record: FetcherCompletionHandler = { _, error in
      completions.append(error.map { "\($0)" } ?? "success")
    }
    let waitForRequest = { #expect(await eventually { server.requestCount(path: "/hang") == 1 }) }

    switch kind {
    case .closureSuccess, .closureHTTPError:
      fetcher.beginFetch(completionHandler: record)
    case .asyncSuccess, .asyncHTTPError:
      do { _ = try await fetcher.beginFetch() } catch {}
      completions.append("resumed")
    case .asyncTaskCancelledBeforeBegin:
      let task = Task {
        withUnsafeCurrentTask { $0?.cancel() }
        do { _ = try await fetcher.beginFetch() } catch {}
      }
      await task.value
      completions.append("resumed")
    case .asyncTaskCancelledWhileRunning, .stopAllAsync, .asyncStopFetching:
      let task = Task {
        do { _ = try await fetcher.beginFetch() } catch {}
      }
      await waitForRequest()
      switch kind {
      case .asyncTaskCancelledWhileRunning: task.cancel()
      case .stopAllAsync: service.stopAllFetchers()
      default: fetcher.stopFetching()
      }
      await task.value
      completions.append("resumed")
    case .stopWithoutCompletionFlag, .stopWithCompletionFlag:
      fetcher.stopFetchingTriggersCompletionHandler = kind == .stopWithCompletionFlag
      fetcher.beginFetch(completionHandler: record)
      await waitForRequest()
      fetcher.stopFetching()
    case .stopBeforeBeginWithCompletionFlag, .stopBeforeBeginWithoutCompletionFlag:
      fetcher.stopFetchingTriggersCompletionHandler = kind == .stopBeforeBeginWithCompletionFlag
      fetcher.stopFetching()
      fetcher.beginFetch(completionHandler: record)
    case .stopAllWithoutCompletionFlag, .stopAllWithCompletionFlag:
      fetcher.stopFetchingTriggersCompletionHandler = kind == .stopAllWithCompletionFlag
      fetcher.beginFetch(completionHandler: record)
      await waitForRequest()
      service.stopAllFetchers()
    case .beganTwice:
      fetcher.beginFetch(completionHandler: record)
      fetcher.beginFetch(completionHandler: record)
    }

    let expected = kind.expectedCompletions
    #expect(await eventually { completions.count >= expected })
    // Anything late has had its chance: the fetch is over and its queue drained.
    #expect(await eventually { !fetcher.isFetching })
    await pause(0.2)
    await drain(fetcher.callbackQueue)
    #expect(completions.count == expected, "\(completions.values)")
    #expect(recorder.completionInvoked == expected)
    #expect(recorder.started == recorder.stopped)
  }

  /// Many `async` fetches cancelled at every stage (before begin, at once, while waiting for the
  /// service, on the wire) or finished: each resumes its caller once and posts once.
  @Test("every cancelled async fetch posts exactly once")
  func cancelledAsyncFetchesPostOnce() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService(maxPerHost: 4)
    let recorder = NotificationRecorder()
    let resumed = Recorder<Int>()
    var tasks: [Task<Void, Never>] = []
    var fetchers: [SessionFetcher] = []
    for index in 0..<200 {
      let fetcher = service.fetcher(url: server.url(index % 3 == 0 ? "/hang" : "/bytes/10"))
      recorder.watch(fetcher)
      fetchers.append(fetcher)
      let task = Task {
        if index % 4 == 0 { withUnsafeCurrentTask { $0?.cancel() } }
        do { _ = try await fetcher.beginFetch() } catch {}
        resumed.append(index)
      }
      if index % 4 == 1 { task.cancel() }
      tasks.append(task)
    }
    // The rest is cancelled once hanging fetches hold every slot: some on the wire, some waiting for
    // a slot, some finished.
    #expect(await eventually { server.requestCount(path: "/hang") >= 4 })
    for task in tasks { task.cancel() }
    for task in tasks { await task.value }
    await drain(service.callbackQueue)
    #expect(resumed.count == 200)
    #expect(recorder.completionInvoked == 200)
    // Exactly one each: 200 posts from 200 distinct fetchers.
    #expect(recorder.order(of: .sessionFetcherCompletionInvoked).count == 200)
  }
}
