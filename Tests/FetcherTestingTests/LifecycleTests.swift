import Foundation
import TestTraits
import Testing

@testable import FetcherTesting

@Suite("Lifecycle", .ownThreads)
struct LifecycleTests {
  @Test("baseURL and url(_:) name the server")
  func urls() throws {
    let server = try TestServer()
    defer { server.stop() }
    #expect(server.port != 0)
    #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
    #expect(server.url("/bytes/10?x=1").absoluteString == "http://127.0.0.1:\(server.port)/bytes/10?x=1")
    #expect(server.url("text").path == "/text")
    #expect(server.url("/text?value=a b").query == "value=a%20b")
  }

  @Test("stop() ends a hanging request and is idempotent")
  func stopEndsHang() async throws {
    let server = try TestServer()
    let client = try RawHTTPClient(port: server.port)
    try client.sendRequest("GET", "/hang")
    // Wait until the request is recorded, so the connection is really inside /hang.
    #expect(await eventually { server.requestCount(path: "/hang") == 1 })
    server.stop()
    #expect(client.waitForClose() != .timedOut)
    #expect(server.core.workers.liveCount == 0)
    server.stop()
    #expect(throws: (any Error).self) { try RawHTTPClient(port: server.port).request("GET", "/text") }
  }

  @Test("a hanging request ends when the client leaves")
  func hangEndsOnDisconnect() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.sendRequest("GET", "/hang")
    #expect(await eventually { server.requestCount(path: "/hang") == 1 })
    #expect(server.core.workers.liveCount == 2)  // accept loop + the hanging connection
    client.close()
    #expect(server.core.workers.waitUntilLive(atMost: 1, timeout: 60))
    #expect(server.core.workers.liveCount == 1)
  }

  @Test("stop() also ends stalled responses, delays and drips")
  func stopEndsEverything() async throws {
    let server = try TestServer()
    let targets = [
      "/stall?length=100&send=10", "/delay/60", "/drip?bytes=10&chunks=10&interval=10000", "/hang",
    ]
    let clients = try targets.map { target in
      let client = try RawHTTPClient(port: server.port)
      try client.sendRequest("GET", target)
      return client
    }
    #expect(await eventually { server.requests.count == targets.count })
    server.stop()
    #expect(server.core.workers.liveCount == 0)
    for client in clients {
      #expect(client.readUntilEnd().1 != .timedOut)
    }
  }

  @Test("deinit stops the server")
  func deinitStops() throws {
    var server: TestServer? = try TestServer()
    let port = try #require(server?.port)
    #expect(try RawHTTPClient(port: port).request("GET", "/text?value=x").text == "x")
    server = nil
    #expect(throws: (any Error).self) { try RawHTTPClient(port: port).request("GET", "/text") }
  }

  @Test("a route handler may stop its own server")
  func stopFromHandler() throws {
    let server = try TestServer()
    server.route("/stop") { [weak server] _ in
      server?.stop()
      return .text("stopping")
    }
    let client = try RawHTTPClient(port: server.port)
    let response = try client.request("GET", "/stop")
    #expect(response.text == "stopping")
    #expect(response.header("Connection") == "close")
  }

  @Test("records, counts and resets")
  func records() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    _ = try client.request("GET", "/text?value=1&value=2&plus=a+b&enc=%2F%20x")
    _ = try client.request(
      "POST", "/text", headers: ["X-Custom: One", "x-custom: Two"], body: Data("abc".utf8))
    _ = try client.request("GET", "/nowhere")
    #expect(server.requestCount(path: "/text") == 2)
    #expect(server.requestCount(path: "/nowhere") == 1)
    let first = server.requests[0]
    #expect(first.method == "GET")
    #expect(first.target == "/text?value=1&value=2&plus=a+b&enc=%2F%20x")
    #expect(first.query == ["value": "2", "plus": "a+b", "enc": "/ x"])
    #expect(first.queryValues("value") == ["1", "2"])
    #expect(first.header("host") == "localhost")
    let second = server.requests[1]
    #expect(second.bodyText == "abc")
    #expect(second.header("X-CUSTOM") == "One")
    #expect(second.headerValues("x-custom") == ["One", "Two"])
    #expect(second.headers.map(\.name).contains("x-custom"))
    #expect(second.sequenceNumber == first.sequenceNumber + 1)
    server.resetRecords()
    #expect(server.requests.isEmpty)
    #expect(server.requestCount(path: "/text") == 0)
  }

  @Test("custom routes take precedence over built-in ones")
  func customRoutes() throws {
    let server = try TestServer()
    defer { server.stop() }
    server.route("/bytes/3") { _ in .text("mine") }
    server.route("/custom") { request in
      TestResponse(status: 201, headers: [("X-Seen", request.method)], body: request.body)
    }
    server.route("/chunky") { _ in
      TestResponse(headers: [("Transfer-Encoding", "chunked")], body: Data("chunked custom".utf8))
    }
    let client = try RawHTTPClient(port: server.port)
    #expect(try client.request("GET", "/bytes/3").text == "mine")
    let custom = try client.request("PATCH", "/custom", body: Data("payload".utf8))
    #expect(custom.status == 201)
    #expect(custom.header("X-Seen") == "PATCH")
    #expect(custom.text == "payload")
    let chunky = try client.request("GET", "/chunky")
    #expect(chunky.wasChunked)
    #expect(chunky.text == "chunked custom")
    #expect(server.requests(path: "/custom").map(\.method) == ["PATCH"])
    server.removeRoute("/bytes/3")
    #expect(try client.request("GET", "/bytes/3").body == TestServer.patternBytes(count: 3))
  }

  @Test("custom routes can delay and break connections")
  func customFaults() throws {
    let server = try TestServer()
    defer { server.stop() }
    server.route("/slow") { _ in TestResponse.text("late").delayed(by: 0.05) }
    server.route("/drop") { _ in .fault(.closeWithoutResponse) }
    server.route("/cut") { _ in .fault(.truncate(announcedLength: 100), body: Data(count: 10)) }
    server.route("/rst") { _ in .fault(.reset(announcedLength: 100), body: Data(count: 10)) }
    #expect(try RawHTTPClient(port: server.port).request("GET", "/slow").text == "late")

    let drop = try RawHTTPClient(port: server.port)
    try drop.sendRequest("GET", "/drop")
    #expect(drop.readUntilEnd() == (Data(), .closed))

    let cut = try RawHTTPClient(port: server.port)
    try cut.sendRequest("GET", "/cut")
    #expect(try cut.readHead().header("Content-Length") == "100")
    #expect(cut.readUntilEnd() == (Data(count: 10), .closed))

    let rst = try RawHTTPClient(port: server.port)
    try rst.sendRequest("GET", "/rst")
    #expect(rst.readUntilEnd().1 == .reset)
  }

  @Test("a test process with a server survives a write to a closed pipe")
  func brokenPipesAreHarmless() throws {
    let server = try TestServer()
    defer { server.stop() }
    var ends: [Int32] = [0, 0]
    try #require(pipe(&ends) == 0)
    close(ends[0])
    defer { close(ends[1]) }
    var byte: UInt8 = 1
    // Without SIGPIPE ignored this kills the process; with it, the write fails with EPIPE.
    #expect(write(ends[1], &byte, 1) == -1)
    #expect(errno == EPIPE)
  }
}
