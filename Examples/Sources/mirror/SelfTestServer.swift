import FetcherTesting
import Foundation

/// The self-test's web server on 127.0.0.1: `/files/NAME` for every published file, with an
/// `ETag`, `Accept-Ranges: bytes` and `Range` / `If-Range` answered with 206, and the faults the
/// self-test turns on per file: 503s with `Retry-After: 1`, a connection dropped half-way through
/// every answer, or an answer that stops half-way and waits.
final class MirrorTestServer: Sendable {
  enum Fault: Sendable {
    case unavailable(times: Int)
    case dropHalfWay
    case stallHalfWay
  }

  /// One request for a file: when it came and its `Range` header.
  struct Hit: Sendable {
    let date: Date
    let range: String?
  }

  private struct State {
    var sizes: [String: Int] = [:]
    var faults: [String: Fault] = [:]
    var hits: [String: [Hit]] = [:]
    var inFlight = 0
    var mostInFlight = 0
  }

  private let server: TestServer
  private let state = MirrorLock(State())

  init() throws { server = try TestServer() }

  func stop() { server.stop() }

  func url(of name: String) -> URL { server.url("/files/\(name)") }

  /// The bytes of `name`: the test server's pattern, shifted per file so that no two files agree.
  func body(of name: String) -> Data {
    let size = state.withLock { $0.sizes[name] } ?? 0
    return TestServer.patternBytes(count: size, offset: name.utf8.reduce(0) { $0 &+ Int($1) })
  }

  func hits(of name: String) -> [Hit] { state.withLock { $0.hits[name] ?? [] } }

  /// The most requests for small files answered at once.
  var mostInFlight: Int { state.withLock { $0.mostInFlight } }

  func setFault(_ fault: Fault?, for name: String) { state.withLock { $0.faults[name] = fault } }

  func publish(_ name: String, size: Int) {
    state.withLock { $0.sizes[name] = size }
    server.route("/files/\(name)") { [weak self] request in
      guard let self else { return .status(503) }
      return self.answer(name, request)
    }
  }

  private func answer(_ name: String, _ request: RecordedRequest) -> TestResponse {
    let range = request.header("Range")
    let fault = state.withLock { state -> Fault? in
      state.hits[name, default: []].append(Hit(date: Date(), range: range))
      guard case .unavailable(let times) = state.faults[name] else { return state.faults[name] }
      state.faults[name] = times > 1 ? .unavailable(times: times - 1) : nil
      return .unavailable(times: times)
    }
    if case .unavailable = fault {
      return TestResponse(status: 503, headers: [("Retry-After", "1")], body: Data("busy\n".utf8))
    }
    let body = body(of: name)
    let etag = "\"\(name)-\(body.count)\""
    var headers = [("ETag", etag), ("Accept-Ranges", "bytes"), ("Content-Type", "application/octet-stream")]
    var status = 200
    var slice = body
    if let range, request.header("If-Range").map({ $0 == etag }) ?? true,
      let (start, end) = Self.byteRange(range, length: body.count)
    {
      status = 206
      slice = body.subdata(in: start..<end + 1)
      headers.append(("Content-Range", "bytes \(start)-\(end)/\(body.count)"))
    }
    switch fault {
    case .dropHalfWay?, .stallHalfWay?:
      var response = TestResponse(
        status: status, headers: headers, body: slice.prefix(max(1, slice.count / 2)))
      if case .dropHalfWay? = fault {
        response.fault = .truncate(announcedLength: slice.count)
      } else {
        response.fault = .stall(announcedLength: slice.count)
      }
      return response
    default:
      // Small files are held for a moment, so that the per-host limit shows in `mostInFlight`.
      state.withLock { state in
        state.inFlight += 1
        state.mostInFlight = max(state.mostInFlight, state.inFlight)
      }
      usleep(20_000)
      state.withLock { $0.inFlight -= 1 }
      return TestResponse(status: status, headers: headers, body: slice)
    }
  }

  /// `bytes=START-` or `bytes=START-END` within `length`, as closed bounds.
  private static func byteRange(_ value: String, length: Int) -> (Int, Int)? {
    guard value.hasPrefix("bytes=") else { return nil }
    let bounds = value.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
    guard bounds.count == 2, let start = Int(bounds[0]), start < length else { return nil }
    let end = bounds[1].isEmpty ? length - 1 : min(Int(bounds[1]) ?? length - 1, length - 1)
    return end >= start ? (start, end) : nil
  }
}
