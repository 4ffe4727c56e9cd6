import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

@Suite("Concurrency", .ownThreads)
struct StressTests {
  @Test func twoHundredConcurrentFetchesWithEightPerHost() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let meter = ConcurrencyMeter()
    server.meteredRoute("/work", meter: meter, delay: 0.005)
    let service = makeService(maxPerHost: 8)
    let results = Recorder<(Int, FetchResult)>()
    let counts = Recorder<(total: Int, running: Int, delayed: Int)>()
    let running = Recorder<Int>()
    DispatchQueue.concurrentPerform(iterations: 200) { index in
      let path = "/work?i=\(index)"
      let url = index % 2 == 0 ? server.url(path) : server.localhostURL(path)
      let fetcher = service.fetcher(url: url)
      fetcher.servicePriority = index % 4
      fetcher.beginFetch { data, error in results.append((index, FetchResult(data: data, error: error))) }
      counts.append(service.fetcherCounts)
      running.append(service.numberOfRunningFetchers)
    }
    #expect(await eventually(timeout: 60) { results.count == 200 })
    let byIndex = Dictionary(results.values, uniquingKeysWith: { first, _ in first })
    #expect(byIndex.count == 200)
    for index in 0..<200 {
      #expect(byIndex[index]?.error == nil)
      #expect(byIndex[index]?.data == Data("body \(index)".utf8))
    }
    #expect((meter.peakByHost["127.0.0.1"] ?? 0) <= 8)
    #expect((meter.peakByHost["localhost"] ?? 0) <= 8)
    // Each snapshot of the counts agrees with itself and with the limit (two hosts, eight each).
    // The public counts are read one lock at a time, so only their bounds can be checked.
    #expect(counts.values.allSatisfy { $0.total == $0.running + $0.delayed && $0.running <= 16 })
    #expect(running.values.allSatisfy { (0...16).contains($0) })
    #expect(service.numberOfFetchers == 0)
    #expect(server.requestCount(path: "/work") == 200)
  }

  @Test func beginAndStopRacesLeaveNoSlotTaken() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService(maxPerHost: 2)
    DispatchQueue.concurrentPerform(iterations: 100) { index in
      let fetcher = service.fetcher(url: server.url("/hang?i=\(index)"))
      fetcher.beginFetch { _, _ in }
      if index % 3 == 0 { Thread.sleep(forTimeInterval: 0.001) }
      fetcher.stopFetching()
    }
    #expect(await eventually { service.numberOfFetchers == 0 })
    #expect(await service.fetcher(url: server.url("/text?value=free")).fetchResult().error == nil)
  }
}
