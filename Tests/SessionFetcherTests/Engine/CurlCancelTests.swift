#if canImport(FoundationNetworking)
  import FetcherTesting
  import Foundation
  import SessionFetcher
  import Testing
  import TestTraits

  @Suite("Curl engine: cancel", .ownThreads)
  struct CurlCancelTests {
    @Test func cancelFromAnotherThreadMidBodyCompletesOnceCancelled() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let handler = CurlRecordingHandler()
      weak var released: CurlTask?
      let after: Int
      do {
        // 50 s of drip: the cancellation always lands mid-body, however slow the machine is.
        let task = try #require(
          engine.makeTask(
            request: URLRequest(url: server.url("/drip?bytes=100000&chunks=1000&interval=50")),
            body: .none, handler: handler))
        released = task
        task.resume()
        #expect(await eventually { !handler.current.body.isEmpty })
        await withTaskGroup(of: Void.self) { group in
          for _ in 0..<8 { group.addTask { task.cancel() } }
        }
        #expect(handler.waitForCompletion())
        task.cancel()
        let record = handler.current
        #expect(record.completions.count == 1)
        #expect(record.completions.first!.urlErrorCode == .cancelled)
        #expect(record.events.last == "complete")
        #expect(record.body.count < 100_000)
        after = record.body.count
      }
      #expect(await eventually { engine.runningTransferCount == 0 })
      // Nothing arrives after the completion: every callback of the transfer reaches the handler
      // through its task, which the loop holds until the transfer is detached; once it is freed,
      // nothing more can come.
      #expect(await eventually { released == nil }, "the cancelled task is still held")
      #expect(handler.current.body.count == after)
      #expect(handler.current.completions.count == 1)
    }

    @Test func cancelInsideDataCallbackStopsDelivery() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let (record, _) = try curlExchange(engine, URLRequest(url: server.url("/bytes/20000000"))) { handler in
        handler.onData = { task, _ in
          task.cancel()
          task.cancel()
        }
      }
      #expect(record.completions.count == 1)
      #expect(record.completions.first!.urlErrorCode == .cancelled)
      #expect(record.chunks == 1)
      #expect(record.events == ["response 200", "data", "complete"])
      #expect(engine.runningTransferCount == 0)
    }

    @Test func cancelBeforeResumeNeverSends() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let handler = CurlRecordingHandler()
      let task = try #require(
        engine.makeTask(request: URLRequest(url: server.url("/bytes/10")), body: .none, handler: handler))
      task.cancel()
      #expect(handler.waitForCompletion())
      task.resume()
      task.cancel()
      #expect(handler.current.completions.count == 1)
      #expect(handler.current.completions.first!.urlErrorCode == .cancelled)
      #expect(handler.current.events == ["complete"])
      #expect(server.requestCount(path: "/bytes/10") == 0)
    }

    @Test func invalidateAndCancelEndsRunningTransfers() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let handler = CurlRecordingHandler()
      let task = try #require(
        engine.makeTask(request: URLRequest(url: server.url("/hang")), body: .none, handler: handler))
      task.resume()
      #expect(
        engine.makeTask(request: URLRequest(url: server.url("/hang")), body: .none, handler: handler) != nil)
      engine.invalidateAndCancel()
      #expect(engine.isInvalidated)
      #expect(
        engine.makeTask(request: URLRequest(url: server.url("/hang")), body: .none, handler: handler) == nil)
      #expect(handler.waitForCompletion())
      #expect(handler.current.completions.count == 1)
      #expect(handler.current.completions.first!.urlErrorCode == .cancelled)
    }
  }
#endif
