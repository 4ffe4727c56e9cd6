import FetcherTesting
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite("HostileServer")
struct HostileServerTests {
  @Test("sends exactly the scripted bytes and records the request head")
  func scriptedBytes() throws {
    let reply = Data("HTTP/1.1 200 OK\r\nX-Odd:  spaced \r\nContent-Length: 3\r\n\r\nabc".utf8)
    let server = try HostileServer { _ in .bytes(reply) }
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.send("GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
    let (received, _) = client.readUntilEnd()
    #expect(received == reply)
    #expect(
      server.requestHeads.map { String(decoding: $0, as: UTF8.self) } == [
        "GET /x HTTP/1.1\r\nHost: a\r\n\r\n"
      ])
    #expect(server.connectionCount == 1)
  }

  @Test("repeats a chunk up to the byte budget, head included")
  func repeatingBudget() throws {
    let server = try HostileServer { _ in
      .repeating(head: Data("HEAD\n".utf8), chunk: Data("0123456789".utf8), totalBytes: 1_000)
    }
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.send("GET / HTTP/1.1\r\n\r\n")
    let (received, _) = client.readUntilEnd()
    #expect(received.count == 1_000)
    #expect(received.prefix(5) == Data("HEAD\n".utf8))
    #expect(server.bytesSent == 1_000)
  }

  @Test("resets the connection after the scripted bytes", arguments: ["", "HTTP/1.1 200 OK\r\n"])
  func reset(prefix: String) throws {
    let server = try HostileServer { _ in .bytesThenReset(Data(prefix.utf8)) }
    defer { server.stop() }
    let client = try RawHTTPClient(port: server.port)
    try client.send("GET / HTTP/1.1\r\n\r\n")
    let (received, end) = client.readUntilEnd()
    #expect(end == .reset)
    #expect(received == Data(prefix.utf8) || received.isEmpty)
  }
}
