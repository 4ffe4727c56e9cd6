import CoreMetrics
import FetcherTesting
import Foundation
import InMemoryTracing
import Logging
import SessionFetcher
import SessionFetcherLog
import SessionFetcherMetrics
import SessionFetcherTracing
import Testing
import Tracing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A metrics factory whose every metric creation takes `delay` seconds.
final class SlowMetricsFactory: MetricsFactory, @unchecked Sendable {
  let delay: Double
  let used = Box(0)
  init(delay: Double) { self.delay = delay }

  private func slow() {
    used.mutate { $0 += 1 }
    Thread.sleep(forTimeInterval: delay)
  }

  func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
    slow()
    return NOOPMetricsHandler.instance
  }
  func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
    slow()
    return NOOPMetricsHandler.instance
  }
  func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
    slow()
    return NOOPMetricsHandler.instance
  }
  func destroyCounter(_ handler: any CounterHandler) {}
  func destroyRecorder(_ handler: any RecorderHandler) {}
  func destroyTimer(_ handler: any TimerHandler) {}
}

/// A tracer whose spans take `delay` seconds to start, annotate and end.
struct SlowTracer: Tracer {
  let inner = InMemoryTracer()
  let delay: Double

  func startSpan<Instant: TracerInstant>(
    _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
    at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
  ) -> InMemorySpan {
    Thread.sleep(forTimeInterval: delay)
    return inner.startSpan(
      operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID,
      line: line)
  }

  func activeSpan(identifiedBy context: ServiceContext) -> InMemorySpan? {
    inner.activeSpan(identifiedBy: context)
  }
  func forceFlush() { Thread.sleep(forTimeInterval: delay) }
  func extract<Carrier, Extract: Extractor>(
    _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
  ) where Extract.Carrier == Carrier {}
  func inject<Carrier, Inject: Injector>(
    _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
  ) where Inject.Carrier == Carrier {}
}

@Suite("Slow backends never hold up a fetch")
struct SlowBackendTests {
  /// Runs one fetch of a small body with `monitor` and returns how long it took.
  private func timedFetch(_ server: TestServer, monitor: any FetcherEventMonitor) async throws -> Double {
    let fetcher = makeTestService().fetcher(url: server.url("/bytes/100"))
    fetcher.eventMonitors = [monitor]
    let start = Date()
    _ = try await fetcher.beginFetch()
    return Date().timeIntervalSince(start)
  }

  @Test("A log handler that takes 1 s per message")
  func slowLogHandler() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let store = Box<[CapturedLog]>([])
    let monitor = FetcherLogMonitor(logger: capturingLogger(store, delay: 1))
    let elapsed = try await timedFetch(server, monitor: monitor)
    #expect(elapsed < 0.9, "the fetch took \(elapsed) s")
    await monitor.flush()
    #expect(store.value.last?.message == "fetch succeeded")
  }

  @Test("A metrics backend that takes 1 s per metric")
  func slowMetrics() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let factory = SlowMetricsFactory(delay: 1)
    let monitor = FetcherMetricsMonitor(factory: factory)
    let elapsed = try await timedFetch(server, monitor: monitor)
    #expect(elapsed < 0.9, "the fetch took \(elapsed) s")
    await monitor.flush()
    #expect(factory.used.value >= 4)
  }

  @Test("A tracer that takes 1 s per span")
  func slowTracer() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let tracer = SlowTracer(delay: 1)
    let monitor = FetcherTracingMonitor(tracer: tracer)
    let elapsed = try await timedFetch(server, monitor: monitor)
    #expect(elapsed < 0.9, "the fetch took \(elapsed) s")
    await monitor.flush()
    #expect(tracer.inner.finishedSpans.count == 1)
  }

  @Test("A backend that falls behind by the buffer's capacity drops newer events instead of growing")
  func boundedBuffer() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let store = Box<[CapturedLog]>([])
    let monitor = FetcherLogMonitor(logger: capturingLogger(store, delay: 0.5), bufferCapacity: 2)
    _ = try await timedFetch(server, monitor: monitor)
    #expect(monitor.droppedMessageCount > 0)
    await monitor.flush()
    #expect(store.value.count <= 3)
  }
}
