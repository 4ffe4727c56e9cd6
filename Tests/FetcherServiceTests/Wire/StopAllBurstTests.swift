import FetcherService
import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

@Suite("stopAllFetchers during bursts", .ownThreads)
struct StopAllBurstTests {
  @Test("stopAll while bursts of fetchers begin on several threads: no completion after, balanced, all freed")
  func stopAllDuringBursts() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let service = makeService(maxPerHost: 4)
    let recorder = NotificationRecorder()
    let late = Recorder<Int>()
    let stopsDone = Recorder<Int>()
    final class Refs: @unchecked Sendable {
      // `@unchecked Sendable`: `items` is only touched under `lock`.
      let lock = NSLock()
      var items: [() -> SessionFetcher?] = []
      /// Kept until the notifications are counted: a freed fetcher's address (its ObjectIdentifier)
      /// may be reused by another suite's fetcher, whose notifications would then be counted.
      var strong: [SessionFetcher] = []
      func add(_ fetcher: SessionFetcher) {
        lock.lock()
        items.append({ [weak fetcher] in fetcher })
        strong.append(fetcher)
        lock.unlock()
      }
      func releaseStrong() {
        lock.lock()
        strong = []
        lock.unlock()
      }
      var alive: Int {
        lock.lock()
        defer { lock.unlock() }
        return items.filter { $0() != nil }.count
      }
    }
    let refs = Refs()
    for round in 0..<5 {
      let roundStopped = Recorder<Bool>()
      let finalStopReturned = Recorder<Date>()
      DispatchQueue.concurrentPerform(iterations: 4) { thread in
        if thread == 3 {
          usleep(UInt32.random(in: 500...3_000))
          service.stopAllFetchers()
          stopsDone.append(round)
          return
        }
        for index in 0..<40 {
          let path =
            ["/hang", "/delay/0.02", "/bytes/2000"][index % 3] + "?r=\(round)&t=\(thread)&i=\(index)"
          let fetcher = service.fetcher(url: index % 2 == 0 ? server.url(path) : server.localhostURL(path))
          recorder.watch(fetcher)
          refs.add(fetcher)
          fetcher.beginFetch { [weak fetcher] _, _ in
            // No completion may run once the round's final stopAll has returned, except that of a
            // fetch that ended on its own before then: it may have left the service before stopAll
            // looked (so stopAll could not stop it) with its completion still on its way to the
            // queue. A fetch stopAll missed ends later, if at all.
            guard roundStopped.count > 0 else { return }
            let ended = fetcher?.timing.endDate ?? .distantFuture
            if ended > finalStopReturned.values.first ?? .distantPast { late.append(round) }
          }
        }
      }
      // Whatever began before stopAll returned is stopped; anything begun after runs normally.
      service.stopAllFetchers()
      finalStopReturned.append(Date())
      // A completion already running when stopAll was called may finish; none may start later.
      service.callbackQueue.sync {}
      roundStopped.append(true)
      #expect(service.numberOfFetchers == 0)
      #expect(stopsDone.count == round + 1)
    }
    #expect(await eventually(timeout: 30) { !refs.strong.contains { $0.isFetching } })
    // A fetch stops being "fetching" as its end begins; its Stopped notification follows on the
    // callback queue once the end has run (monitors, the service), so balance is waited for.
    #expect(await eventually(timeout: 30) { recorder.started == recorder.stopped })
    await drain(service.callbackQueue)
    #expect(late.count == 0)
    #expect(recorder.started == recorder.stopped)
    #expect(service.numberOfFetchers == 0)
    refs.releaseStrong()
    #expect(await eventually(timeout: 30) { refs.alive == 0 })
    // The service still works afterwards.
    #expect(await service.fetcher(url: server.url("/text?value=after")).fetchResult().error == nil)
  }
}
