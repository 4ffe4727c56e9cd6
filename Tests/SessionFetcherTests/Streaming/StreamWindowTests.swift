import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// A resource served with ranges by a custom route (stream and download window tests): a strong
/// ETag (which the test may change), `Accept-Ranges: bytes`, and `Range` / `If-Range` handled as
/// `/bytes/N` does.
final class RangedResource: @unchecked Sendable {
  // `@unchecked Sendable`: the mutable state is only touched under `lock`.
  private let lock = NSLock()
  private var etagValue = "\"v1\""
  private var requestCount = 0
  let body: Data
  /// Called with each request's number (from 1): a fault to answer with instead, if any.
  let fault: @Sendable (Int) -> TestResponse.Fault?

  init(size: Int, fault: @escaping @Sendable (Int) -> TestResponse.Fault? = { _ in nil }) {
    body = TestServer.patternBytes(count: size)
    self.fault = fault
  }

  var etag: String {
    get { lock.withLock { etagValue } }
    set { lock.withLock { etagValue = newValue } }
  }

  func respond(_ request: RecordedRequest, ranges: Bool = true) -> TestResponse {
    let (number, etag) = lock.withLock { () -> (Int, String) in
      requestCount += 1
      return (requestCount, etagValue)
    }
    var headers = [("Content-Type", "application/octet-stream"), ("ETag", etag)]
    guard ranges else { return TestResponse(headers: headers, body: body) }
    headers.append(("Accept-Ranges", "bytes"))
    var response = TestResponse(headers: headers, body: body)
    if let range = request.header("Range"), request.header("If-Range").map({ $0 == etag }) ?? true,
      let bounds = Self.bounds(range, length: body.count)
    {
      response = TestResponse(
        status: 206,
        headers: headers + [
          ("Content-Range", "bytes \(bounds.lowerBound)-\(bounds.upperBound)/\(body.count)")
        ],
        body: body.subdata(in: bounds.lowerBound..<(bounds.upperBound + 1)))
    }
    if let fault = fault(number) {
      // Half the announced bytes, then the connection closes.
      if case .truncate(let announced) = fault { response.body = response.body.prefix(announced / 2) }
      response.fault = fault
    }
    return response
  }

  /// `bytes=A-B` or `bytes=A-` within `length`.
  static func bounds(_ header: String, length: Int) -> ClosedRange<Int>? {
    guard header.hasPrefix("bytes=") else { return nil }
    let parts = header.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2, let first = Int(parts[0]), first < length else { return nil }
    let last = Int(parts[1]).map { min($0, length - 1) } ?? length - 1
    return first <= last ? first...last : nil
  }
}

/// The first byte of a request's `Range: bytes=A-B`.
func rangeStart(_ request: RecordedRequest) -> Int? {
  guard let range = request.header("Range"), range.hasPrefix("bytes=") else { return nil }
  return Int(range.dropFirst("bytes=".count).prefix { $0 != "-" })
}

/// Streams a body through `stream`, hashing it; sleeps a little every `slowEvery` chunks (a slow
/// consumer) and records the largest buffered byte count seen.
private func consume(
  _ stream: FetcherStream, slowEvery: Int = 0
) async throws -> (count: Int, digest: String, maximumBuffered: Int) {
  var hash = FNV1a64()
  var count = 0
  var chunks = 0
  var maximumBuffered = 0
  for try await chunk in stream {
    hash.update(chunk)
    count += chunk.count
    chunks += 1
    maximumBuffered = max(maximumBuffered, stream.bufferedByteCount)
    if slowEvery > 0, chunks % slowEvery == 0 { try await Task.sleep(nanoseconds: 2_000_000) }
  }
  return (count, hash.hexDigest, maximumBuffered)
}

/// Streamed GETs asked for in bounded Range windows (Linux; see `StreamWindows`).
@Suite("Stream windows")
struct StreamWindowTests {
  /// A slow consumer of 64 MiB with a 1 MiB high-water mark: the server writes the body about once
  /// (no runaway read-ahead), in windows, and the data is intact; the consumer sees one 200 head
  /// for the whole resource and one Started/Stopped pair.
  @Test func windowsBoundWhatTheServerWrites() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let size = 64 * 1024 * 1024
    let mark = 1 << 20
    let path = "/bytes/\(size)"
    let fetcher = server.fetcher(path)
    fetcher.engine = .urlSession  // the URLSession engine's Range windows
    let counter = NotificationRecorder([fetcher])
    let stream = try await bounded { try await fetcher.beginStreaming(highWaterMark: mark) }
    #expect(stream.httpResponse?.statusCode == 200)
    #expect(stream.response.expectedContentLength == Int64(size))
    #expect(stream.httpResponse?.value(forHTTPHeaderField: "Content-Range") == nil)
    #expect(stream.httpResponse?.value(forHTTPHeaderField: "ETag") == "\"bytes-\(size)\"")
    let result = try await bounded(120) { try await consume(stream, slowEvery: 32) }
    #expect(result.count == size)
    #expect(result.digest == TestServer.checksum(TestServer.patternBytes(count: size)))
    #expect(result.maximumBuffered <= mark + 256 * 1024)
    #expect(await eventually { counter.started == 1 && counter.stopped == 1 })
    #expect(fetcher.response?.expectedContentLength == Int64(size))
    #if canImport(FoundationNetworking)
      let window = 3 * mark / 4  // high-water mark − low-water mark (a quarter of it)
      let requests = server.requests(path: path)
      #expect(requests.count >= size / window)
      #expect(requests.first?.header("Range") == "bytes=0-\(window - 1)")
      #expect(requests.first?.header("If-Range") == nil)
      #expect(requests.dropFirst().allSatisfy { $0.header("If-Range") == "\"bytes-\(size)\"" })
      #expect(
        requests.allSatisfy { request in
          guard let start = rangeStart(request) else { return false }
          return request.header("Range") == "bytes=\(start)-\(start + window - 1)"
        })
      // Each window is written once, plus at most a few windows read ahead of a pause, plus heads.
      #expect(server.bytesWritten(path: path) < size + 4 * window + requests.count * 1024)
    #endif
  }

  #if canImport(FoundationNetworking)
    /// The resource changes between two windows: the `If-Range` makes the server answer 200, and
    /// the stream fails once with `streamInterrupted` after the bytes of the first window, without
    /// a retry.
    @Test func aChangedResourceEndsTheStreamOnce() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let resource = RangedResource(size: 3 * 1024 * 1024)
      server.route("/changing") { request in
        let response = resource.respond(request)
        resource.etag = "\"v2\""
        return response
      }
      let fetcher = server.fetcher("/changing")
      fetcher.engine = .urlSession  // the URLSession engine's Range windows
      fetcher.isRetryEnabled = true
      fetcher.minRetryInterval = 0.05
      let counter = NotificationRecorder([fetcher])
      let mark = 1 << 20
      let (count, errors, afterError) = try await bounded {
        var iterator = try await fetcher.beginStreaming(highWaterMark: mark).makeAsyncIterator()
        var count = 0
        var errors: [any Error] = []
        var afterError: Data?
        while true {
          do {
            guard let chunk = try await iterator.next() else { break }
            count += chunk.count
          } catch {
            errors.append(error)
            afterError = try await iterator.next()
            break
          }
        }
        return (count, errors, afterError)
      }
      #expect(count == 3 * mark / 4)
      #expect(errors.count == 1)
      let interrupted = errors.first.map { error -> Bool in
        guard case .streamInterrupted? = error as? SessionFetcherError else { return false }
        return true
      }
      #expect(interrupted == true, "\(errors)")
      #expect(afterError == nil)
      #expect(server.requestCount(path: "/changing") == 2)
      #expect(server.requests(path: "/changing").last?.header("If-Range") == "\"v1\"")
      #expect(await eventually { counter.started == 1 && counter.stopped == 1 })
    }

    /// A window whose connection breaks is retried (with retries on) as a fresh window from the
    /// bytes delivered: the body is intact.
    @Test func aBrokenWindowIsRetriedFromWhereItStopped() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let mark = 1 << 20
      let window = 3 * mark / 4
      let resource = RangedResource(size: 2 * 1024 * 1024) { number in
        number == 2 ? .truncate(announcedLength: window) : nil
      }
      server.route("/flaky") { resource.respond($0) }
      let fetcher = server.fetcher("/flaky")
      fetcher.engine = .urlSession  // the URLSession engine's Range windows
      fetcher.isRetryEnabled = true
      fetcher.minRetryInterval = 0.05
      let counter = NotificationRecorder([fetcher])
      let result = try await bounded {
        try await consume(try await fetcher.beginStreaming(highWaterMark: mark))
      }
      #expect(result.count == resource.body.count)
      #expect(result.digest == TestServer.checksum(resource.body))
      #expect(fetcher.retryCount == 1)
      let starts = server.requests(path: "/flaky").map(rangeStart)
      #expect(starts.count == 4)
      #expect(Array(starts.prefix(3)) == [0, window, window + window / 2])
      #expect(server.requests(path: "/flaky").dropFirst().allSatisfy { $0.header("If-Range") == "\"v1\"" })
      // A retry is a new attempt: Started/Stopped per attempt, as for any retry.
      #expect(await eventually { counter.started == 2 && counter.stopped == 2 })
    }

    /// A window answered with an HTTP error is judged by the retry rules like any response: a 503
    /// is retried (with retries on) as a fresh window from the bytes delivered; without retries the
    /// stream fails once with the status, after the bytes of the first window.
    @Test(arguments: [true, false])
    func aWindowAnsweredWithAnErrorStatus(retries: Bool) async throws {
      let server = try TestServer()
      defer { server.stop() }
      let mark = 1 << 20
      let window = 3 * mark / 4
      let resource = RangedResource(size: 2 * 1024 * 1024)
      let path = "/busy-\(retries)"
      let hits = Recorder<Int>()
      server.route(path) { request in
        hits.append(1)
        let response = resource.respond(request)
        return hits.count == 2
          ? TestResponse(status: 503, headers: [("Content-Type", "text/plain")], body: Data("busy".utf8))
          : response
      }
      let fetcher = server.fetcher(path)
      fetcher.engine = .urlSession  // the URLSession engine's Range windows
      fetcher.isRetryEnabled = retries
      fetcher.minRetryInterval = 0.05
      let outcome = try await bounded { () -> (count: Int, digest: String?, error: (any Error)?) in
        var iterator = try await fetcher.beginStreaming(highWaterMark: mark).makeAsyncIterator()
        var received = Data()
        do {
          while let chunk = try await iterator.next() { received.append(chunk) }
          return (received.count, TestServer.checksum(received), nil)
        } catch {
          return (received.count, nil, error)
        }
      }
      if retries {
        #expect(outcome.error == nil)
        #expect(outcome.count == resource.body.count)
        #expect(outcome.digest == TestServer.checksum(resource.body))
        #expect(fetcher.retryCount == 1)
        let starts = server.requests(path: path).map(rangeStart)
        #expect(Array(starts.prefix(3)) == [0, window, window])
      } else {
        #expect(
          (outcome.error as? SessionFetcherError)?.statusCode == 503, "\(String(describing: outcome.error))")
        #expect(outcome.count == window)
        #expect(server.requestCount(path: path) == 2)
      }
    }

    /// A server that ignores ranges answers the first window with the whole body: it is streamed
    /// as it comes, from that one request.
    @Test func aServerIgnoringRangesStreamsTheWholeBody() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let resource = RangedResource(size: 2 * 1024 * 1024)
      server.route("/plain") { resource.respond($0, ranges: false) }
      let fetcher = server.fetcher("/plain")
      fetcher.engine = .urlSession  // the URLSession engine's Range windows
      let stream = try await bounded { try await fetcher.beginStreaming(highWaterMark: 1 << 20) }
      #expect(stream.httpResponse?.statusCode == 200)
      let result = try await bounded { try await consume(stream) }
      #expect(result.digest == TestServer.checksum(resource.body))
      #expect(server.requestCount(path: "/plain") == 1)
      #expect(server.requests(path: "/plain").first?.header("Range") == "bytes=0-786431")
    }

    /// An empty resource answers the first window with 416: it is asked for again without a Range.
    @Test func anEmptyResourceIsAskedForAgainWhole() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let fetcher = server.fetcher("/bytes/0")
      fetcher.engine = .urlSession  // the URLSession engine's Range windows
      let counter = NotificationRecorder([fetcher])
      let stream = try await bounded { try await fetcher.beginStreaming() }
      #expect(stream.httpResponse?.statusCode == 200)
      let result = try await bounded { try await consume(stream) }
      #expect(result.count == 0)
      #expect(server.requests(path: "/bytes/0").map { $0.header("Range") == nil } == [false, true])
      #expect(await eventually { counter.started == 1 && counter.stopped == 1 })
    }

    /// A request with its own Range, and a stubbed fetch, are not windowed.
    @Test func aRequestWithItsOwnRangeIsNotWindowed() async throws {
      let server = try TestServer()
      defer { server.stop() }
      let fetcher = server.fetcher("/bytes/100000")
      fetcher.engine = .urlSession  // the URLSession engine's Range windows
      fetcher.setRequestValue("bytes=10-", forHTTPHeaderField: "Range")
      let stream = try await bounded { try await fetcher.beginStreaming() }
      #expect(stream.httpResponse?.statusCode == 206)
      let result = try await bounded { try await consume(stream) }
      #expect(result.digest == TestServer.checksum(TestServer.patternBytes(count: 99_990, offset: 10)))
      #expect(server.requests(path: "/bytes/100000").map { $0.header("Range") } == ["bytes=10-"])
    }
  #endif
}
