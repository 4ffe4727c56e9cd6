import CoreMetrics
import FetcherService
import FetcherTesting
import Foundation
import HTTPBinAPI
import InMemoryTracing
import Logging
import MetricsTestKit
import SessionFetcher
import SessionFetcherLog
import SessionFetcherMetrics
import SessionFetcherOpenAPI
import SessionFetcherTracing
import Testing
import Tracing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Runs `fetcher` to its end; returns the error, if any.
@discardableResult
func run(_ fetcher: SessionFetcher) async -> (any Error)? {
  do {
    _ = try await fetcher.beginFetch()
    return nil
  } catch {
    return error
  }
}

@Suite("SessionFetcherLog")
struct LogMonitorTests {
  @Test("A failing fetch logs begin, the retry with its delay and the failure, redacted, at operator levels")
  func failureAndRetryAreLogged() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let store = Box<[CapturedLog]>([])
    let monitor = FetcherLogMonitor(logger: capturingLogger(store))
    let service = makeTestService(retries: true)
    service.maxRetryInterval = 0.3
    let fetcher = service.fetcher(url: server.url("/status/503?access_token=SECRET1234"))
    fetcher.setRequestValue("Bearer SECRET1234", forHTTPHeaderField: "Authorization")
    fetcher.eventMonitors = [monitor]
    fetcher.comment = "refresh"
    let error = await run(fetcher)
    #expect((error as? SessionFetcherError)?.statusCode == 503)
    await monitor.flush()
    let logs = store.value
    #expect(logs.first?.message == "fetch began")
    #expect(logs.first?.level == .debug)
    let retry = try #require(logs.first { $0.message == "attempt failed, will retry" })
    #expect(retry.level == .warning)
    #expect(retry.metadata["retry.delay"] != nil)
    #expect(retry.metadata["error.type"] == "503")
    let sends = logs.filter { $0.message == "sending request" }
    #expect(sends.map { $0.metadata["attempt"] } == (1...sends.count).map { "\($0)" })
    #expect(sends.allSatisfy { $0.level == .trace })
    let final = try #require(logs.last)
    #expect(final.message == "fetch failed")
    #expect(final.level == .error)
    #expect(final.metadata["http.response.status_code"] == "503")
    #expect(final.metadata["server.address"] == "127.0.0.1")
    #expect(final.metadata["http.request.method"] == "GET")
    #expect(final.metadata["fetch.comment"] == "refresh")
    #expect(final.metadata["url.full"]?.contains("access_token=_snip_") == true)
    #expect(Set(logs.map { $0.metadata["fetch.id"] }).count == 1)
    // The secret appears nowhere: not in the URL, not in the headers, not in error texts.
    #expect(logs.allSatisfy { !$0.allText.contains("SECRET1234") })
    #expect(logs.contains { $0.metadata["http.request.header"]?.contains("Bearer _snip_") == true })
  }

  @Test("A successful fetch logs its completion at debug with status, bytes and duration")
  func successIsLogged() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let store = Box<[CapturedLog]>([])
    let monitor = FetcherLogMonitor(logger: capturingLogger(store))
    let fetcher = makeTestService().fetcher(url: server.url("/bytes/1234"))
    fetcher.eventMonitors = [monitor]
    #expect(await run(fetcher) == nil)
    await monitor.flush()
    let final = try #require(store.value.last)
    #expect(final.message == "fetch succeeded")
    #expect(final.level == .debug)
    #expect(final.metadata["http.response.status_code"] == "200")
    #expect(final.metadata["http.response.body.size"] == "1234")
    #expect(final.metadata["duration"] != nil)
    #expect(!store.value.contains { $0.level >= .warning })
  }

  @Test("A response stream broken mid-body fails the operation's body, and the log shows it")
  func brokenStreamIsLogged() async throws {
    let server = try TestServer()
    defer { server.stop() }
    server.route("/stream-bytes/100000") { _ in
      .fault(.reset(announcedLength: 100_000), body: TestServer.patternBytes(count: 1000))
    }
    let store = Box<[CapturedLog]>([])
    let monitor = FetcherLogMonitor(logger: capturingLogger(store))
    let transport = SessionFetcherTransport(
      service: makeTestService(),
      configuration: .init(prepareFetcher: { fetcher, _ in fetcher.eventMonitors = [monitor] }))
    let client = Client(serverURL: server.baseURL, transport: transport)
    await #expect(throws: (any Error).self) {
      let output = try await client.streamBytes(path: .init(n: 100_000))
      var total = 0
      for try await chunk in try output.ok.body.binary { total += chunk.count }
      Issue.record("the body ended normally after \(total) bytes")
    }
    await monitor.flush()
    let final = try #require(
      store.value.last { $0.message.hasPrefix("fetch ") && $0.message != "fetch began" })
    #expect(final.message == "fetch failed")
    #expect(final.level == .error)
    #expect(final.metadata["fetch.comment"] == "streamBytes")
  }
}

@Suite("SessionFetcherMetrics")
struct MetricsMonitorTests {
  @Test("Requests, duration, sizes and retries are recorded with OTel names and dimensions")
  func requestMetrics() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let metrics = TestMetrics()
    let monitor = FetcherMetricsMonitor(factory: metrics)
    let service = makeTestService(retries: true)
    service.maxRetryInterval = 0.3
    let ok = service.fetcher(url: server.url("/bytes/500"))
    ok.eventMonitors = [monitor]
    #expect(await run(ok) == nil)
    let failing = service.fetcher(url: server.url("/status/503"))
    failing.eventMonitors = [monitor]
    #expect(await run(failing) != nil)
    await monitor.flush()

    let host = "127.0.0.1"
    #expect(
      try metrics.expectCounter(
        "http.client.requests",
        [("http.request.method", "GET"), ("server.address", host), ("http.response.status_class", "2xx")]
      ).totalValue == 1)
    #expect(
      try metrics.expectCounter(
        "http.client.requests",
        [("http.request.method", "GET"), ("server.address", host), ("http.response.status_class", "5xx")]
      ).totalValue == 1)
    let timers = metrics.timers(label: "http.client.request.duration")
    #expect(timers.count == 2)
    #expect(timers.allSatisfy { $0.values.count == 1 && $0.values[0] > 0 })
    #expect(
      timers.contains { timer in
        timer.dimensions.contains { $0 == "error.type" && $1 == "503" }
          && timer.dimensions.contains { $0 == "http.response.status_code" && $1 == "503" }
      })
    let received = try metrics.expectRecorder(
      "http.client.response.body.size", [("http.request.method", "GET"), ("server.address", host)])
    #expect(received.values.contains(500))
    let retries = try metrics.expectCounter(
      "sessionfetcher.retries", [("http.request.method", "GET"), ("server.address", host)])
    #expect(retries.totalValue >= 1)
    #expect(retries.totalValue == Int64(failing.retryCount))
  }

  @Test("Fetchers waiting in the per-host throttle are a gauge that returns to 0")
  func throttleGauge() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let metrics = TestMetrics()
    let monitor = FetcherMetricsMonitor(factory: metrics)
    let service = makeTestService()
    service.maxRunningFetchersPerHost = 1
    monitor.observeThrottle(of: service)
    let fetchers = (0..<3).map { _ in service.fetcher(url: server.url("/delay/0.4")) }
    for fetcher in fetchers { fetcher.eventMonitors = [monitor] }
    let tasks = fetchers.map { fetcher in Task { await run(fetcher) } }
    let gaugeValue: @Sendable () -> Double? = {
      (try? metrics.expectGauge("sessionfetcher.throttle.waiting", [("server.address", "127.0.0.1")]))?
        .lastValue
    }
    #expect(
      await waitUntil {
        monitor.refreshThrottleGauges(); return gaugeValue() == 2
      })
    for task in tasks { _ = await task.value }
    #expect(
      await waitUntil {
        monitor.refreshThrottleGauges(); return gaugeValue() == 0
      })
  }
}

@Suite("SessionFetcherTracing")
struct TracingMonitorTests {
  @Test(
    "A span per fetch with HTTP attributes, attempt and retry events, the error recorded, context injected")
  func spans() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let tracer = InMemoryTracer()
    let monitor = FetcherTracingMonitor(tracer: tracer)
    let service = makeTestService(retries: true)
    service.maxRetryInterval = 0.3
    let fetcher = service.fetcher(url: server.url("/status/503?token=SECRET9876"))
    fetcher.eventMonitors = [monitor]
    let parent = tracer.startSpan("parent")
    monitor.instrument(fetcher, context: parent.context)
    #expect(await run(fetcher) != nil)
    await monitor.flush()
    parent.end()

    let span = try #require(tracer.finishedSpans.first { $0.operationName == "GET" })
    #expect(span.kind == .client)
    #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "GET")
    #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 503)
    #expect(span.attributes["server.address"]?.toSpanAttribute() == "127.0.0.1")
    #expect(span.attributes["error.type"]?.toSpanAttribute() == "503")
    let url = "\(span.attributes["url.full"]?.toSpanAttribute() ?? "")"
    #expect(url.contains("token=_snip_") && !url.contains("SECRET9876"))
    #expect(
      span.attributes["http.request.resend_count"]?.toSpanAttribute() == .int64(Int64(fetcher.retryCount)))
    #expect(span.status?.code == .error)
    #expect(span.errors.count == 1)
    let sent = span.events.filter { $0.name == "http.request.sent" }
    let retries = span.events.filter { $0.name == "http.retry.scheduled" }
    #expect(sent.count == fetcher.retryCount + 1)
    #expect(retries.count == fetcher.retryCount)
    #expect(retries.count >= 1)
    // The fetch span is a child of the parent, and its context went out on every attempt.
    #expect(span.context.inMemorySpanContext?.traceID == parent.context.inMemorySpanContext?.traceID)
    #expect(span.context.inMemorySpanContext?.parentSpanID == parent.context.inMemorySpanContext?.spanID)
    let requests = server.requests(path: "/status/503")
    #expect(requests.count == sent.count)
    #expect(
      requests.allSatisfy {
        $0.header(InMemoryTracer.spanIDKey) == span.context.inMemorySpanContext?.spanID
          && $0.header(InMemoryTracer.traceIDKey) == span.context.inMemorySpanContext?.traceID
      })
  }

  @Test("Through the OpenAPI transport, the operation's span is a child of the calling task's context")
  func transportPropagatesTaskContext() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let tracer = InMemoryTracer()
    let monitor = FetcherTracingMonitor(tracer: tracer)
    let transport = SessionFetcherTransport(
      service: makeTestService(),
      configuration: .init(prepareFetcher: { fetcher, _ in
        fetcher.eventMonitors = [monitor]
        monitor.instrument(fetcher)
      }))
    let client = Client(serverURL: server.baseURL, transport: transport)
    let parent = tracer.startSpan("caller")
    try await ServiceContext.withValue(parent.context) {
      _ = try await client.getStatus(path: .init(code: 200))
    }
    parent.end()
    await monitor.flush()
    let span = try #require(tracer.finishedSpans.first { $0.operationName == "GET" })
    #expect(span.context.inMemorySpanContext?.parentSpanID == parent.context.inMemorySpanContext?.spanID)
    #expect(span.attributes["sessionfetcher.comment"]?.toSpanAttribute() == "getStatus")
    #expect(span.status == nil)
    #expect(
      server.requests(path: "/status/200").first?.header(InMemoryTracer.spanIDKey)
        == span.context.inMemorySpanContext?.spanID)
  }
}
