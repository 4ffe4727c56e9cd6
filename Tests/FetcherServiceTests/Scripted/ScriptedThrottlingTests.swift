import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Per-host throttling on the scripted engine: which fetchers the service holds back, in which
/// order it lets them go, and how many per host are ever on the engine at once (read from the
/// engine's records instead of a server's meter).
@Suite("Per-host throttling on the scripted engine")
struct ScriptedThrottlingTests {
  static let hosts = ["https://scripted.test", "https://other.test"]

  /// The most exchanges of `host` that were running at once: each exchange runs from its first
  /// `resumed` to its completion, in the order of the engine's event sequence.
  static func peakConcurrency(_ requests: [ScriptedRequest], host: String) -> Int {
    var marks: [(sequence: Int, change: Int)] = []
    for request in requests where request.url.host == host {
      if let start = request.events.first(where: { $0.kind == .resumed }) {
        marks.append((start.sequence, 1))
      }
      if let end = request.events.first(where: { if case .completed = $0.kind { true } else { false } }) {
        marks.append((end.sequence, -1))
      }
    }
    var running = 0
    var peak = 0
    for mark in marks.sorted(by: { $0.sequence < $1.sequence }) {
      running += mark.change
      peak = max(peak, running)
    }
    return peak
  }

  /// The original's testFetcherService: 30 fetchers over two hosts with 2 per host.
  @Test func twoPerHostOverThirtyFetchersStartInPriorityOrder() async throws {
    let engine = ScriptedEngine()
    let gate = ScriptedGate()
    for index in 0..<30 {
      engine.respond(
        to: "/slow?i=\(index)",
        with: ScriptedExchange([.wait(gate), .head(status: 200), .body(Data("body \(index)".utf8))]))
    }
    let service = ScriptedServiceTests.service(engine, maxPerHost: 2)
    var fetchersByHost: [String: [SessionFetcher]] = [:]
    let recorder = NotificationRecorder()
    let runningSamples = Recorder<Int>()
    let results = Recorder<(String, FetchResult)>()
    for index in 0..<30 {
      let origin = Self.hosts[index % 2]
      let fetcher = service.fetcher(url: URL(string: "\(origin)/slow?i=\(index)")!)
      // Priorities 0, 1, 2, 0, 1, 2 … with a few urgent (-1) ones late in the list.
      fetcher.servicePriority = index >= 24 ? -1 : (index / 2) % 3
      recorder.watch(fetcher)
      fetchersByHost[URL(string: origin)!.host!, default: []].append(fetcher)
      fetcher.beginFetch { data, error in
        runningSamples.append(service.runningFetchersByHost.values.map(\.count).max() ?? 0)
        results.append(("\(index)", FetchResult(data: data, error: error)))
      }
    }

    // Two per host run (held at the gate); the others wait in start order.
    #expect(await eventually { engine.requests.count == 4 })
    #expect(service.numberOfFetchers == 30)
    #expect(service.numberOfRunningFetchers == 4)
    #expect(service.numberOfDelayedFetchers == 26)
    #expect(service.runningFetchersByHost.mapValues(\.count) == ["scripted.test": 2, "other.test": 2])
    var expectedOrder: [String: [SessionFetcher]] = [:]
    for host in fetchersByHost.keys {
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
    #expect(await eventually { results.count == 30 })
    for (index, result) in results.values {
      #expect(result.error == nil)
      #expect(result.data.map { String(decoding: $0, as: UTF8.self) } == "body \(index)")
    }
    // Never more than two per host: seen by the service and on the engine.
    #expect(runningSamples.values.allSatisfy { $0 <= 2 })
    for host in fetchersByHost.keys {
      #expect(Self.peakConcurrency(engine.requests, host: host) == 2, "host \(host)")
      // Delayed fetchers went to the engine in priority order, first come first served within one.
      let sent = engine.requests.filter { $0.url.host == host }.map(\.url)
      #expect(sent == (expectedOrder[host] ?? []).compactMap { $0.request?.url }, "host \(host)")
    }
    #expect(recorder.started == 30 && recorder.stopped == 30)
    #expect(service.numberOfFetchers == 0)
    #expect(service.runningFetchersByHost.isEmpty && service.delayedFetchersByHost.isEmpty)
  }

  /// `count` fetches of `/slow`, held at `gate`, begun on a new service with `maxPerHost`.
  private func beginGatedFetches(
    _ engine: ScriptedEngine, count: Int, maxPerHost: Int
  ) -> (service: FetcherService, gate: ScriptedGate, results: Recorder<FetchResult>) {
    let gate = ScriptedGate()
    engine.respond(
      to: "/slow", with: ScriptedExchange([.wait(gate), .head(status: 200), .body(Data("b".utf8))]))
    let service = ScriptedServiceTests.service(engine, maxPerHost: maxPerHost)
    let results = Recorder<FetchResult>()
    for index in 0..<count {
      service.fetcher(url: engine.url("/slow?i=\(index)")).beginFetch { data, error in
        results.append(FetchResult(data: data, error: error))
      }
    }
    return (service, gate, results)
  }

  @Test func unlimitedWhenMaxIsZero() async throws {
    let engine = ScriptedEngine()
    let (service, gate, results) = beginGatedFetches(engine, count: 12, maxPerHost: 0)
    #expect(await eventually { engine.requests.count == 12 })
    #expect(service.numberOfDelayedFetchers == 0)
    #expect(service.numberOfRunningFetchers == 12)
    gate.open()
    #expect(await eventually { results.count == 12 })
    #expect(results.values.allSatisfy { $0.error == nil })
    #expect(Self.peakConcurrency(engine.requests, host: "scripted.test") == 12)
  }

  @Test func raisingTheLimitStartsDelayedFetchers() async throws {
    let engine = ScriptedEngine()
    let (service, gate, results) = beginGatedFetches(engine, count: 4, maxPerHost: 1)
    #expect(await eventually { engine.requests.count == 1 })
    #expect(service.numberOfDelayedFetchers == 3)
    service.maxRunningFetchersPerHost = 4
    #expect(await eventually { engine.requests.count == 4 })
    #expect(service.numberOfDelayedFetchers == 0)
    gate.open()
    #expect(await eventually { results.count == 4 })
    #expect(results.values.allSatisfy { $0.error == nil })
  }

  @Test func aStoppedDelayedFetcherPostsNothingAndFreesItsPlace() async throws {
    let engine = ScriptedEngine()
    let gate = ScriptedGate()
    engine.respond(
      to: "/slow", with: ScriptedExchange([.wait(gate), .head(status: 200), .body(Data("b".utf8))]))
    let service = ScriptedServiceTests.service(engine, maxPerHost: 1)
    service.stopFetchingTriggersCompletionHandler = true
    let first = service.fetcher(url: engine.url("/slow?i=1"))
    let delayed = service.fetcher(url: engine.url("/slow?i=2"))
    let last = service.fetcher(url: engine.url("/slow?i=3"))
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
    #expect(await eventually { results.count == 3 })
    let byIndex = Dictionary(results.values, uniquingKeysWith: { first, _ in first })
    #expect(byIndex[0]?.error == nil)
    #expect(byIndex[2]?.error == nil)
    #expect(byIndex[1]?.fetcherError == .cancelled)
    await drain(service.callbackQueue)
    #expect(recorder.started == 0 && recorder.stopped == 0)
    #expect(engine.requests.map { $0.url.query } == ["i=1", "i=3"])
  }
}
