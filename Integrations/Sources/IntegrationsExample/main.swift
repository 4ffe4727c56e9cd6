// A runnable tour of the four integration products:
//
//   swift run --package-path Integrations integrations-example [--log-level trace|debug|…] [--server URL]
//
// Without --server it answers itself: an in-process test server (FetcherTesting) plays the few
// httpbin endpoints used here. With --server http://127.0.0.1:27583 (a real httpbin) it talks to that.
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
import Tracing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The value after `name` on the command line.
func option(_ name: String) -> String? {
  let arguments = CommandLine.arguments
  guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
  return arguments[index + 1]
}

/// An in-process stand-in for the httpbin endpoints this example calls.
func makeLocalServer() throws -> TestServer {
  let server = try TestServer()
  server.route("/anything") { request in
    let json = (try? JSONSerialization.jsonObject(with: request.body)) ?? [:]
    let body: [String: Any] = ["method": request.method, "json": json, "headers": [String: String]()]
    return TestResponse(
      headers: [("Content-Type", "application/json")], body: try! JSONSerialization.data(withJSONObject: body)
    )
  }
  server.route("/stream-bytes/50000") { _ in
    TestResponse(
      headers: [("Content-Type", "application/octet-stream")], body: TestServer.patternBytes(count: 50_000))
  }
  return server
}

let level = option("--log-level").flatMap(Logger.Level.init(rawValue:)) ?? .debug
var logger = Logger(label: "integrations-example")
logger.logLevel = level

let localServer = option("--server") == nil ? try makeLocalServer() : nil
let serverURL = option("--server").flatMap(URL.init(string:)) ?? localServer!.baseURL

// 1. swift-log: every fetch's life as structured, redacted log messages.
let logMonitor = FetcherLogMonitor(logger: logger)
// 2. swift-metrics: here an in-memory backend, printed at the end (use your own MetricsSystem.bootstrap).
let metrics = TestMetrics()
let metricsMonitor = FetcherMetricsMonitor(factory: metrics)
// 3. Tracing: here the in-memory tracer (use swift-otel's for W3C traceparent and an exporter).
let tracer = InMemoryTracer()
let tracingMonitor = FetcherTracingMonitor(tracer: tracer)
for monitor in [logMonitor, metricsMonitor, tracingMonitor] as [any FetcherEventMonitor] {
  SessionFetcher.addGlobalEventMonitor(monitor)
}

// 4. OpenAPI: the generated client on a FetcherService (retries, throttle, cookies, logs).
let service = FetcherService()
service.allowedInsecureSchemes = ["http"]
service.allowLocalhostRequest = true
service.isRetryEnabled = true
service.callbackQueue = DispatchQueue(label: "integrations-example")
metricsMonitor.observeThrottle(of: service)
let transport = SessionFetcherTransport(
  service: service,
  configuration: .init(prepareFetcher: { fetcher, _ in tracingMonitor.instrument(fetcher) }))
let client = Client(serverURL: serverURL, transport: transport)

let root = tracer.startSpan("integrations-example")
try await ServiceContext.withValue(root.context) {
  let echoed = try await client.echoJSON(body: .json(.init(message: "hello", count: 1))).ok.body.json
  print("echoJSON: \(echoed.method) \(echoed.json?.message ?? "-")")
  var received = 0
  for try await chunk in try await client.streamBytes(path: .init(n: 50_000)).ok.body.binary {
    received += chunk.count
  }
  print("streamBytes: \(received) bytes, streamed")
}
root.end()

await logMonitor.flush()
await metricsMonitor.flush()
await tracingMonitor.flush()
for counter in metrics.counters(label: "http.client.requests") {
  print("metric \(counter.label) \(counter.dimensions) = \(counter.totalValue)")
}
for timer in metrics.timers(label: "http.client.request.duration") {
  print("metric \(timer.label) \(timer.dimensions) = \(timer.values.map { Double($0) / 1e9 }) s")
}
for span in tracer.finishedSpans {
  let url = span.attributes["url.full"].map { "\($0.toSpanAttribute())" } ?? ""
  print("span \(span.operationName) \(url) parent=\(span.context.inMemorySpanContext?.parentSpanID ?? "-")")
}
localServer?.stop()
