import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

@Suite("Event monitors", .ownThreads)
struct EventMonitorTests {
  /// Records the events of one fetcher (global monitors see every fetcher of the process, and tests
  /// run in parallel).
  final class EventLog: FetcherEventMonitor, Sendable {
    let target: ObjectIdentifier
    let events = Recorder<String>()
    init(_ fetcher: SessionFetcher) { target = ObjectIdentifier(fetcher) }

    private func record(_ fetcher: SessionFetcher, _ event: String) {
      if ObjectIdentifier(fetcher) == target { events.append(event) }
    }
    func fetcherDidBegin(_ fetcher: SessionFetcher) { record(fetcher, "begin") }
    func fetcher(_ fetcher: SessionFetcher, willSendRequest request: URLRequest) { record(fetcher, "send") }
    func fetcher(_ fetcher: SessionFetcher, didReceiveResponse response: URLResponse) {
      record(fetcher, "response")
    }
    func fetcher(_ fetcher: SessionFetcher, didFinishWithData data: Data?, error: (any Error)?) {
      record(fetcher, "finish")
    }
  }

  /// A fetch reports to the monitors registered when it began: a global monitor added while it
  /// runs sees none of its events, one registered before sees all of them.
  @Test func aFetchReportsToTheMonitorsOfItsBeginning() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let gate = Gate()
    server.route("/slow") { _ in
      gate.wait()
      return .text("slow")
    }
    let fetcher = server.fetcher("/slow")
    let before = EventLog(fetcher)
    let own = EventLog(fetcher)
    fetcher.eventMonitors = [own]
    SessionFetcher.addGlobalEventMonitor(before)
    defer { SessionFetcher.removeGlobalEventMonitor(before) }
    let result = Recorder<FetchResult>()
    fetcher.beginFetch { data, error in result.append(FetchResult(data: data, error: error)) }
    #expect(await eventually { server.requestCount(path: "/slow") == 1 })
    let during = EventLog(fetcher)
    SessionFetcher.addGlobalEventMonitor(during)
    defer { SessionFetcher.removeGlobalEventMonitor(during) }
    SessionFetcher.removeGlobalEventMonitor(before)
    gate.open()
    #expect(await eventually { result.count == 1 })
    #expect(result.values.first?.error == nil)
    #expect(before.events.values == ["begin", "send", "response", "finish"])
    #expect(own.events.values == ["begin", "send", "response", "finish"])
    #expect(during.events.values.isEmpty)
  }
}
