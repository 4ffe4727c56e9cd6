import Foundation
import Testing

@testable import FetcherTesting

@Suite("Built-in routes")
struct RouteTests {
  let server: TestServer
  let client: RawHTTPClient

  init() throws {
    server = try TestServer()
    client = try RawHTTPClient(port: server.port)
  }

  @Test("/status/N")
  func status() throws {
    let response = try client.request("GET", "/status/503?retryAfter=7")
    #expect(response.status == 503)
    #expect(response.header("Retry-After") == "7")
    #expect(response.header("Content-Type") == "application/json")
    #expect(response.text == #"{"error":{"message":"Server Status 503","code":503}}"#)
    let date = "Wed, 21 Oct 2015 07:28:00 GMT"
    let dated = try client.request("GET", "/status/429?retryAfter=Wed,%2021%20Oct%202015%2007:28:00%20GMT")
    #expect(dated.header("Retry-After") == date)
    for code in [204, 304] {
      let empty = try client.request("GET", "/status/\(code)")
      #expect(empty.status == code)
      #expect(empty.body.isEmpty)
    }
    #expect(try client.request("GET", "/status/abc").status == 400)
    server.stop()
  }

  @Test("/bytes/N sends the pattern, with ETag and Accept-Ranges")
  func bytes() throws {
    let response = try client.request("GET", "/bytes/100000")
    #expect(response.status == 200)
    #expect(response.body == TestServer.patternBytes(count: 100_000))
    #expect(response.header("ETag") == #""bytes-100000""#)
    #expect(response.header("Accept-Ranges") == "bytes")
    #expect(response.header("Content-Type") == "application/octet-stream")
    let typed = try client.request("GET", "/bytes/1?contentType=image/png")
    #expect(typed.header("Content-Type") == "image/png")
    #expect(try client.request("GET", "/bytes/0").body.isEmpty)
    server.stop()
  }

  @Test("/bytes/N honours Range and If-Range")
  func ranges() throws {
    let partial = try client.request("GET", "/bytes/1000", headers: ["Range: bytes=100-199"])
    #expect(partial.status == 206)
    #expect(partial.header("Content-Range") == "bytes 100-199/1000")
    #expect(partial.body == TestServer.patternBytes(count: 100, offset: 100))

    let open = try client.request("GET", "/bytes/1000", headers: ["Range: bytes=990-"])
    #expect(open.status == 206 && open.body == TestServer.patternBytes(count: 10, offset: 990))

    let suffix = try client.request("GET", "/bytes/1000", headers: ["Range: bytes=-5"])
    #expect(suffix.header("Content-Range") == "bytes 995-999/1000")

    let unsatisfiable = try client.request("GET", "/bytes/1000", headers: ["Range: bytes=1000-"])
    #expect(unsatisfiable.status == 416)
    #expect(unsatisfiable.header("Content-Range") == "bytes */1000")

    let matching = try client.request(
      "GET", "/bytes/1000", headers: ["Range: bytes=0-9", #"If-Range: "bytes-1000""#])
    #expect(matching.status == 206)
    let stale = try client.request("GET", "/bytes/1000", headers: ["Range: bytes=0-9", #"If-Range: "old""#])
    #expect(stale.status == 200 && stale.body.count == 1000)
    server.stop()
  }

  @Test("/bytes/N?chunked=1 and /chunked send chunked bodies")
  func chunkedResponses() throws {
    let bytes = try client.request("GET", "/bytes/40000?chunked=1&chunkSize=1000")
    #expect(bytes.wasChunked)
    #expect(bytes.header("Content-Length") == nil)
    #expect(bytes.body == TestServer.patternBytes(count: 40_000))
    let chunked = try client.request("GET", "/chunked?chunks=5&size=300")
    #expect(chunked.wasChunked)
    #expect(chunked.body == TestServer.patternBytes(count: 1500))
    server.stop()
  }

  @Test("/text, /echo, /upload, /headers")
  func echoes() throws {
    #expect(try client.request("GET", "/text?value=hello%20world").text == "hello world")

    let body = TestServer.patternBytes(count: 3000)
    let echo = try client.request("POST", "/echo", headers: ["Content-Type: application/x-thing"], body: body)
    #expect(echo.body == body)
    #expect(echo.header("Content-Type") == "application/x-thing")
    #expect(echo.header("X-Request-Method") == "POST")
    #expect(echo.header("X-Body-Length") == "3000")
    #expect(echo.header("X-Body-Checksum") == TestServer.checksum(body))
    #expect(echo.header("X-Request-Chunked") == "0")
    #expect(echo.header("X-Request-Content-Length") == "3000")
    let emptyEcho = try client.request("GET", "/echo")
    #expect(emptyEcho.header("Content-Type") == "application/octet-stream")
    #expect(emptyEcho.header("X-Request-Content-Length") == nil)

    let upload = try client.request("PUT", "/upload", body: body)
    #expect(upload.json["method"] as? String == "PUT")
    #expect(upload.json["length"] as? Int == 3000)
    #expect(upload.json["checksum"] as? String == TestServer.checksum(body))
    #expect(upload.json["chunked"] as? Bool == false)

    let headers = try client.request("GET", "/headers?a=1", headers: ["X-One: 1", "x-one: 2", "Accept: */*"])
    #expect(
      headers.text
        == #"{"method":"GET","path":"/headers","query":{"a":"1"},"headers":{"Host":"localhost","X-One":"1, 2","Accept":"*/*"}}"#
    )
    server.stop()
  }

  @Test("/upload?discard=1 counts and checksums without keeping the body")
  func uploadDiscard() throws {
    let count = 8 << 20
    try client.send("POST /upload?discard=1 HTTP/1.1\r\nHost: x\r\nContent-Length: \(count)\r\n\r\n")
    var hash = FNV1a64()
    var sent = 0
    while sent < count {
      let piece = TestServer.patternBytes(count: min(1 << 20, count - sent), offset: sent)
      hash.update(piece)
      try client.send(piece)
      sent += piece.count
    }
    let response = try client.readResponse()
    #expect(response.json["length"] as? Int == count)
    #expect(response.json["checksum"] as? String == hash.hexDigest)
    let recorded = try #require(server.requests.last)
    #expect(recorded.body.isEmpty)
    #expect(recorded.bodyLength == count)
    #expect(recorded.bodyChecksum == hash.hexDigest)
    server.stop()
  }

  @Test("a large download is streamed intact")
  func largeDownload() throws {
    let count = 64 << 20
    var hash = FNV1a64()
    var received = 0
    try client.sendRequest("GET", "/bytes/\(count)")
    let response = try client.readResponse { piece in
      received += piece.count
      piece.withUnsafeBytes { hash.update($0) }
    }
    #expect(response.status == 200)
    #expect(received == count)
    #expect(hash.hexDigest == TestServer.checksum(TestServer.patternBytes(count: count)))
    server.stop()
  }

  @Test("/delay/S and /drip")
  func delayAndDrip() throws {
    #expect(try client.request("GET", "/delay/0.05").text == "delayed")
    let drip = try client.request("GET", "/drip?bytes=100&chunks=4&interval=20")
    #expect(drip.header("Content-Length") == "100")
    #expect(drip.body == TestServer.patternBytes(count: 100))
    server.stop()
  }

  @Test("/redirect and /redirect/N")
  func redirects() throws {
    let single = try client.request("GET", "/redirect?to=/text%3Fvalue%3Dx&status=307")
    #expect(single.status == 307)
    #expect(single.header("Location") == "/text?value=x")
    #expect(single.text == "redirecting")
    #expect(
      try client.request("GET", "/redirect?to=http://example.com/").header("Location")
        == "http://example.com/")

    let chain = try client.request("GET", "/redirect/2?status=301")
    #expect(chain.status == 301)
    #expect(chain.header("Location") == "/redirect/1?status=301")
    let absolute = try client.request("GET", "/redirect/1?absolute=1")
    #expect(absolute.status == 302)
    #expect(absolute.header("Location") == "\(server.baseURL.absoluteString)/redirect/0?absolute=1")
    let done = try client.request("GET", "/redirect/0")
    #expect(done.status == 200 && done.text == "redirect done")
    server.stop()
  }

  @Test("/cookies and /set-cookie")
  func cookies() throws {
    let none = try client.request("GET", "/cookies")
    #expect(none.text == #"{"cookie":""}"#)
    let some = try client.request("GET", "/cookies", headers: ["Cookie: a=1; b=2"])
    #expect(some.json["cookie"] as? String == "a=1; b=2")
    let set = try client.request("GET", "/set-cookie?c=a%3D1%3B%20Path%3D%2F&c=b%3D2")
    #expect(set.status == 200)
    #expect(set.headerValues("Set-Cookie") == ["a=1; Path=/", "b=2"])
    let redirecting = try client.request("GET", "/set-cookie?c=s%3D1&redirect=/cookies")
    #expect(redirecting.status == 302)
    #expect(redirecting.header("Location") == "/cookies")
    #expect(redirecting.headerValues("Set-Cookie") == ["s=1"])
    server.stop()
  }

  @Test("/etag/TAG and If-None-Match")
  func etags() throws {
    let fresh = try client.request("GET", "/etag/v1?cacheControl=max-age%3D60")
    #expect(fresh.status == 200)
    #expect(fresh.text == "etag body v1")
    #expect(fresh.header("ETag") == #""v1""#)
    #expect(fresh.header("Cache-Control") == "max-age=60")
    let notModified = try client.request("GET", "/etag/v1", headers: [#"If-None-Match: "v0", W/"v1""#])
    #expect(notModified.status == 304)
    #expect(notModified.body.isEmpty)
    #expect(notModified.header("ETag") == #""v1""#)
    #expect(try client.request("GET", "/etag/v1", headers: ["If-None-Match: *"]).status == 304)
    #expect(try client.request("GET", "/etag/v1", headers: [#"If-None-Match: "v2""#]).status == 200)
    let weak = try client.request("GET", "/etag/w?weak=1")
    #expect(weak.header("ETag") == #"W/"w""#)
    server.stop()
  }

  @Test("/basic-auth and /bearer")
  func authentication() throws {
    let good = Data("user:pa ss".utf8).base64EncodedString()
    let ok = try client.request("GET", "/basic-auth/user/pa%20ss", headers: ["Authorization: Basic \(good)"])
    #expect(ok.status == 200)
    #expect(ok.text == #"{"authenticated":true,"user":"user"}"#)
    let wrong = try client.request("GET", "/basic-auth/user/other", headers: ["Authorization: Basic \(good)"])
    #expect(wrong.status == 401)
    #expect(wrong.header("WWW-Authenticate") == #"Basic realm="test""#)
    #expect(wrong.text == #"{"authenticated":false}"#)
    #expect(try client.request("GET", "/basic-auth/u/p").status == 401)

    #expect(try client.request("GET", "/bearer/t0k", headers: ["Authorization: Bearer t0k"]).status == 200)
    let denied = try client.request("GET", "/bearer/t0k", headers: ["Authorization: Bearer nope"])
    #expect(denied.status == 401)
    #expect(denied.header("WWW-Authenticate") == #"Bearer realm="test""#)
    server.stop()
  }

  @Test("/retry-after and 404")
  func retryAfterAndNotFound() throws {
    let retry = try client.request("GET", "/retry-after?status=429&after=3")
    #expect(retry.status == 429)
    #expect(retry.header("Retry-After") == "3")
    let missing = try client.request("GET", "/no/such/route")
    #expect(missing.status == 404)
    #expect(missing.text == "not found")
    server.stop()
  }
}
