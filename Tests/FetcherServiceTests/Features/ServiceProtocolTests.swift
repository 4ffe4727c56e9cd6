import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// A stand-in service that makes plain fetchers for the test server and counts its calls.
private final class FakeService: FetcherServiceProtocol, @unchecked Sendable {
  // `@unchecked Sendable`: immutable; the recorder locks.
  let calls = Recorder<String>()

  func fetcher(request: URLRequest) -> SessionFetcher {
    calls.append("request")
    let fetcher = SessionFetcher(request: request)
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = DispatchQueue(label: "test.fake-service")
    fetcher.service = self
    return fetcher
  }

  func fetcher(url: URL) -> SessionFetcher { fetcher(request: URLRequest(url: url)) }

  func fetcher(urlString: String) -> SessionFetcher { fetcher(url: URL(string: urlString)!) }

  func stopAllFetchers() { calls.append("stopAll") }
}

/// Blocks every `fetcherWillStart` until `gate` opens: holds fetchers issued but unsent.
private final class HoldingDecorator: FetcherDecorator {
  let gate = Gate()
  let entered = Recorder<Bool>()

  func fetcherWillStart(_ fetcher: SessionFetcher, request: URLRequest) async throws -> URLRequest {
    entered.append(true)
    let gate = self.gate
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      DispatchQueue.global().async {
        gate.wait()
        continuation.resume()
      }
    }
    return request
  }
}

/// Fetches a follow-up of `url` through whatever service made `fetcher`.
private func followUp(from fetcher: SessionFetcher, url: URL) async -> FetchResult? {
  guard let service = fetcher.service else { return nil }
  return await service.fetcher(url: url).fetchResult()
}

@Suite("The service behind a fetcher", .ownThreads)
struct ServiceProtocolTests {
  /// A fetcher names the service that made it; a callback makes a follow-up fetcher through it.
  @Test func fetcherNamesItsService() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService()
    service.userAgent = "Follow/1.0"
    let first = service.fetcher(url: server.url("/text?value=first"))
    #expect(first.service === service)
    #expect(SessionFetcher.fetcher(url: server.url("/text")).service == nil)
    let followed = await withCheckedContinuation { (continuation: CheckedContinuation<FetchResult?, Never>) in
      first.beginFetch { _, _ in
        Task { continuation.resume(returning: await followUp(from: first, url: server.url("/headers"))) }
      }
    }
    #expect(followed?.error == nil)
    // Made by the same service: its user agent.
    #expect(server.requests(path: "/headers").first?.header("User-Agent") == "Follow/1.0")
  }

  /// A test double stands in for the service; the fetcher's reference to it is weak.
  @Test func aTestDoubleStandsInAndIsHeldWeakly() async throws {
    let server = try TestServer()
    defer { server.stop() }
    var fake: FakeService? = FakeService()
    let calls = try #require(fake).calls
    let first = try #require(fake).fetcher(url: server.url("/text?value=a"))
    let result = await followUp(from: first, url: server.url("/text?value=b"))
    #expect(result?.data == Data("b".utf8))
    #expect(calls.values == ["request", "request"])
    (first.service as? FakeService)?.stopAllFetchers()
    #expect(calls.values.last == "stopAll")
    fake = nil
    #expect(first.service == nil)
  }

  /// Fetchers with the same `serviceHost` share one limit whatever their hosts; different ones split
  /// a host.
  @Test func serviceHostIsTheThrottlingKey() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService(maxPerHost: 1)
    defer { service.stopAllFetchers() }
    let shared = [server.url("/hang?i=1"), server.localhostURL("/hang?i=2")].map { url in
      let fetcher = service.fetcher(url: url)
      fetcher.serviceHost = "api"
      return fetcher
    }
    let split = ["a", "b"].map { key in
      let fetcher = service.fetcher(url: server.url("/hang?i=\(key)"))
      fetcher.serviceHost = key
      return fetcher
    }
    for fetcher in shared + split { fetcher.beginFetch { _, _ in } }
    #expect(await eventually { server.requestCount(path: "/hang") == 3 })
    #expect(service.delayedFetchersByHost.mapValues(\.count) == ["api": 1])
    #expect(service.runningFetchersByHost.mapValues(\.count) == ["api": 1, "a": 1, "b": 1])
    #expect(service.isDelayingFetcher(shared[1]))
    shared[0].stopFetching()
    #expect(await eventually { server.requestCount(path: "/hang") == 4 })
    #expect(service.numberOfDelayedFetchers == 0)
  }

  /// Running, delayed and host-less fetchers are all issued; found by their request URL.
  @Test func issuedFetchersListsEveryFetcherInFlight() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService(maxPerHost: 1)
    let holder = HoldingDecorator()
    defer { holder.gate.open() }
    service.addDecorator(holder)
    let running = service.fetcher(url: server.url("/text?value=1"))
    let delayed = service.fetcher(url: server.url("/text?value=2"))
    let hostless = service.fetcher(urlString: "data:,hello")
    let idle = service.fetcher(url: server.url("/text?value=3"))
    for fetcher in [running, delayed, hostless] { fetcher.beginFetch { _, _ in } }
    #expect(await eventually { holder.entered.count == 2 })
    let issued = Set(service.issuedFetchers)
    #expect(issued == [running, delayed, hostless])
    #expect(!issued.contains(idle))
    #expect(service.issuedFetchers(withRequestURL: server.url("/text?value=2")) == [delayed])
    #expect(service.issuedFetchers(withRequestURL: URL(string: "data:,hello")!) == [hostless])
    #expect(service.issuedFetchers(withRequestURL: server.url("/text?value=3")).isEmpty)

    service.stopAllFetchers()
    #expect(service.issuedFetchers.isEmpty)
    #expect([running, delayed, hostless].allSatisfy { !$0.isFetching })
  }

  /// The three-argument mock: the faked response's status and headers reach the fetcher.
  @Test func mockServiceWithAFakedResponse() async throws {
    let url = URL(string: "https://example.com/item")!
    let notFound = try #require(
      HTTPURLResponse(
        url: url, statusCode: 404, httpVersion: "HTTP/1.1", headerFields: ["X-Reason": "gone"]))
    let service = FetcherService.mockFetcherService(
      fakedData: Data("missing".utf8), fakedResponse: notFound, fakedError: nil)
    service.callbackQueue = DispatchQueue(label: "test.mock")
    let fetcher = service.fetcher(url: url)
    let result = await fetcher.fetchResult()
    #expect(result.fetcherError == .status(code: 404, data: Data("missing".utf8)))
    #expect(fetcher.statusCode == 404)
    #expect((fetcher.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Reason") == "gone")

    let ok = try #require(
      HTTPURLResponse(url: url, statusCode: 201, httpVersion: "HTTP/1.1", headerFields: ["ETag": "\"v1\""]))
    let created = FetcherService.mockFetcherService(
      fakedData: Data("made".utf8), fakedResponse: ok, fakedError: nil)
    created.callbackQueue = DispatchQueue(label: "test.mock.ok")
    let made = created.fetcher(url: url)
    let madeResult = await made.fetchResult()
    #expect(madeResult.error == nil && madeResult.data == Data("made".utf8))
    #expect(made.statusCode == 201)

    // The two-argument form keeps its fixed statuses.
    let plain = FetcherService.mockFetcherService(fakedData: Data("x".utf8), fakedError: nil)
    plain.callbackQueue = DispatchQueue(label: "test.mock.plain")
    let plainFetcher = plain.fetcher(url: url)
    #expect(await plainFetcher.fetchResult().data == Data("x".utf8))
    #expect(plainFetcher.statusCode == 200)
  }
}
