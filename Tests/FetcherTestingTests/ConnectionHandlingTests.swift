import Foundation
import TestTraits
import Testing

@testable import FetcherTesting

@Suite("Connections", .ownThreads)
struct ConnectionHandlingTests {
  @Test("two requests travel on one kept-alive connection")
  func keepAlive() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    let first = try client.request("GET", "/text?value=one")
    let second = try client.request("GET", "/text?value=two")
    #expect(first.status == 200 && first.text == "one")
    #expect(second.status == 200 && second.text == "two")
    #expect(first.header("Connection") == nil)
    let requests = server.requests
    #expect(requests.count == 2)
    #expect(requests[0].connectionID == requests[1].connectionID)
  }

  @Test("Connection: close is honoured")
  func connectionClose() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    let response = try client.request("GET", "/text?value=bye", headers: ["Connection: close"])
    #expect(response.text == "bye")
    #expect(response.header("Connection") == "close")
    #expect(client.waitForClose() == .closed)
  }

  @Test("HTTP/1.0 closes unless keep-alive is asked for")
  func http10() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.send("GET /text?value=old HTTP/1.0\r\n\r\n")
    let response = try client.readResponse()
    #expect(response.text == "old")
    #expect(client.waitForClose() == .closed)

    let keptAlive = try RawHTTPClient(port: server.port)
    try keptAlive.send("GET /text?value=a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    #expect(try keptAlive.readResponse().header("Connection") == "keep-alive")
    try keptAlive.send("GET /text?value=b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    #expect(try keptAlive.readResponse().text == "b")
  }

  @Test("a chunked request body is de-chunked and recorded")
  func chunkedRequestBody() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.send(
      "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\nX-Trailer: yes\r\n\r\n")
    let response = try client.readResponse()
    let body = Data("hello 0123456789".utf8)
    #expect(response.status == 200)
    #expect(response.json["length"] as? Int == 16)
    #expect(response.json["checksum"] as? String == TestServer.checksum(body))
    #expect(response.json["chunked"] as? Bool == true)
    let recorded = try #require(server.requests.first)
    #expect(recorded.body == body)
    #expect(recorded.wasChunked)
    #expect(recorded.bodyLength == 16)
    // The connection is still usable afterwards.
    #expect(try client.request("GET", "/text?value=after").text == "after")
  }

  @Test("Expect: 100-continue gets 100 Continue before the body is sent")
  func expectContinue() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.send(
      "PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
        + "Expect: 100-continue\r\n\r\n")
    let interim = try client.readHead()
    #expect(interim.status == 100)
    try client.send("abcde")
    let response = try client.readResponse()
    #expect(response.status == 200)
    #expect(response.text == "abcde")
    #expect(response.header("Content-Type") == "text/plain")
    #expect(response.header("X-Request-Method") == "PUT")
  }

  @Test(
    "malformed requests get 400 and a close",
    arguments: [
      "GARBAGE\r\n\r\n",
      "GET /x HTTP/2.0\r\n\r\n",
      "GET noslash HTTP/1.1\r\n\r\n",
      "GET /x HTTP/1.1\r\nBad Header\r\n\r\n",
      "GET /x HTTP/1.1\r\n folded: no\r\n\r\n",
      "POST /x HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
      "POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
      "POST /x HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
      "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n",
      "\u{0}\u{1}\u{2} binary\r\n\r\n",
    ])
  func badRequests(_ request: String) throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.send(request)
    let response = try client.readResponse()
    #expect(response.status == 400)
    #expect(response.header("Connection") == "close")
    #expect(client.waitForClose() == .closed)
    // The server is still fine.
    #expect(try RawHTTPClient(port: server.port).request("GET", "/text?value=ok").text == "ok")
  }

  @Test("an oversized request head gets 400")
  func oversizedHead() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try? client.send("GET / HTTP/1.1\r\nX-Big: " + String(repeating: "a", count: 70_000))
    #expect(try client.readResponse().status == 400)
  }

  @Test("a head just under the 64 KiB limit is accepted")
  func longHead() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    let value = String(repeating: "v", count: 60_000)
    let response = try client.request("GET", "/text?value=long", headers: ["X-Long: \(value)"])
    #expect(response.text == "long")
    #expect(server.requests.first?.header("X-Long") == value)
  }

  @Test("a large chunked upload in uneven chunks arrives intact")
  func largeChunkedUpload() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    let body = TestServer.patternBytes(count: 3_000_000)
    try client.send("PUT /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
    var position = 0
    var size = 1
    while position < body.count {
      let piece = body[position..<min(body.count, position + size)]
      try client.send(Data("\(String(piece.count, radix: 16))\r\n".utf8) + piece + Data("\r\n".utf8))
      position += piece.count
      size = size * 3 + 7
    }
    try client.send("0\r\n\r\n")
    let response = try client.readResponse()
    #expect(response.json["length"] as? Int == body.count)
    #expect(response.json["checksum"] as? String == TestServer.checksum(body))
    #expect(server.requests.first?.body == body)
  }

  @Test("a client that disconnects mid-request does not disturb the server")
  func partialRequests() throws {
    let server = try TestServer()
    defer { server.stop() }
    for partial in ["GET /te", "POST /upload HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc"] {
      let client = try RawHTTPClient(port: server.port)
      try client.send(partial)
      client.close()
    }
    #expect(try RawHTTPClient(port: server.port).request("GET", "/text?value=ok").text == "ok")
  }

  @Test("50 concurrent connections are served at the same time")
  func concurrentConnections() throws {
    let server = try TestServer()
    defer { server.stop() }
    // All 50 requests are outstanding before any response is read, so the server must serve
    // the connections concurrently for them all to complete.
    let clients = try (0..<50).map { _ in try RawHTTPClient(port: server.port) }
    for (index, client) in clients.enumerated() {
      try client.sendRequest("GET", "/delay/0.1?i=\(index)")
    }
    for client in clients {
      let response = try client.readResponse()
      #expect(response.status == 200)
      #expect(response.text == "delayed")
    }
    let connectionIDs = Set(server.requests.map(\.connectionID))
    #expect(connectionIDs.count == 50)
  }

  @Test("concurrent clients on many threads each get their own bytes")
  func concurrentThreads() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let port = server.port
    let failures = LockedState([String]())
    DispatchQueue.concurrentPerform(iterations: 16) { index in
      do {
        let client = try RawHTTPClient(port: port)
        for round in 0..<5 {
          let count = 1000 * index + round
          let response = try client.request("GET", "/bytes/\(count)")
          if response.body != TestServer.patternBytes(count: count) {
            failures.withLock { $0.append("bytes/\(count)") }
          }
        }
      } catch {
        failures.withLock { $0.append("\(error)") }
      }
    }
    #expect(failures.withLock { $0 } == [])
    #expect(server.requests.count == 80)
  }

  @Test("the server listens on IPv6 loopback")
  func ipv6() throws {
    let server: TestServer
    do {
      server = try TestServer(host: "::1")
    } catch {
      // No IPv6 on this machine: nothing to test.
      return
    }
    defer { server.stop() }
    #expect(server.baseURL.absoluteString == "http://[::1]:\(server.port)")
    let client = try RawHTTPClient(host: "::1", port: server.port)
    #expect(try client.request("GET", "/text?value=six").text == "six")
  }

  @Test("HEAD gets the headers of GET without a body")
  func head() throws {
    let server = try TestServer()
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    let response = try client.request("HEAD", "/bytes/1000")
    #expect(response.status == 200)
    #expect(response.header("Content-Length") == "1000")
    #expect(try client.request("GET", "/text?value=next").text == "next")
  }

  @Test("connections that come and go leave no server thread behind")
  func churn() throws {
    let server = try TestServer()
    defer { server.stop() }
    for index in 0..<200 {
      let client = try RawHTTPClient(port: server.port)
      switch index % 4 {
      case 0: client.close()
      case 1: try client.send("GET /bytes/100000 HTTP/1.1\r\n\r\n")
      case 2: try client.sendRequest("POST", "/upload", headers: ["Content-Length: 1000"])
      default: _ = try client.request("GET", "/bytes/10")
      }
    }
    #expect(server.core.workers.waitUntilLive(atMost: 1, timeout: 60))
    #expect(try RawHTTPClient(port: server.port).request("GET", "/text?value=ok").text == "ok")
  }
}
