import FetcherTesting
import Foundation
import TestTraits
import Testing

@testable import SessionFetcher

/// The serial queue of a fetch whose completion was delivered goes to the next fetch to the same
/// callback queue, never to two fetches at once.
@Suite("Serial callback queues kept between fetches", .ownThreads)
struct SerialCallbackQueueTests {
  @Test func aQueueIsTakenOnceAndOnlyForItsTarget() {
    let (first, second) = (DispatchQueue(label: "first"), DispatchQueue(label: "second"))
    var idle = SerialCallbackQueue.IdleQueues()
    let serial = DispatchQueue(label: "serial", target: first)
    idle.keep(serial, targeting: first)
    #expect(idle.take(targeting: second) == nil)
    #expect(idle.take(targeting: first) === serial)
    #expect(idle.take(targeting: first) == nil)
  }

  @Test func theQueueKeptFirstGoesPastTheLimit() {
    let target = DispatchQueue(label: "target")
    var idle = SerialCallbackQueue.IdleQueues()
    let kept = (0...SerialCallbackQueue.IdleQueues.limit).map {
      DispatchQueue(label: "serial \($0)", target: target)
    }
    for serial in kept { idle.keep(serial, targeting: target) }
    #expect(idle.count == SerialCallbackQueue.IdleQueues.limit)
    var taken: [DispatchQueue] = []
    while let serial = idle.take(targeting: target) { taken.append(serial) }
    #expect(taken.count == SerialCallbackQueue.IdleQueues.limit)
    #expect(!taken.contains { $0 === kept[0] })
  }

  /// Two fetches in a row on one concurrent queue: the second runs on the first's serial queue; two
  /// fetches under way at once each have their own.
  @Test func aFetchTakesTheQueueOfOneThatCompleted() async throws {
    let queue = DispatchQueue(label: "concurrent callbacks", attributes: .concurrent)
    // Fetches of other tests give their queues back meanwhile and may push this one out of the few
    // kept: a few rounds, of which one must take it.
    var reused = false
    for _ in 0..<10 where !reused {
      let first = stubbedFetcher(queue)
      #expect(await first.fetchResult().error == nil)
      #expect(await eventually { first.storage.withLock { $0.completionDelivered } })
      let firstSerial = try #require(first.storage.withLock { $0.plan?.callbackQueue })
      #expect(firstSerial !== queue)

      // The second answers only once the third has begun: both are under way at once.
      let gate = DispatchSemaphore(value: 0)
      let (second, third) = (stubbedFetcher(queue, gate: gate), stubbedFetcher(queue))
      async let secondResult = second.fetchResult()
      #expect(await eventually { second.storage.withLock { $0.plan != nil } })
      async let thirdResult = third.fetchResult()
      #expect(await eventually { third.storage.withLock { $0.plan != nil } })
      let secondSerial = try #require(second.storage.withLock { $0.plan?.callbackQueue })
      let thirdSerial = try #require(third.storage.withLock { $0.plan?.callbackQueue })
      reused = secondSerial === firstSerial
      #expect(thirdSerial !== secondSerial && thirdSerial !== queue)
      gate.signal()
      #expect(await secondResult.error == nil)
      #expect(await thirdResult.error == nil)
    }
    #expect(reused)
  }

  private func stubbedFetcher(_ queue: DispatchQueue, gate: DispatchSemaphore? = nil) -> SessionFetcher {
    let url = URL(string: "https://stub.example/serial")!
    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.callbackQueue = queue
    fetcher.testBlock = { _, respond in
      gate?.wait()
      respond(HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: nil), Data(), nil)
    }
    return fetcher
  }
}
