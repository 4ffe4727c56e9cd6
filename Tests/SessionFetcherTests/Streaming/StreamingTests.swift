import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// Runs `body`, failing when it takes longer than `seconds` (the test's own bound).
func bounded<T: Sendable>(
  _ seconds: TimeInterval = 30, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
  try await withThrowingTaskGroup(of: T.self) { group in
    group.addTask { try await body() }
    group.addTask {
      try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
      throw FetchTimeout()
    }
    defer { group.cancelAll() }
    return try await group.next()!
  }
}

/// What a test has read of a streamed body: its length and its FNV-1a hash.
struct ReadBody {
  var hash = FNV1a64()
  var total = 0

  mutating func add(_ chunk: Data) {
    hash.update(chunk)
    total += chunk.count
  }
}

@Suite("Streaming", .ownThreads)
struct StreamingTests {
  @Test func chunksArriveInOrderAfterTheHead() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/stream?bytes=300000&chunkSize=7000&interval=1")
    let counter = NotificationRecorder([fetcher])
    let received = try await bounded {
      let stream = try await fetcher.beginStreaming()
      #expect(stream.httpResponse?.statusCode == 200)
      var body = Data()
      for try await chunk in stream { body.append(chunk) }
      return body
    }
    #expect(received == TestServer.patternBytes(count: 300_000))
    #expect(await eventually { counter.started == 1 && counter.stopped == 1 })
  }

  @Test func bodyChunksBeginsLazily() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let chunks = server.fetcher("/bytes/50000").bodyChunks()
    #expect(server.requestCount(path: "/bytes/50000") == 0)
    let total = try await bounded {
      var total = 0
      for try await chunk in chunks { total += chunk.count }
      return total
    }
    #expect(total == 50_000)
  }

  @Test func httpErrorStatusThrowsBeforeAnyChunkWithTheBody() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/status/404")
    await #expect {
      _ = try await bounded { try await fetcher.beginStreaming() }
    } throws: { error in
      guard let error = error as? SessionFetcherError, error.statusCode == 404 else { return false }
      return String(decoding: error.data ?? Data(), as: UTF8.self).contains("Server Status 404")
    }
  }

  @Test func retriesBeforeTheFirstChunk() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/fail-first?n=1&key=stream-retry&status=503&bytes=20000")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.05
    let counter = NotificationRecorder([fetcher])
    let body = try await bounded {
      var body = Data()
      for try await chunk in try await fetcher.beginStreaming() { body.append(chunk) }
      return body
    }
    #expect(body == TestServer.patternBytes(count: 20_000))
    #expect(fetcher.retryCount == 1)
    #expect(server.requestCount(path: "/fail-first") == 2)
    #expect(await eventually { counter.started == 2 && counter.stopped == 2 })
  }

  @Test func noRetryAfterTheFirstChunkAndTheErrorComesOnce() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/truncate?length=100000&send=3000")
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.05
    let (count, errors, afterError) = try await bounded {
      let stream = try await fetcher.beginStreaming()
      var iterator = stream.makeAsyncIterator()
      var count = 0
      var errors = 0
      var afterError: Data?
      while true {
        do {
          guard let chunk = try await iterator.next() else { break }
          count += chunk.count
        } catch {
          errors += 1
          afterError = try await iterator.next()
          break
        }
      }
      return (count, errors, afterError)
    }
    #expect(count == 3000)
    #expect(errors == 1)
    #expect(afterError == nil)
    #expect(server.requestCount(path: "/truncate") == 1)
  }

  /// The consumer stops reading: the fetcher pauses the transfer, and the server's written bytes
  /// stop growing far below the body's size; once the consumer reads again, the rest arrives intact.
  @Test func backpressurePausesTheServer() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let size = 64 * 1024 * 1024
    let fetcher = server.fetcher("/bytes/\(size)")
    let counter = NotificationRecorder([fetcher])
    let stream = try await bounded { try await fetcher.beginStreaming(highWaterMark: 1 << 20) }
    var iterator = stream.makeAsyncIterator()
    var body = ReadBody()
    if let first = try await iterator.next() { body.add(first) }
    // Wait until the server's count settles while the consumer sleeps.
    var previous = -1
    var plateau = 0
    for _ in 0..<50 where plateau < 3 {
      try await Task.sleep(nanoseconds: 100_000_000)
      let now = server.bytesWritten(path: "/bytes/\(size)")
      plateau = now == previous ? plateau + 1 : 0
      previous = now
    }
    #expect(plateau >= 3, "the server kept writing")
    // On loopback libcurl can read the whole body before the pause gets through FoundationNetworking's
    // work queue (the server then plateaus at the end); what must hold is the bounded buffer.
    #expect(stream.bufferedByteCount <= (1 << 20) + 256 * 1024)
    while let chunk = try await iterator.next() {
      body.add(chunk)
      #expect(stream.bufferedByteCount <= (1 << 20) + 256 * 1024)
    }
    #expect(body.total == size)
    #expect(body.hash.hexDigest == TestServer.checksum(TestServer.patternBytes(count: size)))
    let requests = server.requests(path: "/bytes/\(size)")
    #if canImport(FoundationNetworking)
      if fetcher.engine == .libcurl {
        // libcurl really pauses: one request, and the server stopped far below the body's size
        // while the consumer slept (socket buffers and one read buffer ahead of the stream's).
        #expect(requests.count == 1 && requests.first?.header("Range") == nil)
        #expect(previous < size / 2, "the server wrote \(previous) of \(size) bytes while paused")
      } else {
        // On the URLSession engine the body comes in Range windows from the first request on
        // (`StreamWindowTests`); every window after the first is guarded by If-Range.
        let continuations = requests.filter { $0.header("Range").map { !$0.hasPrefix("bytes=0-") } ?? false }
        #expect(!continuations.isEmpty)
        #expect(continuations.allSatisfy { $0.header("If-Range") == "\"bytes-\(size)\"" })
      }
    #endif
    #expect(await eventually { counter.started == 1 && counter.stopped == 1 })
  }

  /// A paused transfer is not idle on the wire: a consumer that stops reading for longer than the
  /// idle timeout, and than the engine's own timer for it (URLSession's backstop,
  /// `SessionFetcher.transportTimeout(backing:)`; the libcurl engine has none), gets the whole body
  /// afterwards, not a timeout. That the fetcher's own timer is off while paused is
  /// `ScriptedTimeoutTests.aPausedStreamIsNotIdle`.
  ///
  /// The idle timeout is 2 s and the pause the backstop (4 s) and 1 s more, so that either timer
  /// would have fired in it. After the pause the transfer must go on within the idle timeout, which
  /// takes milliseconds on an idle machine; a loaded 2-core machine has held FoundationNetworking's
  /// shared work queue, where the continuation's task is made, for more than 8 s. A timeout after
  /// the pause is that, and the run is made again with a longer timeout; a timeout during the pause
  /// fails the test at once.
  @Test func aPauseLongerThanTheIdleTimeoutIsNotATimeout() async throws {
    for timeout in [2.0, 8, 20] {
      let server = try TestServer()
      defer { server.stop() }
      let size = 8 * 1024 * 1024
      var request = URLRequest(url: server.url("/bytes/\(size)"))
      request.timeoutInterval = timeout
      let fetcher = SessionFetcher(request: request)
      fetcher.allowLocalhostRequest = true
      var body = ReadBody()
      do {
        let stream = try await bounded { try await fetcher.beginStreaming(highWaterMark: 256 * 1024) }
        var iterator = stream.makeAsyncIterator()
        // Before the pause, a timeout is the machine's load too (the first bytes late).
        if let first = try await iterator.next() { body.add(first) }
        let pause = SessionFetcher.transportTimeout(backing: timeout) + 1
        try await Task.sleep(nanoseconds: UInt64(pause * 1e9))
        try #require(fetcher.error == nil, "ended while paused: \(String(describing: fetcher.error))")
        while let chunk = try await iterator.next() { body.add(chunk) }
      } catch let error as URLError where error.code == .timedOut {
        // The fetcher's own idle timeout.
        continue
      } catch let error as NSError
        where error.domain == NSURLErrorDomain && error.code == NSURLErrorTimedOut
      {
        // FoundationNetworking's (its backstop).
        continue
      }
      #expect(body.total == size)
      #expect(body.hash.hexDigest == TestServer.checksum(TestServer.patternBytes(count: size)))
      #expect(fetcher.error == nil)
      return
    }
    Issue.record("every run timed out outside its pause, even with a 20 s idle timeout")
  }

  @Test func breakingOutOfTheLoopStopsTheTransfer() async throws {
    let server = try TestServer()
    defer { server.stop() }
    // 200 MB at about 3 MB/s: the whole body would take a minute, so "well short" holds even when
    // a loaded machine stalls the consumer for many seconds.
    let total = 200_000_000
    let fetcher = server.fetcher("/stream?bytes=\(total)&chunkSize=16384&interval=5")
    let counter = NotificationRecorder([fetcher])
    try await bounded {
      var seen = 0
      for try await chunk in try await fetcher.beginStreaming() {
        seen += chunk.count
        if seen > 50_000 { break }
      }
    }
    #expect(await eventually { !fetcher.isFetching })
    #expect(await eventually { counter.started == 1 && counter.stopped == 1 })
    // The server's writes fail once the client is gone: its connection ends, the count well short
    // of the body.
    let closed = await offThePool { server.waitUntilConnectionsClosed(timeout: 60) }
    #expect(closed, "the connection is still open")
    #expect(server.bytesWritten(path: "/stream") < total / 2)
  }

  @Test func cancellingTheConsumingTaskStopsTheTransfer() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let total = 200_000_000
    let fetcher = server.fetcher("/stream?bytes=\(total)&chunkSize=16384&interval=20")
    let counter = NotificationRecorder([fetcher])
    let started = Recorder<Int>()
    let task = Task {
      for try await chunk in try await fetcher.beginStreaming() { started.append(chunk.count) }
    }
    #expect(await eventually(timeout: 30) { started.count > 0 })
    task.cancel()
    let result = await task.result
    #expect(throws: SessionFetcherError.cancelled) { try result.get() }
    #expect(await eventually { !fetcher.isFetching })
    #expect(await eventually { counter.started == 1 && counter.stopped == 1 })
    #expect(server.bytesWritten(path: "/stream") < total / 2)
  }

  @Test func linesHandleEveryLineEnd() async throws {
    let server = try TestServer()
    defer { server.stop() }
    server.route("/lines") { _ in
      TestResponse(
        headers: [("Transfer-Encoding", "chunked")],
        body: Data("one\r\ntwo\nthree\rfour é\r\n\r\nlast".utf8))
    }
    let lines = try await bounded {
      var lines: [String] = []
      for try await line in try await server.fetcher("/lines").beginStreaming().lines { lines.append(line) }
      return lines
    }
    #expect(lines == ["one", "two", "three", "four é", "", "last"])
  }

  @Test func eventsOfOneConnection() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/sse?events=3&event=tick&interval=10")
    let events = try await bounded {
      var events: [ServerSentEvent] = []
      for try await event in fetcher.events() { events.append(event) }
      return events
    }
    #expect(events.map(\.data) == ["event 1", "event 2", "event 3"])
    #expect(events.map(\.id) == ["1", "2", "3"])
    #expect(events.allSatisfy { $0.event == "tick" })
    #expect(server.requests(path: "/sse").first?.header("Accept") == "text/event-stream")
  }

  @Test func eventSourceReconnectsWithLastEventID() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let source = SessionFetcher.eventSource(
      url: server.url("/sse?events=6&dropAfter=2&retry=50"), maximumReconnections: 3
    ) { request in
      let fetcher = SessionFetcher(request: request)
      fetcher.allowLocalhostRequest = true
      fetcher.callbackQueue = makeCallbackQueue()
      return fetcher
    }
    let ids = try await bounded {
      var ids: [String] = []
      for try await event in source {
        ids.append(event.id ?? "")
        if ids.count == 6 { break }
      }
      return ids
    }
    #expect(ids == ["1", "2", "3", "4", "5", "6"])
    let sent = server.requests(path: "/sse").map { $0.header("Last-Event-ID") }
    #expect(Array(sent.prefix(3)) == [nil, "2", "4"])
  }

  /// A connection the server drops is reported as a reconnection with its transport error and the
  /// server's `retry:` delay, and the stream resumes from the last event's ID; the first request
  /// carries the ID the stream was started from.
  @Test func eventSourceReportsADroppedConnectionAndResumes() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let source = SessionFetcher.eventSource(
      url: server.url("/sse?events=4&id=11&dropAfter=2&retry=50"), lastEventID: "10", maximumReconnections: 2
    ) { request in
      let fetcher = SessionFetcher(request: request)
      fetcher.allowLocalhostRequest = true
      fetcher.callbackQueue = makeCallbackQueue()
      return fetcher
    }
    let updates = try await bounded {
      var updates: [String] = []
      for try await update in source.updates {
        switch update {
        case .event(let event):
          updates.append(event.id ?? "-")
        case .reconnecting(let delay, let cause, let attempt):
          #expect(cause is URLError, "\(cause)")
          updates.append("reconnect \(attempt) after \(delay)")
        }
        if updates.last == "14" { break }
      }
      return updates
    }
    #expect(updates == ["11", "12", "reconnect 1 after 0.05", "13", "14"])
    let sent = server.requests(path: "/sse").map { $0.header("Last-Event-ID") }
    #expect(sent == ["10", "12"])
  }

  @Test func eventSourceStopsOnAnHTTPError() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let source = SessionFetcher.eventSource(url: server.url("/status/500"), maximumReconnections: 3) {
      let fetcher = SessionFetcher(request: $0)
      fetcher.allowLocalhostRequest = true
      fetcher.callbackQueue = makeCallbackQueue()
      return fetcher
    }
    await #expect(throws: SessionFetcherError.self) {
      try await bounded { for try await _ in source {} }
    }
    #expect(server.requestCount(path: "/status/500") == 1)
  }
}
