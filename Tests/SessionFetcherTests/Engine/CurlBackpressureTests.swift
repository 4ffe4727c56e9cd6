#if canImport(FoundationNetworking)
  import FetcherTesting
  import Foundation
  import SessionFetcher
  import Testing
  import TestTraits

  @Suite("Curl engine: suspend and resume", .ownThreads)
  struct CurlBackpressureTests {
    /// Waits until the server has stopped writing (its count unchanged over several looks), up to
    /// 10 seconds; returns the count.
    private func settledBytesWritten(_ server: TestServer, path: String) async throws -> Int {
      var last = -1
      var steady = 0
      for _ in 0..<200 where steady < 5 {
        try await Task.sleep(nanoseconds: 50_000_000)
        let now = server.bytesWritten(path: path)
        steady = now == last ? steady + 1 : 0
        last = now
      }
      return last
    }

    @Test func suspendInsideDataCallbackHoldsTheRestUntilResumed() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let length = 40_000_000
      let path = "/bytes/\(length)"
      let handler = CurlRecordingHandler()
      let suspended = DispatchSemaphore(value: 0)
      let once = Locked(false)
      handler.onData = { task, _ in
        guard
          once.withLock({ done in
            defer { done = true }; return !done
          })
        else { return }
        task.suspend()
        suspended.signal()
      }
      let task = try #require(
        engine.makeTask(request: URLRequest(url: server.url(path)), body: .none, handler: handler))
      task.resume()
      #expect(suspended.wait(timeout: .now() + 30) == .success)
      let deliveredAtSuspend = handler.current.body.count
      let written = try await settledBytesWritten(server, path: path)
      // Not one byte more reached the handler, and the server was held back by the full socket
      // buffers: libcurl stopped reading instead of buffering the body.
      #expect(handler.current.body.count == deliveredAtSuspend)
      #expect(handler.current.chunks == 1)
      #expect(written < length / 2)
      task.resume()
      #expect(handler.waitForCompletion())
      let record = handler.current
      #expect(record.completions.first! == nil)
      #expect(record.body.count == length)
      #expect(TestServer.checksum(record.body) == TestServer.checksum(TestServer.patternBytes(count: length)))
    }

    @Test func suspendFromAnotherThreadStopsDeliveryAtOnce() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let handler = CurlRecordingHandler()
      let firstChunk = DispatchSemaphore(value: 0)
      handler.onData = { _, _ in firstChunk.signal() }
      let task = try #require(
        engine.makeTask(
          request: URLRequest(url: server.url("/drip?bytes=40000&chunks=400&interval=10")), body: .none,
          handler: handler))
      task.resume()
      #expect(firstChunk.wait(timeout: .now() + 30) == .success)
      task.suspend()
      task.suspend()
      // A chunk the loop thread was already delivering may still land; after that, nothing.
      try await Task.sleep(nanoseconds: 100_000_000)
      let atSuspend = handler.current.body.count
      try await Task.sleep(nanoseconds: 300_000_000)
      #expect(handler.current.body.count == atSuspend)
      #expect(atSuspend < 40000)
      task.resume()
      task.resume()
      #expect(handler.waitForCompletion())
      #expect(handler.current.body == TestServer.patternBytes(count: 40000))
      #expect(handler.current.completions.count == 1)
    }
  }
#endif
