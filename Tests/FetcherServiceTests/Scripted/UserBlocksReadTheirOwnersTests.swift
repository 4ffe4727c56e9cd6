import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Every kind of block a fetcher or its service calls is the caller's code and may read the fetcher
/// and the service it belongs to. None runs while the library holds a lock: the locks are not
/// reentrant, so a read from inside would wait on itself for ever (and in debug builds
/// `LockAudit` stops the process first, naming the block).
@Suite("User blocks may read their own fetcher and service")
struct UserBlocksReadTheirOwnersTests {
  /// A block of the user's, set on the fetcher or on its service.
  enum Block: String, CaseIterable, Sendable {
    case fetcherConfigurationBlock, serviceConfigurationBlock
    case decoratorWillStart, decoratorDidFinish, authorizer, authorizerPrimeForRefresh
    case userAgentProvider, serviceUserAgentProvider
    case retryBlock, serviceRetryBlock, willRedirectBlock, challengeBlock, serviceChallengeBlock
    case didReceiveResponseBlock, metricsCollectionBlock, serviceMetricsCollectionBlock
    case testBlock, serviceTestBlock, accumulateDataBlock, receivedProgressBlock, sendProgressBlock
    case downloadProgressBlock, resumeDataBlock, completionHandler, eventMonitor, notificationObserver
  }

  static let body = Data("the body".utf8)

  /// What a block reads: state behind the fetcher's lock and behind the service's.
  static func read(_ fetcher: SessionFetcher?, _ service: FetcherService?) -> String {
    let fetcherState = fetcher.map {
      "fetching \($0.isFetching), status \($0.statusCode), retries \($0.retryCount)"
    }
    let serviceState = service.map {
      "fetchers \($0.numberOfFetchers), per host \($0.maxRunningFetchersPerHost)"
    }
    return [fetcherState ?? "no fetcher", serviceState ?? "no service"].joined(separator: "; ")
  }

  @Test(arguments: Block.allCases)
  func blockReadsItsFetcherAndService(_ block: Block) async throws {
    let engine = ScriptedEngine()
    let service = FetcherService()
    service.callbackQueue = DispatchQueue(label: "test.user-blocks.\(block.rawValue)")
    service.run(on: engine)
    let reads = Recorder<String>()
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("blocks-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let fetcher = Self.prepare(block, engine: engine, service: service, folder: folder, reads: reads)

    let finished = Recorder<Bool>()
    let observer = NotificationCenter.default.addObserver(
      forName: .sessionFetcherStopped, object: fetcher, queue: nil
    ) { [weak fetcher, weak service] _ in
      if block == .notificationObserver { reads.append(Self.read(fetcher, service)) }
    }
    defer { NotificationCenter.default.removeObserver(observer) }
    // Begun on a thread of its own: a block that waits on a lock its caller holds fails the test
    // at the bound instead of hanging the run.
    Thread.detachNewThread {
      fetcher.beginFetch { [weak fetcher, weak service] _, _ in
        if block == .completionHandler { reads.append(Self.read(fetcher, service)) }
        finished.append(true)
      }
    }
    guard await eventually(timeout: 60, { finished.count == 1 && reads.count > 0 }) else {
      Issue.record("\(block.rawValue) did not run, or the fetch did not end: blocked on a lock?")
      return
    }
    // Each read reached the service's state (and the fetcher's, where the block has one).
    #expect(reads.values.allSatisfy { $0.contains("per host") })
  }

  /// Sets up `block` on a fetcher of `service` (or on the service) and the answers that make the
  /// fetch call it.
  static func prepare(
    _ block: Block, engine: ScriptedEngine, service: FetcherService, folder: URL, reads: Recorder<String>
  ) -> SessionFetcher {
    let scripted: Set<Block> = [
      .serviceRetryBlock, .serviceChallengeBlock, .authorizerPrimeForRefresh, .retryBlock, .willRedirectBlock,
      .challengeBlock, .resumeDataBlock,
    ]
    if !scripted.contains(block) { engine.respond(to: "/b", with: .response(body: body)) }
    let url = engine.url("/b")
    switch block {
    case .serviceConfigurationBlock:
      service.configurationBlock = { [weak service] _ in
        reads.append(read(service?.issuedFetchers.first, service))
      }
    case .serviceUserAgentProvider:
      service.userAgentProvider = ReadingAgent(reads: reads, service: service)
    case .serviceRetryBlock:
      engine.respond(to: "/b", with: .response(status: 503), .response(body: body))
      service.isRetryEnabled = true
      service.minRetryInterval = 0.01
      service.retryBlock = { [weak service] suggested, _, respond in
        reads.append(read(service?.issuedFetchers.first, service))
        respond(suggested)
      }
    case .serviceChallengeBlock:
      engine.respond(to: "/b", with: .challenge(), .response(body: body))
      service.challengeBlock = { [weak service] fetcher, _ in
        reads.append(read(fetcher, service))
        return (.performDefaultHandling, nil)
      }
    case .serviceMetricsCollectionBlock:
      service.metricsCollectionBlock = { [weak service] _ in
        reads.append(read(service?.issuedFetchers.first, service))
      }
    case .serviceTestBlock:
      service.testBlock = { [weak service] fetcher, respond in
        reads.append(read(fetcher, service))
        respond(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: nil), body, nil)
      }
    default:
      break
    }
    let fetcher = service.fetcher(url: url)
    prepareFetcher(block, fetcher, engine: engine, service: service, folder: folder, reads: reads)
    return fetcher
  }

  // The fetcher's own blocks, each capturing its fetcher and service weakly.
  // swift-format-ignore: FunctionBodyLength
  static func prepareFetcher(
    _ block: Block, _ fetcher: SessionFetcher, engine: ScriptedEngine, service: FetcherService, folder: URL,
    reads: Recorder<String>
  ) {
    let record: @Sendable (SessionFetcher?, FetcherService?) -> Void = { reads.append(read($0, $1)) }
    switch block {
    case .fetcherConfigurationBlock:
      fetcher.configurationBlock = { [weak fetcher, weak service] _ in record(fetcher, service) }
    case .decoratorWillStart, .decoratorDidFinish:
      service.addDecorator(
        ReadingDecorator(onStart: block == .decoratorWillStart, reads: reads, service: service))
    case .authorizer:
      fetcher.authorizer = ReadingAuthorizer(reads: reads, fetcher: fetcher, service: service)
    case .authorizerPrimeForRefresh:
      engine.respond(to: "/b", with: .response(status: 401), .response(body: body))
      fetcher.authorizer = ReadingAuthorizer(
        reads: reads, fetcher: fetcher, service: service, onRefresh: true)
    case .userAgentProvider:
      fetcher.userAgentProvider = ReadingAgent(reads: reads, service: service, fetcher: fetcher)
    case .retryBlock:
      engine.respond(to: "/b", with: .response(status: 503), .response(body: body))
      fetcher.isRetryEnabled = true
      fetcher.minRetryInterval = 0.01
      fetcher.retryBlock = { [weak fetcher, weak service] suggested, _, respond in
        record(fetcher, service)
        respond(suggested)
      }
    case .willRedirectBlock:
      engine.respond(to: "/b", with: .redirect(to: "/c"))
      engine.respond(to: "/c", with: .response(body: body))
      fetcher.willRedirectBlock = { [weak fetcher, weak service] _, request, respond in
        record(fetcher, service)
        respond(request)
      }
    case .challengeBlock:
      engine.respond(to: "/b", with: .challenge(), .response(body: body))
      fetcher.challengeBlock = { [weak service] fetcher, _ in
        record(fetcher, service)
        return (.performDefaultHandling, nil)
      }
    case .didReceiveResponseBlock:
      fetcher.didReceiveResponseBlock = { [weak fetcher, weak service] _ in
        record(fetcher, service)
        return .allow
      }
    case .metricsCollectionBlock:
      fetcher.metricsCollectionBlock = { [weak fetcher, weak service] _ in record(fetcher, service) }
    case .testBlock:
      fetcher.testBlock = { [weak service] fetcher, respond in
        record(fetcher, service)
        respond(
          HTTPURLResponse(url: engine.url("/b"), statusCode: 200, httpVersion: nil, headerFields: nil), body,
          nil)
      }
    case .accumulateDataBlock:
      fetcher.accumulateDataBlock = { [weak fetcher, weak service] _ in record(fetcher, service) }
    case .receivedProgressBlock:
      fetcher.receivedProgressBlock = { [weak fetcher, weak service] _, _ in record(fetcher, service) }
    case .sendProgressBlock:
      fetcher.bodyData = Data(repeating: 7, count: 1000)
      fetcher.sendProgressBlock = { [weak fetcher, weak service] _, _, _ in record(fetcher, service) }
    case .downloadProgressBlock:
      fetcher.destinationFileURL = folder.appendingPathComponent("download.bin")
      fetcher.downloadProgressBlock = { [weak fetcher, weak service] _, _, _ in record(fetcher, service) }
    case .resumeDataBlock:
      // Half the body, then the connection is lost: a download that can be continued.
      engine.respond(
        to: "/b",
        with: ScriptedExchange([
          .head(status: 200, headers: ["Content-Length": "8", "ETag": "\"v1\"", "Accept-Ranges": "bytes"]),
          .body(Data("the ".utf8)), .stall,
        ]))
      fetcher.destinationFileURL = folder.appendingPathComponent("resumable.bin")
      fetcher.stopFetchingTriggersCompletionHandler = true
      fetcher.resumeDataBlock = { [weak fetcher, weak service] _ in record(fetcher, service) }
      fetcher.downloadProgressBlock = { [weak fetcher] _, written, _ in
        if written >= 4 { fetcher?.stopFetching() }
      }
    case .eventMonitor:
      fetcher.eventMonitors = [ReadingMonitor(reads: reads, service: service)]
    case .serviceConfigurationBlock, .serviceUserAgentProvider, .serviceRetryBlock, .serviceChallengeBlock,
      .serviceMetricsCollectionBlock, .serviceTestBlock, .completionHandler, .notificationObserver:
      break
    }
  }
}

/// A decorator that reads its fetcher and service when the fetch starts or finishes.
private final class ReadingDecorator: FetcherDecorator {
  let onStart: Bool
  let reads: Recorder<String>
  weak let service: FetcherService?

  init(onStart: Bool, reads: Recorder<String>, service: FetcherService) {
    self.onStart = onStart
    self.reads = reads
    self.service = service
  }

  func fetcherWillStart(_ fetcher: SessionFetcher, request: URLRequest) async throws -> URLRequest {
    if onStart { reads.append(UserBlocksReadTheirOwnersTests.read(fetcher, service)) }
    return request
  }

  func fetcherDidFinish(_ fetcher: SessionFetcher, data: Data?, error: (any Error)?) async {
    if !onStart { reads.append(UserBlocksReadTheirOwnersTests.read(fetcher, service)) }
  }
}

/// An authorizer that reads its fetcher and service when it authorizes, or when asked to refresh.
private final class ReadingAuthorizer: FetcherAuthorizer {
  let reads: Recorder<String>
  let onRefresh: Bool
  weak let fetcher: SessionFetcher?
  weak let service: FetcherService?

  init(reads: Recorder<String>, fetcher: SessionFetcher, service: FetcherService, onRefresh: Bool = false) {
    self.reads = reads
    self.fetcher = fetcher
    self.service = service
    self.onRefresh = onRefresh
  }

  func authorizeRequest(_ request: URLRequest) async throws -> URLRequest {
    if !onRefresh { reads.append(UserBlocksReadTheirOwnersTests.read(fetcher, service)) }
    return request
  }

  func primeForRefresh() async -> Bool {
    if onRefresh { reads.append(UserBlocksReadTheirOwnersTests.read(fetcher, service)) }
    return true
  }
}

/// A user-agent provider that reads its fetcher (if it has one) and service.
private final class ReadingAgent: UserAgentProvider {
  let reads: Recorder<String>
  weak let service: FetcherService?
  weak let fetcher: SessionFetcher?

  init(reads: Recorder<String>, service: FetcherService, fetcher: SessionFetcher? = nil) {
    self.reads = reads
    self.service = service
    self.fetcher = fetcher
  }

  func userAgent() async -> String {
    reads.append(UserBlocksReadTheirOwnersTests.read(fetcher ?? service?.issuedFetchers.first, service))
    return "Reader/1.0"
  }
}

/// An event monitor that reads the fetcher and its service at every event.
private final class ReadingMonitor: FetcherEventMonitor {
  let reads: Recorder<String>
  weak let service: FetcherService?

  init(reads: Recorder<String>, service: FetcherService) {
    self.reads = reads
    self.service = service
  }

  func fetcherDidBegin(_ fetcher: SessionFetcher) {
    reads.append(UserBlocksReadTheirOwnersTests.read(fetcher, service))
  }

  func fetcher(_ fetcher: SessionFetcher, didFinishWithData data: Data?, error: (any Error)?) {
    reads.append(UserBlocksReadTheirOwnersTests.read(fetcher, service))
  }
}
