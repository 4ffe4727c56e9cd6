import Foundation
import Testing

@testable import FetcherTesting

@Suite("Pure parts")
struct ParsingTests {
  @Test("FNV-1a 64 known values")
  func fnv() {
    #expect(TestServer.checksum(Data()) == "cbf29ce484222325")
    #expect(TestServer.checksum(Data("a".utf8)) == "af63dc4c8601ec8c")
    #expect(TestServer.checksum(Data("foobar".utf8)) == "85944171f73967e8")
    var incremental = FNV1a64()
    incremental.update(Data("foo".utf8))
    incremental.update(Data("bar".utf8))
    #expect(incremental.hexDigest == "85944171f73967e8")
  }

  @Test("pattern bytes")
  func pattern() {
    let bytes = TestServer.patternBytes(count: 600, offset: 5)
    #expect(bytes.count == 600)
    #expect(bytes.enumerated().allSatisfy { $0.element == UInt8(($0.offset + 5) % 251) })
    let large = TestServer.patternBytes(count: 200_000)
    #expect(large[150_000] == UInt8(150_000 % 251))
    #expect(TestServer.patternBytes(count: 0).isEmpty)
  }

  @Test(
    "Range header resolution",
    arguments: [
      ("bytes=0-9", 100, ByteRange.range(0...9)),
      ("bytes=90-", 100, .range(90...99)),
      ("bytes=90-200", 100, .range(90...99)),
      ("bytes=-10", 100, .range(90...99)),
      ("bytes=-500", 100, .range(0...99)),
      ("bytes=100-", 100, .unsatisfiable),
      ("bytes=-0", 100, .unsatisfiable),
      ("bytes=0-", 0, .unsatisfiable),
      ("bytes=5-1", 100, .none),
      ("bytes=0-1,5-6", 100, .none),
      ("items=0-1", 100, .none),
      ("bytes=x-1", 100, .none),
    ])
  func byteRanges(header: String, length: Int, expected: ByteRange) {
    #expect(ByteRange.parse(header, length: length) == expected)
  }

  @Test(
    "If-None-Match weak comparison",
    arguments: [
      (#""a""#, "a", true), (#"W/"a""#, "a", true), (#""b", "a""#, "a", true), ("*", "a", true),
      (#""ab""#, "a", false), ("", "a", false), ("a", "a", false),
    ])
  func entityTags(list: String, tag: String, expected: Bool) {
    #expect(EntityTag.list(list, weaklyMatches: tag) == expected)
  }

  @Test("request-target parsing")
  func targets() {
    let target = RequestTarget("/p/a?x=1&y=%41+b&x=2&flag#frag")
    #expect(target.path == "/p/a")
    #expect(target.rawQuery == "x=1&y=%41+b&x=2&flag")
    #expect(target.query == ["x": "2", "y": "A+b", "flag": ""])
    #expect(RequestTarget("http://host:1/abs?q=1").path == "/abs")
    #expect(RequestTarget("http://host:1").path == "/")
    #expect(RequestTarget.percentDecoded("%zz%4").description == "%zz%4")
  }

  @Test("request head parsing")
  func heads() throws {
    let head = try RequestHead(
      parsing: Array("\r\nPOST /x HTTP/1.1\r\nHost: h\r\nContent-Length:  12 \r\nX-Empty:\r\n".utf8))
    #expect(head.method == "POST")
    #expect(
      head.headers == [
        HTTPHeader(name: "Host", value: "h"), HTTPHeader(name: "Content-Length", value: "12"),
        HTTPHeader(name: "X-Empty", value: ""),
      ])
    #expect(try head.bodyFraming() == .contentLength(12))
    #expect(head.wantsKeepAlive)

    let chunked = try RequestHead(
      parsing: Array(
        "PUT / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\nConnection: close".utf8))
    #expect(try chunked.bodyFraming() == .chunked)
    #expect(!chunked.wantsKeepAlive)
    #expect(throws: ConnectionError.self) { try RequestHead(parsing: Array("GET / HTTP/1.1\r\n: x".utf8)) }
  }

  @Test("TestResponse helpers")
  func responses() throws {
    #expect(TestResponse.text("hi").header("content-type") == "text/plain; charset=utf-8")
    #expect(TestResponse.json("{}", status: 201).status == 201)
    #expect(try TestResponse.json(encoding: ["b": 1, "a": 2]).body == Data(#"{"a":2,"b":1}"#.utf8))
    #expect(TestResponse.redirect(to: "/x").header("Location") == "/x")
    #expect(TestResponse.bytes(count: 3).body == TestServer.patternBytes(count: 3))
    #expect(TestResponse.status(204).adding(header: "A", "b").header("a") == "b")
  }
}
