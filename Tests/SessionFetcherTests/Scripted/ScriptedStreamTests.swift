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
    // Whatever the engine had queued by then has been performed: still suspended, nothing more.
    await engine.drainEvents()
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

  /// The exchange is suspended when the buffer passes the high-water mark and resumed only once the
  /// reader has taken it down to the low-water mark, each time.
  @Test func theExchangeIsSuspendedAndResumedAtTheMarks() async throws {
    let chunk = Data(repeating: 7, count: 1000)
    let engine = ScriptedEngine()
    engine.respond(to: "/stream", with: .response(chunks: Array(repeating: chunk, count: 8)))
    let fetcher = engine.fetcher("/stream")
    let stream = try await fetcher.beginStreaming(highWaterMark: 2500, lowWaterMark: 1000)
    func events() -> [ScriptedTaskEvent] { engine.requests.first?.events ?? [] }
    func count(_ kind: ScriptedTaskEvent.Kind) -> Int { events().filter { $0.kind == kind }.count }
    // Past the high-water mark (3000 > 2500): suspended with 3000 bytes delivered.
    #expect(await eventually { count(.suspended) == 1 })
    #expect(events().last?.deliveredBodyBytes == 3000)
    var reader = stream.makeAsyncIterator()
    // 2000 left, above the low-water mark: still suspended (the decision is made within `next()`).
    #expect(try await reader.next() == chunk)
    #expect(stream.bufferedByteCount == 2000)
    #expect(count(.resumed) == 1)
    #expect(events().last?.kind == .suspended)
    // 1000 left, at the low-water mark: resumed.
    #expect(try await reader.next() == chunk)
    #expect(count(.resumed) == 2)
    // Two more chunks (1000 + 2000 > 2500): suspended again, with 5000 bytes delivered.
    #expect(await eventually { count(.suspended) == 2 })
    #expect(events().last { $0.kind == .suspended }?.deliveredBodyBytes == 5000)
    var total = 2000
    while let data = try await reader.next() { total += data.count }
    #expect(total == 8000)
    #expect(count(.resumed) == count(.suspended) + 1)
    #expect(events().last?.kind == .completed(failed: false))
  }
}
