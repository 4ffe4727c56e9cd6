import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

private final class StubAuthorizer: FetcherAuthorizer, @unchecked Sendable {
  // `@unchecked Sendable`: immutable.
  func authorizeRequest(_ request: URLRequest) async throws -> URLRequest { request }
}

private struct StubAgent: UserAgentProvider {
  func userAgent() async -> String { "Stub/1.0" }
}

/// One setting of a service that its fetchers take: how a test sets it on the service, and whether
/// a fetcher carries the value set.
struct ServiceDefault: CustomStringConvertible, Sendable {
  let description: String
  let set: @Sendable (FetcherService) -> Void
  let isCarried: @Sendable (SessionFetcher) -> Bool

  init(
    _ description: String, set: @escaping @Sendable (FetcherService) -> Void,
    isCarried: @escaping @Sendable (SessionFetcher) -> Bool
  ) {
    self.description = description
    self.set = set
    self.isCarried = isCarried
  }

  /// Every setting a service hands to the fetchers it makes, each set to a value no fetcher has
  /// without it.
  static let all: [ServiceDefault] = {
    let queue = DispatchQueue(label: "test.service-defaults")
    let credential = URLCredential(user: "u", password: "p", persistence: .none)
    let proxyCredential = URLCredential(user: "pu", password: "pp", persistence: .none)
    let authorizer = StubAuthorizer()
    let jar = SessionCookieStorage()
    let otherEngine: FetcherEngine = FetcherEngine.default == .urlSession ? .libcurl : .urlSession
    let tls = {
      var settings = TLSSettings()
      settings.trustsSystemRoots = false
      settings.pinnedPublicKeys = ["sha256//AAAA"]
      return settings
    }()
    let proxy = ProxySettings(url: URL(string: "http://proxy.invalid:3128"), bypassHosts: ["example.org"])
    return [
      ServiceDefault(
        "callbackQueue", set: { $0.callbackQueue = queue }, isCarried: { $0.callbackQueue === queue }),
      ServiceDefault("isRetryEnabled", set: { $0.isRetryEnabled = true }, isCarried: { $0.isRetryEnabled }),
      ServiceDefault("maxRetryCount", set: { $0.maxRetryCount = 3 }, isCarried: { $0.maxRetryCount == 3 }),
      ServiceDefault(
        "retryBlock", set: { $0.retryBlock = { suggested, _, respond in respond(suggested) } },
        isCarried: { $0.retryBlock != nil }),
      ServiceDefault(
        "minRetryInterval", set: { $0.minRetryInterval = 3 }, isCarried: { $0.minRetryInterval == 3 }),
      ServiceDefault(
        "maxRetryInterval", set: { $0.maxRetryInterval = 40 }, isCarried: { $0.maxRetryInterval == 40 }),
      ServiceDefault(
        "allowedInsecureSchemes", set: { $0.allowedInsecureSchemes = ["http", "ws"] },
        isCarried: { $0.allowedInsecureSchemes == ["http", "ws"] }),
      ServiceDefault(
        "allowLocalhostRequest", set: { $0.allowLocalhostRequest = true },
        isCarried: { $0.allowLocalhostRequest }),
      ServiceDefault(
        "maximumRedirects", set: { $0.maximumRedirects = 3 }, isCarried: { $0.maximumRedirects == 3 }),
      ServiceDefault(
        "postsNotifications", set: { $0.postsNotifications = false }, isCarried: { !$0.postsNotifications }),
      ServiceDefault(
        "downloadWindowLength", set: { $0.downloadWindowLength = 123_456 },
        isCarried: { $0.downloadWindowLength == 123_456 }),
      ServiceDefault(
        "downloadWindowLength nil", set: { $0.downloadWindowLength = nil },
        isCarried: { $0.downloadWindowLength == nil }),
      ServiceDefault(
        "maximumLineLength", set: { $0.maximumLineLength = 77 }, isCarried: { $0.maximumLineLength == 77 }),
      ServiceDefault(
        "maximumEventLength", set: { $0.maximumEventLength = 88 }, isCarried: { $0.maximumEventLength == 88 }),
      ServiceDefault(
        "credential", set: { $0.credential = credential }, isCarried: { $0.credential === credential }),
      ServiceDefault(
        "proxyCredential", set: { $0.proxyCredential = proxyCredential },
        isCarried: { $0.proxyCredential === proxyCredential }),
      ServiceDefault(
        "challengeBlock", set: { $0.challengeBlock = { _, _ in (.performDefaultHandling, nil) } },
        isCarried: { $0.challengeBlock != nil }),
      ServiceDefault(
        "metricsCollectionBlock", set: { $0.metricsCollectionBlock = { _ in } },
        isCarried: { $0.metricsCollectionBlock != nil }),
      ServiceDefault(
        "authorizer", set: { $0.authorizer = authorizer },
        isCarried: { $0.authorizer as AnyObject? === authorizer }),
      ServiceDefault(
        "stopFetchingTriggersCompletionHandler", set: { $0.stopFetchingTriggersCompletionHandler = true },
        isCarried: { $0.stopFetchingTriggersCompletionHandler }),
      ServiceDefault(
        "testBlock", set: { $0.testBlock = { _, respond in respond(nil, nil, nil) } },
        isCarried: { $0.testBlock != nil }),
      ServiceDefault(
        "properties", set: { $0.properties = ["team": "fetch"] },
        isCarried: { $0.properties.count == 1 && $0.properties["team"] as? String == "fetch" }),
      ServiceDefault(
        "setProperty", set: { $0.setProperty(42, forKey: "answer") },
        isCarried: { $0.property(forKey: "answer") as? Int == 42 }),
      ServiceDefault(
        "cookieStorage", set: { $0.cookieStorage = jar }, isCarried: { $0.cookieStorage === jar }),
      ServiceDefault("engine", set: { $0.engine = otherEngine }, isCarried: { $0.engine == otherEngine }),
      ServiceDefault(
        "engineSessions", set: { $0.run(on: ScriptedEngine()) }, isCarried: { $0.engineSessions != nil }),
      ServiceDefault("tlsSettings", set: { $0.tlsSettings = tls }, isCarried: { $0.tlsSettings == tls }),
      ServiceDefault(
        "proxySettings", set: { $0.proxySettings = proxy }, isCarried: { $0.proxySettings == proxy }),
      ServiceDefault(
        "unixSocketPath", set: { $0.unixSocketPath = "/run/test.sock" },
        isCarried: { $0.unixSocketPath == "/run/test.sock" }),
      ServiceDefault(
        "configurationBlock without reuseSession",
        set: {
          $0.reuseSession = false
          $0.configurationBlock = { $0.timeoutIntervalForRequest = 9 }
        },
        isCarried: { $0.configurationBlock != nil }),
    ]
  }()
}

/// Each fetcher the service makes, one per way of making one.
private func fetchers(of service: FetcherService) -> [SessionFetcher] {
  [
    service.fetcher(urlString: "http://example.com/a"),
    service.fetcher(url: URL(string: "http://example.com/b")!),
    service.fetcher(request: URLRequest(url: URL(string: "http://example.com/c")!)),
  ]
}

@Suite("Service defaults in the fetchers made")
struct ServiceDefaultsTests {
  /// Each setting reaches every fetcher the service makes (however it is made), and a service
  /// without it makes fetchers without it: a setting the service stopped handing over fails here.
  @Test(arguments: ServiceDefault.all)
  func eachDefaultReachesTheFetchersMade(_ setting: ServiceDefault) {
    #expect(!setting.isCarried(fetchers(of: FetcherService())[0]), "carried without being set")
    let service = FetcherService()
    setting.set(service)
    for fetcher in fetchers(of: service) {
      #expect(setting.isCarried(fetcher), "\(fetcher.request?.url?.path ?? "")")
    }
  }

  /// The fetcher keeps what it was made with (its request), and takes the service's settings when
  /// it is made: later changes reach only fetchers made afterwards.
  @Test func fetchersKeepTheirRequestAndTakeTheDefaultsWhenMade() {
    let service = FetcherService()
    service.isRetryEnabled = true
    let made = fetchers(of: service)
    #expect(made.map { $0.request?.url?.lastPathComponent } == ["a", "b", "c"])
    service.isRetryEnabled = false
    #expect(made.allSatisfy { $0.isRetryEnabled })
    #expect(!service.fetcher(urlString: "http://example.com/d").isRetryEnabled)
  }

  /// Every fetcher knows its service, has the service's own cookie jar (not the shared one), and
  /// none takes what stays the service's: its User-Agent provider and agent.
  @Test func fetchersBelongToTheirService() {
    let service = FetcherService()
    service.userAgentProvider = StubAgent()
    service.userAgent = "Service/1.0"
    for fetcher in fetchers(of: service) {
      #expect(fetcher.service === service)
      #expect(fetcher.serviceHooks != nil)
      #expect(fetcher.cookieStorage === service.cookieStorage)
      #expect(fetcher.cookieStorage !== SessionCookieStorage.shared)
      #expect(fetcher.userAgentProvider == nil)
      #expect(fetcher.presetUserAgent == nil)
    }
  }

  /// With `reuseSession` (the default) a fetcher takes the service's shared session and no
  /// configuration of its own; without, the service's configuration (or the library's) and block.
  @Test func theSessionSettingsFollowReuseSession() throws {
    let configuration = URLSessionConfiguration.ephemeral
    let shared = FetcherService()
    shared.configuration = configuration
    shared.configurationBlock = { _ in }
    for fetcher in fetchers(of: shared) {
      #expect(fetcher.sessionProvider != nil)
      #expect(fetcher.configuration == nil && fetcher.configurationBlock == nil)
    }

    let own = FetcherService()
    own.reuseSession = false
    own.configuration = configuration
    for fetcher in fetchers(of: own) {
      #expect(fetcher.sessionProvider == nil)
      #expect(fetcher.configuration === configuration)
    }
    own.configuration = nil
    let fetcher = own.fetcher(urlString: "http://example.com/e")
    let made = try #require(fetcher.configuration)
    #expect(made !== configuration)
    #expect(
      made.httpMaximumConnectionsPerHost
        == SharedSession.defaultConfiguration(for: own.engine).httpMaximumConnectionsPerHost)
  }
}
