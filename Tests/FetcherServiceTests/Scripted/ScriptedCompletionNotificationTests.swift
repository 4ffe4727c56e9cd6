import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// `sessionFetcherCompletionInvoked` follows one rule, whatever ended the fetch: one post for every
/// call of a completion handler (or resume of an `async` caller), none without one. Counted per
/// fetcher object, on the scripted engine: a late completion would follow the exchange's end, which
/// the test waits for by draining the engine's events and the callback queue, not by sleeping.
@Suite("sessionFetcherCompletionInvoked on the scripted engine")
struct ScriptedCompletionNotificationTests {
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

    /// What the exchange answers.
    var exchange: ScriptedExchange {
      switch self {
      case .closureSuccess, .asyncSuccess, .beganTwice: .response(body: Data("0123456789".utf8))
      case .closureHTTPError, .asyncHTTPError: .response(status: 503)
      default: .stall
      }
    }
  }

  @Test("one post per completion call", arguments: EndKind.allCases)
  func onePostPerCompletion(kind: EndKind) async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/fetch", with: kind.exchange)
    let service = ScriptedServiceTests.service(engine)
    let fetcher = service.fetcher(url: engine.url("/fetch"))
    let recorder = NotificationRecorder([fetcher])
    let completions = Recorder<String>()
    let record: FetcherCompletionHandler = { _, error in
      completions.append(error.map { "\($0)" } ?? "success")
    }
    let waitForRequest = { #expect(await eventually { engine.requests.count == 1 }) }

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
    #expect(await eventually { !fetcher.isFetching })
    // Anything late has had its chance: every exchange has ended, the fetcher was told, and what it
    // queued for its callbacks has run.
    #expect(await eventually { engine.requests.allSatisfy(\.hasCompleted) })
    await engine.drainEvents()
    await drain(fetcher.callbackQueue)
    await drain(service.callbackQueue)
    #expect(completions.count == expected, "\(completions.values)")
    #expect(recorder.completionInvoked == expected)
    #expect(recorder.started == recorder.stopped)
  }

  /// Many `async` fetches cancelled at every stage (before begin, at once, while waiting for the
  /// service, on the wire) or finished: each resumes its caller once and posts once.
  @Test("every cancelled async fetch posts exactly once")
  func cancelledAsyncFetchesPostOnce() async throws {
    let engine = ScriptedEngine()
    engine.respond(to: "/hang", with: .stall)
    engine.respond(to: "/bytes", with: .response(body: Data("0123456789".utf8)))
    let service = ScriptedServiceTests.service(engine, maxPerHost: 4)
    let recorder = NotificationRecorder()
    let resumed = Recorder<Int>()
    var tasks: [Task<Void, Never>] = []
    // Kept until the posts are counted: a freed fetcher's address may be another's.
    var fetchers: [SessionFetcher] = []
    for index in 0..<200 {
      let fetcher = service.fetcher(url: engine.url(index % 3 == 0 ? "/hang" : "/bytes"))
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
    // The rest is cancelled once stalled fetches hold every slot: some running, some waiting for a
    // slot, some finished.
    #expect(await eventually { engine.requests(matching: "/hang").count >= 4 })
    for task in tasks { task.cancel() }
    for task in tasks { await task.value }
    await engine.drainEvents()
    await drain(service.callbackQueue)
    #expect(resumed.count == 200)
    #expect(recorder.completionInvoked == 200)
    // Exactly one each: 200 posts from 200 distinct fetchers.
    #expect(recorder.order(of: .sessionFetcherCompletionInvoked).count == 200)
    #expect(fetchers.allSatisfy { !$0.isFetching })
  }
}
