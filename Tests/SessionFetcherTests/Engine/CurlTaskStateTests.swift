#if canImport(FoundationNetworking)
  import Foundation
  import SessionFetcher
  import Testing

  @Suite("Curl engine: task state machine")
  struct CurlTaskStateTests {
    private func makeState() -> CurlTaskState { CurlTaskState(handler: CurlRecordingHandler()) }

    /// Applies `event` outside the `#expect` macro (which cannot take a mutating call).
    private func result<T>(_ state: inout CurlTaskState, _ event: (inout CurlTaskState) -> T) -> T {
      event(&state)
    }

    @Test func resumeStartsOnceThenUnpausesOnlyAfterSuspend() {
      var state = makeState()
      #expect(result(&state, { $0.resume() }) == .start)
      #expect(state.phase == .running)
      #expect(result(&state, { $0.resume() }) == .none)
      #expect(result(&state, { $0.suspend() }))
      #expect(!result(&state, { $0.suspend() }))
      #expect(state.isSuspended)
      #expect(result(&state, { $0.resume() }) == .unpause)
      #expect(result(&state, { $0.resume() }) == .none)
    }

    @Test func suspendBeforeStartIsForgottenByTheStart() {
      var state = makeState()
      #expect(!result(&state, { $0.suspend() }))
      #expect(result(&state, { $0.resume() }) == .start)
      #expect(!state.isSuspended)
    }

    @Test func cancelIsSentOnceAndStopsAStart() {
      var state = makeState()
      #expect(result(&state, { $0.cancel() }))
      #expect(!result(&state, { $0.cancel() }))
      #expect(result(&state, { $0.resume() }) == .none)
      #expect(result(&state, { $0.complete(curlCode: nil, metrics: nil) }) != nil)
    }

    @Test func completionHandsTheHandlerOutOnce() {
      var state = makeState()
      _ = state.resume()
      let metrics = TransferMetrics(total: 1)
      #expect(result(&state, { $0.complete(curlCode: 56, metrics: metrics) }) != nil)
      #expect(result(&state, { $0.complete(curlCode: 0, metrics: nil) }) == nil)
      #expect(state.handler == nil)
      #expect(state.curlCode == 56)
      #expect(state.metrics == metrics)
      #expect(!result(&state, { $0.cancel() }))
      #expect(!result(&state, { $0.suspend() }))
      #expect(result(&state, { $0.resume() }) == .none)
    }
  }
#endif
