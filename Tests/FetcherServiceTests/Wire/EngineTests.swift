import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking

  /// A service's engine: read when the service makes its session.
  @Suite("Service engines")
  struct ServiceEngineTests {
    @Test func theDefaultEngineIsTheProcessDefault() {
      #expect(FetcherService().engine == FetcherEngine.default)
    }

    /// A change takes effect for the next session the service makes, not for the current one.
    @Test func anEngineChangeTakesEffectForTheNextSession() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let service = makeService()
      service.engine = .urlSession
      func fetch() async -> (SessionFetcher, FetchResult) {
        let fetcher = service.fetcher(url: server.url("/text?value=x"))
        return (fetcher, await fetcher.fetchResult())
      }
      let (first, firstResult) = await fetch()
      #expect(firstResult.data == Data("x".utf8))
      #expect(service.currentSharedSession?.engine == .urlSession)
      #expect(first.timing.transferMetrics == nil)

      service.engine = .libcurl
      let (second, secondResult) = await fetch()
      #expect(secondResult.data == Data("x".utf8))
      #expect(service.currentSharedSession?.engine == .urlSession)
      #expect(second.timing.transferMetrics == nil)

      service.resetSession()
      let (third, thirdResult) = await fetch()
      #expect(thirdResult.data == Data("x".utf8))
      #expect(service.currentSharedSession?.engine == .libcurl)
      #expect(third.timing.transferMetrics?.httpVersion == "HTTP/1.1")
      #expect(service.sharedSessionCreationCount == 2)
    }

    /// The service's proxy settings and socket reach its fetchers; the URLSession engine refuses
    /// them at begin, the libcurl engine honours them (`.direct`: no proxy, straight to the server).
    @Test func proxySettingsAndSocketComeFromTheService() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let service = makeService()
      service.engine = .urlSession
      service.proxySettings = .direct
      service.unixSocketPath = "/run/x.sock"
      let fetcher = service.fetcher(url: server.url("/text?value=x"))
      #expect(fetcher.proxySettings == .direct && fetcher.unixSocketPath == "/run/x.sock")
      guard case .unsupportedByEngine(let text)? = await fetcher.fetchResult().fetcherError else {
        Issue.record("not refused")
        return
      }
      #expect(text.contains("proxySettings and unixSocketPath"), "\(text)")
      #expect(server.requestCount(path: "/text") == 0)

      guard FetcherEngine.libcurl.isAvailable else { return }
      let curlService = makeService()
      curlService.engine = .libcurl
      curlService.proxySettings = ProxySettings(url: URL(string: "http://127.0.0.1:9"), bypassHosts: ["*"])
      let direct = curlService.fetcher(url: server.url("/text?value=y"))
      #expect(await direct.fetchResult().data == Data("y".utf8))
    }

    /// Without a shared session, each fetcher's session is made with the service's engine.
    @Test func fetchersWithoutReuseUseTheServiceEngine() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let service = makeService()
      service.reuseSession = false
      service.engine = .libcurl
      let fetcher = service.fetcher(url: server.url("/text?value=y"))
      #expect(fetcher.engine == .libcurl)
      #expect(await fetcher.fetchResult().data == Data("y".utf8))
      #expect(fetcher.timing.transferMetrics != nil)
    }

    /// 16 fetches in flight to one host on libcurl: 16 connections, each used again by the next
    /// round instead of being closed and opened anew (FoundationNetworking churns above 4).
    @Test func sixteenInFlightKeepSixteenConnections() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let service = FetcherService()
      service.allowLocalhostRequest = true
      service.callbackQueue = DispatchQueue(label: "test.engine.connections")
      service.maxRunningFetchersPerHost = 16
      service.engine = .libcurl
      for round in 0..<3 {
        let results = await withTaskGroup(of: FetchResult.self) { group in
          for index in 0..<16 {
            let fetcher = service.fetcher(url: server.url("/delay/0.2?round=\(round)&n=\(index)"))
            group.addTask { await fetcher.fetchResult(timeout: 60) }
          }
          return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0.error == nil })
      }
      let connections = Set(server.requests.map(\.connectionID))
      #expect(connections.count == 16)
    }
  }
#endif
