import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Backpressure on the scripted engine: a stream whose reader is behind suspends the exchange, and
/// the engine performs no step until the fetcher resumes it.
@Suite("Streaming backpressure (scripted)")
struct ScriptedStreamTests {
  @Test func aFullBufferSuspendsTheExchangeUntilTheReaderCatchesUp() async throws {
    let chunk = Data(repeating: 7, count: 1000)
    let engine = ScriptedEngine()
    engine.respond(to: "/stream", with: .response(chunks: Array(repeating: chunk, count: 10)))
    let fetcher = engine.fetcher("/stream")
    let stream = try await fetcher.beginStreaming(highWaterMark: 2500)
    // Nothing is read yet: the buffer passes its mark on the third chunk and the exchange stops.
    #expect(await eventually { engine.requests.first?.suspensionCount == 1 })
    try await Task.sleep(nanoseconds: 50_000_000)
    let suspended = try #require(engine.requests.first?.events.last)
    #expect(suspended.kind == .suspended)
    #expect(suspended.deliveredBodyBytes == 3000)
    #expect(stream.bufferedByteCount == 3000)
    var total = 0
    for try await data in stream { total += data.count }
    #expect(total == 10_000)
    let events = try #require(engine.requests.first?.events)
    #expect(events.filter { $0.kind == .resumed }.count == events.filter { $0.kind == .suspended }.count + 1)
    #expect(events.last?.kind == .completed(failed: false))
    #expect(engine.requests.count == 1)
  }
}
