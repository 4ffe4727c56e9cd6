#if canImport(FoundationNetworking)
  import FetcherTesting
  import Foundation
  import SessionFetcher
  import Testing
  import TestTraits

  @Suite("Curl engine: per-host queue", .ownThreads)
  struct CurlHostQueueTests {
    /// Keeps `inflight` exchanges running until `count` have completed, each started from the
    /// completion of one before it (a closed loop), and records the order they completed in.
    ///
    /// `@unchecked Sendable`: `state` is behind its `Locked` wrapper; `engine` and `urls` are set once.
    final class ClosedLoop: @unchecked Sendable {
      struct State {
        var started = 0
        var completionOrder: [Int] = []
        var failures: [String] = []
      }

      let engine: CurlEngine
      let urls: [URL]
      let count: Int
      let state = Locked(State())
      private let done = DispatchSemaphore(value: 0)

      init(engine: CurlEngine, urls: [URL], count: Int) {
        self.engine = engine
        self.urls = urls
        self.count = count
      }

      func run(inflight: Int) -> Bool {
        for _ in 0..<inflight { startNext() }
        return done.wait(timeout: .now() + 60) == .success
      }

      /// Numbers and resumes the next exchange under the lock, so the engine is handed them in the
      /// order of their numbers (the first ones come from the test's thread while completions on
      /// the loop thread start more).
      private func startNext() {
        state.withLock { state in
          guard state.started < count else { return }
          let index = state.started
          state.started += 1
          let handler = EngineCompletionHandler { [self] _, error in completed(index, error: error) }
          let url = urls[index % urls.count]
          guard let task = engine.makeTask(request: URLRequest(url: url), body: .none, handler: handler)
          else {
            state.failures.append("no task for \(index)")
            return
          }
          task.resume()
        }
      }

      private func completed(_ index: Int, error: (any Error)?) {
        let finished = state.withLock { state -> Bool in
          if let error { state.failures.append("\(index): \(error)") }
          state.completionOrder.append(index)
          return state.completionOrder.count == count
        }
        if finished { done.signal() } else { startNext() }
      }

      /// For each exchange, how many started after it completed before it; the largest.
      var mostOvertaken: Int {
        let order = state.current.completionOrder
        var position = [Int](repeating: 0, count: order.count)
        for (place, index) in order.enumerated() { position[index] = place }
        var most = 0
        for index in order.indices {
          let overtaken = (index + 1..<order.count).count { position[$0] < position[index] }
          most = max(most, overtaken)
        }
        return most
      }
    }

    /// 32 exchanges kept in flight to one HTTP/1.1 host with one connection, each new one started
    /// as one completes: they complete in the order they were started. libcurl alone let a newly
    /// added transfer take the freed connection ahead of those it had queued, so some waited while
    /// hundreds started after them went through.
    @Test func http1HostServesQueuedExchangesInOrder() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine(perHost: 1)
      let loop = ClosedLoop(engine: engine, urls: [server.url("/bytes/5")], count: 600)
      #expect(loop.run(inflight: 32))
      #expect(loop.state.current.failures.isEmpty)
      #expect(loop.state.current.completionOrder.count == 600)
      let overtaken = loop.mostOvertaken
      #expect(overtaken == 0, "an exchange was overtaken by \(overtaken) started after it")
      #expect(Set(server.requests.map(\.connectionID)).count == 1)
      // The rest waited in the engine, not on libcurl's pending list.
      #expect(engine.mostTransfersAtOnce == 1)
      #expect(engine.runningTransferCount == 0)
    }

    /// Starts a task for `path` on `engine`, recorded by a new handler.
    private func started(_ engine: CurlEngine, _ server: TestServer, _ path: String) throws -> (
      CurlTask, CurlRecordingHandler
    ) {
      let handler = CurlRecordingHandler()
      let task = try #require(
        engine.makeTask(request: URLRequest(url: server.url(path)), body: .none, handler: handler))
      task.resume()
      return (task, handler)
    }

    /// Takes the host's one slot with an exchange the server never answers, once it has reached
    /// the server.
    private func takeTheOnlySlot(_ engine: CurlEngine, _ server: TestServer) async throws -> (
      CurlTask, CurlRecordingHandler
    ) {
      let taken = try started(engine, server, "/hang")
      #expect(await eventually { server.requestCount(path: "/hang") == 1 })
      return taken
    }

    /// An exchange cancelled while it waits for the host's one connection ends at once, is never
    /// sent, and the next one still gets the slot when the running one ends.
    @Test func cancelWhileWaitingEndsAtOnceAndNeverSends() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine(perHost: 1)
      let (running, runningHandler) = try await takeTheOnlySlot(engine, server)
      let (waiting, waitingHandler) = try started(engine, server, "/bytes/10")
      #expect(await eventually { engine.runningTransferCount == 2 })
      waiting.cancel()
      #expect(waitingHandler.waitForCompletion())
      #expect(waitingHandler.current.completions.first!.urlErrorCode == .cancelled)
      #expect(waitingHandler.current.events == ["complete"])
      #expect(await eventually { engine.runningTransferCount == 1 })
      let (next, nextHandler) = try started(engine, server, "/bytes/20")
      // The loop has taken the next one in (to wait, or, wrongly, to run beside the running one).
      #expect(await eventually { engine.runningTransferCount == 2 })
      #expect(nextHandler.current.events.isEmpty, "started while the host's one slot was taken")
      running.cancel()
      #expect(runningHandler.waitForCompletion())
      #expect(nextHandler.waitForCompletion(), "no completion: \(next.diagnosticSummary)")
      #expect(nextHandler.current.completions.first! == nil)
      #expect(nextHandler.current.body.count == 20)
      #expect(server.requestCount(path: "/bytes/10") == 0)
      #expect(await eventually { engine.runningTransferCount == 0 })
      // Never two transfers at once: the next one ran only after the running one ended.
      #expect(engine.mostTransfersAtOnce == 1, "two transfers ran at once on a one-slot host")
    }

    /// An exchange cancelled while it waits is let go at once, not kept in the queue (with its
    /// request and body) until a slot frees.
    @Test func aCancelledWaitingExchangeIsLetGo() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine(perHost: 1)
      let (running, runningHandler) = try await takeTheOnlySlot(engine, server)
      weak var released: CurlTask?
      do {
        let (waiting, handler) = try started(engine, server, "/bytes/10")
        released = waiting
        #expect(await eventually { engine.runningTransferCount == 2 })
        waiting.cancel()
        #expect(handler.waitForCompletion())
      }
      #expect(await eventually { released == nil }, "the cancelled task is still held")
      running.cancel()
      #expect(runningHandler.waitForCompletion())
    }

    /// Suspended while it waits: when its turn comes, no body reaches the handler until it is
    /// resumed (the transfer's write callback pauses it, as for any suspended task).
    @Test func suspendedWhileWaitingStartsSuspended() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine(perHost: 1)
      let (_, firstHandler) = try started(engine, server, "/delay/0.2")
      let (waiting, waitingHandler) = try started(engine, server, "/bytes/100000")
      waiting.suspend()
      #expect(firstHandler.waitForCompletion())
      #expect(firstHandler.current.completions.first! == nil)
      try await Task.sleep(nanoseconds: 300_000_000)
      #expect(waitingHandler.current.body.isEmpty, "delivered while suspended")
      waiting.resume()
      #expect(waitingHandler.waitForCompletion(), "no completion: \(waiting.diagnosticSummary)")
      #expect(waitingHandler.current.completions.first! == nil)
      #expect(waitingHandler.current.body.count == 100_000)
    }

    /// `invalidateAndCancel` ends the waiting exchanges as well as the running one, and the loop
    /// thread ends.
    @Test func invalidateAndCancelEndsWaitingExchanges() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine(perHost: 1)
      let (_, runningHandler) = try await takeTheOnlySlot(engine, server)
      let waiting = try (0..<5).map { _ in try started(engine, server, "/bytes/10").1 }
      engine.invalidateAndCancel()
      for handler in [runningHandler] + waiting {
        #expect(handler.waitForCompletion())
        #expect(handler.current.completions.first!.urlErrorCode == .cancelled)
      }
      #expect(server.requestCount(path: "/bytes/10") == 0)
      #expect(await eventually { engine.runningTransferCount == 0 })
    }

    /// `finishTasksAndInvalidate` lets the waiting exchanges run to their end, in turn.
    @Test func finishTasksAndInvalidateRunsWaitingExchanges() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine(perHost: 1)
      let handlers = try (0..<6).map { _ in try started(engine, server, "/bytes/10").1 }
      engine.finishTasksAndInvalidate()
      for handler in handlers {
        #expect(handler.waitForCompletion())
        #expect(handler.current.completions.first! == nil)
        #expect(handler.current.body.count == 10)
      }
      #expect(server.requestCount(path: "/bytes/10") == 6)
    }
  }
#endif
