import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

@Suite("Per-host throttling")
struct ThrottlingTests {
  /// The original's testFetcherService: 30 fetchers over two hosts with 2 per host.
  @Test func twoPerHostOverThirtyFetchersStartInPriorityOrder() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let meter = ConcurrencyMeter()
    let gate = Gate()
    server.meteredRoute("/slow", meter: meter, gate: gate, delay: 0.02)
    let service = makeService(maxPerHost: 2)
    let hosts = ["127.0.0.1", "localhost"]
    var fetchersByHost: [String: [SessionFetcher]] = [:]
    let recorder = NotificationRecorder()
    let runningSamples = Recorder<Int>()
    let results = Recorder<(String, FetchResult)>()
    for index in 0..<30 {
      let host = hosts[index % 2]
      let url =
        host == "localhost" ? server.localhostURL("/slow?i=\(index)") : server.url("/slow?i=\(index)")
      let fetcher = service.fetcher(url: url)
      // Priorities 0, 1, 2, 0, 1, 2 … with a few urgent (-1) ones late in the list.
      fetcher.servicePriority = index >= 24 ? -1 : (index / 2) % 3
      recorder.watch(fetcher)
      fetchersByHost[host, default: []].append(fetcher)
      fetcher.beginFetch { data, error in
        runningSamples.append(service.runningFetchersByHost.values.map(\.count).max() ?? 0)
        results.append(("\(index)", FetchResult(data: data, error: error)))
      }
    }

    // Two per host run (held at the gate); the others wait in start order.
    #expect(await eventually { server.requestCount(path: "/slow") == 4 })
    #expect(service.numberOfFetchers == 30)
    #expect(service.numberOfRunningFetchers == 4)
    #expect(service.numberOfDelayedFetchers == 26)
    #expect(service.runningFetchersByHost.mapValues(\.count) == ["127.0.0.1": 2, "localhost": 2])
    var expectedOrder: [String: [SessionFetcher]] = [:]
    for host in hosts {
      let all = fetchersByHost[host] ?? []
      #expect(service.runningFetchersByHost[host] == Array(all.prefix(2)))
      let waiting = all.dropFirst(2).enumerated().sorted {
        ($0.element.servicePriority, $0.offset) < ($1.element.servicePriority, $1.offset)
      }.map(\.element)
      expectedOrder[host] = Array(all.prefix(2)) + waiting
      #expect(service.delayedFetchersByHost[host] == waiting)
      #expect(waiting.allSatisfy { service.isDelayingFetcher($0) })
      #expect(all.prefix(2).allSatisfy { !service.isDelayingFetcher($0) })
    }

    gate.open()
    #expect(await eventually(timeout: 30) { results.count == 30 })
    for (index, result) in results.values {
      #expect(result.error == nil)
      #expect(result.data.map { String(decoding: $0, as: UTF8.self) } == "body \(index)")
    }
    // Never more than two per host: seen by the service and by the server.
    #expect(runningSamples.values.allSatisfy { $0 <= 2 })
    #expect(meter.peakByHost["127.0.0.1"] == 2)
    #expect(meter.peakByHost["localhost"] == 2)
    // Delayed fetchers went on the wire in priority order, first come first served within one.
    let startOrder = recorder.order(of: .sessionFetcherStarted)
    for host in hosts {
      let expected = (expectedOrder[host] ?? []).map(ObjectIdentifier.init)
      let expectedSet = Set(expected)
      #expect(startOrder.filter { expectedSet.contains($0) } == expected, "host \(host)")
    }
    #expect(recorder.started == 30 && recorder.stopped == 30)
    #expect(service.numberOfFetchers == 0)
    #expect(service.runningFetchersByHost.isEmpty && service.delayedFetchersByHost.isEmpty)
  }

  /// `count` fetches of `/slow`, which answers once `gate` opens, begun on a new service with
  /// `maxPerHost`.
  private func beginGatedFetches(
    _ server: TestServer, count: Int, maxPerHost: Int
  ) -> (service: FetcherService, gate: Gate, results: Recorder<FetchResult>) {
    let gate = Gate()
    server.meteredRoute("/slow", meter: ConcurrencyMeter(), gate: gate)
    let service = makeService(maxPerHost: maxPerHost)
    let results = Recorder<FetchResult>()
    for index in 0..<count {
      service.fetcher(url: server.url("/slow?i=\(index)")).beginFetch { data, error in
        results.append(FetchResult(data: data, error: error))
      }
    }
    return (service, gate, results)
  }

  @Test func unlimitedWhenMaxIsZero() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let (service, gate, results) = beginGatedFetches(server, count: 12, maxPerHost: 0)
    #expect(await eventually { server.requestCount(path: "/slow") == 12 })
    #expect(service.numberOfDelayedFetchers == 0)
    #expect(service.numberOfRunningFetchers == 12)
    gate.open()
    #expect(await eventually(timeout: 60) { results.count == 12 })
    #expect(results.values.allSatisfy { $0.error == nil })
  }

  @Test func raisingTheLimitStartsDelayedFetchers() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let (service, gate, results) = beginGatedFetches(server, count: 4, maxPerHost: 1)
    #expect(await eventually { server.requestCount(path: "/slow") == 1 })
    #expect(service.numberOfDelayedFetchers == 3)
    service.maxRunningFetchersPerHost = 4
    #expect(await eventually { server.requestCount(path: "/slow") == 4 })
    gate.open()
    #expect(await eventually(timeout: 60) { results.count == 4 })
  }

  @Test func dataAndHostlessURLsNeverWait() async throws {
    let service = makeService(maxPerHost: 1)
    let results = Recorder<FetchResult>()
    for _ in 0..<5 {
      let fetcher = service.fetcher(urlString: "data:text/plain;base64,aGVsbG8=")
      fetcher.allowedInsecureSchemes = ["data"]
      fetcher.beginFetch { data, error in results.append(FetchResult(data: data, error: error)) }
    }
    #expect(service.numberOfDelayedFetchers == 0)
    #expect(await eventually { results.count == 5 })
    #expect(service.numberOfFetchers == 0)
    for result in results.values {
      #expect(result.error == nil)
      #expect(result.data == Data("hello".utf8))
    }
  }

  @Test func aStoppedDelayedFetcherPostsNothingAndFreesItsPlace() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let meter = ConcurrencyMeter()
    let gate = Gate()
    server.meteredRoute("/slow", meter: meter, gate: gate)
    let service = makeService(maxPerHost: 1)
    service.stopFetchingTriggersCompletionHandler = true
    let first = service.fetcher(url: server.url("/slow?i=1"))
    let delayed = service.fetcher(url: server.url("/slow?i=2"))
    let last = service.fetcher(url: server.url("/slow?i=3"))
    let recorder = NotificationRecorder([delayed])
    let results = Recorder<(Int, FetchResult)>()
    for (index, fetcher) in [first, delayed, last].enumerated() {
      fetcher.beginFetch { data, error in results.append((index, FetchResult(data: data, error: error))) }
    }
    #expect(await eventually { service.numberOfDelayedFetchers == 2 })
    delayed.stopFetching()
    #expect(!service.isDelayingFetcher(delayed))
    #expect(service.numberOfFetchers == 2)
    gate.open()
    #expect(await eventually(timeout: 60) { results.count == 3 })
    let byIndex = Dictionary(results.values, uniquingKeysWith: { first, _ in first })
    #expect(byIndex[0]?.error == nil)
    #expect(byIndex[2]?.error == nil)
    #expect(byIndex[1]?.fetcherError == .cancelled)
    await drain(service.callbackQueue)
    #expect(recorder.started == 0 && recorder.stopped == 0)
    #expect(server.requests(path: "/slow").map { $0.query["i"] } == ["1", "3"])
  }
}
