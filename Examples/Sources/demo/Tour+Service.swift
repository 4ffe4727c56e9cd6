import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher

extension Tour {
  /// A service for the tour's loopback server, calling back on the tour's queue.
  func makeService() -> FetcherService {
    let service = FetcherService()
    service.allowLocalhostRequest = true
    service.callbackQueue = callbackQueue
    return service
  }

  /// Eight fetches of a 0.3 s route through a service that runs at most two per host.
  func showThrottledBurst() async throws -> SectionOutcome {
    let service = makeService()
    service.maxRunningFetchersPerHost = 2
    let count = 8
    Console.detail("\(count) × GET /delay/0.3 through a FetcherService with maxRunningFetchersPerHost = 2")
    let fetchers = (1...count).map { service.fetcher(url: server.url("/delay/0.3?n=\($0)")) }
    let start = Date()
    var mostRunning = 0
    try await withThrowingTaskGroup(of: Data.self) { group in
      for fetcher in fetchers {
        group.addTask { try await fetcher.beginFetch() }
      }
      var lastLine = ""
      while service.numberOfFetchers > 0 || lastLine.isEmpty {
        let running = service.numberOfRunningFetchers
        let delayed = service.numberOfDelayedFetchers
        mostRunning = max(mostRunning, running)
        let line = "running \(running), delayed \(delayed)"
        if line != lastLine {
          Console.detail("t=\(Format.seconds(Date().timeIntervalSince(start))): \(line)")
          lastLine = line
        }
        try await Task.sleep(for: .milliseconds(20))
      }
      for try await _ in group {}
    }
    let requests = server.requestCount(path: "/delay/0.3")
    Console.detail(
      "all \(count) done in \(Format.seconds(Date().timeIntervalSince(start))); at most \(mostRunning) ran at once; "
        + "the server saw \(requests) requests")
    try require(mostRunning <= 2, "\(mostRunning) fetchers ran at once, expected at most 2")
    try require(requests == count, "expected \(count) requests, the server saw \(requests)")
    return .shown
  }

  /// Two GETs of an ETagged route: the second sends If-None-Match, gets 304, and the service
  /// completes it with the cached body.
  func showETagCache() async throws -> SectionOutcome {
    let service = makeService()
    service.shouldCacheETaggedData = true
    let path = "/etag/tour"
    Console.detail("GET \(path) twice through a FetcherService with shouldCacheETaggedData = true")
    let first = try await service.fetcher(url: server.url(path)).beginFetch()
    let second = service.fetcher(url: server.url(path))
    let cached = try await second.beginFetch()

    let records = server.requests.filter { $0.path == path }
    let statuses = ["first", "second"]
    for (label, record) in zip(statuses, records) {
      Console.detail("\(label) request: If-None-Match \(record.header("If-None-Match") ?? "(none)")")
    }
    Console.detail(
      "second fetch: status \(second.statusCode) with \(cached.count) bytes \"\(String(decoding: cached, as: UTF8.self))\" "
        + "— the server answered 304, the body came from the cache")
    try require(records.count == 2, "expected 2 requests, the server saw \(records.count)")
    try require(records[1].header("If-None-Match") == "\"tour\"", "the refetch sent no If-None-Match")
    try require(cached == first, "the cached body differs from the first one")
    return .shown
  }
}
