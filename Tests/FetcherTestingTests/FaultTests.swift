import Foundation
import TestTraits
import Testing

@testable import FetcherTesting

@Suite("Faults", .ownThreads)
struct FaultTests {
  @Test("/fail-first fails the first N requests per key, then succeeds")
  func failFirst() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    let target = "/fail-first?n=2&key=k1&status=500&retryAfter=1&bytes=32"
    #expect(try client.request("GET", target).status == 500)
    let second = try client.request("GET", target)
    #expect(second.status == 500)
    #expect(second.header("Retry-After") == "1")
    #expect(second.header("X-Attempt") == "2")
    let third = try client.request("GET", target)
    #expect(third.status == 200)
    #expect(third.body == TestServer.patternBytes(count: 32))
    // Another key has its own counter.
    #expect(try client.request("GET", "/fail-first?n=1&key=k2").status == 503)
    #expect(try client.request("GET", "/fail-first?n=1&key=k2").status == 200)
    // resetRecords() resets the counters.
    server.resetRecords()
    #expect(try client.request("GET", target).status == 500)
  }

  @Test("/fail-first with transport faults")
  func failFirstFaults() throws {
    let server = try TestServer()
    defer { server.stop() }
    let empty = try RawHTTPClient(port: server.port)
    try empty.sendRequest("GET", "/fail-first?n=1&key=e&fault=empty")
    #expect(empty.readUntilEnd() == (Data(), .closed))
    let truncated = try RawHTTPClient(port: server.port)
    try truncated.sendRequest("GET", "/fail-first?n=1&key=t&fault=truncate&bytes=100")
    let head = try truncated.readHead()
    #expect(head.header("Content-Length") == "100")
    let (rest, end) = truncated.readUntilEnd()
    #expect(rest.count == 50 && end == .closed)
    let reset = try RawHTTPClient(port: server.port)
    try reset.sendRequest("GET", "/fail-first?n=1&key=r&fault=reset&bytes=100")
    #expect(reset.readUntilEnd().1 == .reset)
    let later = try RawHTTPClient(port: server.port)
    #expect(try later.request("GET", "/fail-first?n=1&key=r&fault=reset&bytes=100").status == 200)
  }

  @Test("/fail-first counts correctly under concurrency")
  func failFirstConcurrent() throws {
    let server = try TestServer()
    defer { server.stop() }
    let port = server.port
    let statuses = LockedState([Int]())
    DispatchQueue.concurrentPerform(iterations: 20) { _ in
      guard let client = try? RawHTTPClient(port: port),
        let response = try? client.request("GET", "/fail-first?n=7&key=c")
      else { return }
      statuses.withLock { $0.append(response.status) }
    }
    let all = statuses.withLock { $0 }
    #expect(all.count == 20)
    #expect(all.filter { $0 == 503 }.count == 7)
  }

  @Test("/truncate closes with a FIN after N of L bytes")
  func truncate() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.sendRequest("GET", "/truncate?length=1000&send=300")
    let head = try client.readHead()
    #expect(head.status == 200)
    #expect(head.header("Content-Length") == "1000")
    let (body, end) = client.readUntilEnd()
    #expect(body == TestServer.patternBytes(count: 300))
    #expect(end == .closed)
  }

  @Test("/reset closes with a RST")
  func reset() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.sendRequest("GET", "/reset?length=1000&send=10")
    let (_, end) = client.readUntilEnd()
    #expect(end == .reset)
  }

  @Test("/empty closes without a response; /garbage sends no HTTP")
  func emptyAndGarbage() throws {
    let server = try TestServer()
    defer { server.stop() }
    let empty = try RawHTTPClient(port: server.port)
    try empty.sendRequest("GET", "/empty")
    let (nothing, end) = empty.readUntilEnd()
    #expect(nothing.isEmpty && end == .closed)
    let garbage = try RawHTTPClient(port: server.port)
    try garbage.sendRequest("GET", "/garbage")
    let (bytes, garbageEnd) = garbage.readUntilEnd()
    #expect(!bytes.isEmpty && !bytes.starts(with: Data("HTTP/".utf8)))
    #expect(garbageEnd == .closed)
  }

  @Test("/stall sends part of the body and waits until the client leaves")
  func stall() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port, timeout: 0.3)
    try client.sendRequest("GET", "/stall?length=100&send=40")
    let head = try client.readHead()
    #expect(head.header("Content-Length") == "100")
    let (body, end) = client.readUntilEnd()
    #expect(body.count == 40)
    #expect(end == .timedOut)
    client.close()
    // A bound, not a speed: the parallel suite on a loaded 2-core machine once took more than 5 s.
    #expect(server.core.workers.waitUntilLive(atMost: 1, timeout: 60))
  }
}
