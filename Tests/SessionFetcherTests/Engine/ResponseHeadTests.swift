#if canImport(FoundationNetworking)
  import FetcherTesting
  import Foundation
  import FoundationNetworking
  import SessionFetcher
  import Testing

  @testable import SessionFetcher

  @Suite("Response heads: lookups without the HTTPURLResponse")
  struct ResponseHeadTests {
    typealias Field = ParsedResponseHead.Field

    static let url = URL(string: "http://127.0.0.1:8080/small.txt")!

    /// Heads, and whether their lookups can be answered without making the response.
    static let heads: [(fields: [Field], answersAlone: Bool)] = [
      // nginx's small file.
      (
        [
          Field(name: "Server", value: "nginx/1.22.1"),
          Field(name: "Date", value: "Thu, 26 Nov 2026 23:41:12 GMT"),
          Field(name: "Content-Type", value: "application/octet-stream"),
          Field(name: "Content-Length", value: "5"),
          Field(name: "Last-Modified", value: "Thu, 26 Nov 2026 23:41:11 GMT"),
          Field(name: "Connection", value: "keep-alive"), Field(name: "ETag", value: "\"6b08c397-5\""),
          Field(name: "Accept-Ranges", value: "bytes"),
        ], true
      ),
      // A name repeated in one spelling: joined with ", ".
      ([Field(name: "Set-Cookie", value: "a=1"), Field(name: "Set-Cookie", value: "b=2")], true),
      // Names in lower case (HTTP/2), an X- name, WWW-Authenticate (renamed by FoundationNetworking).
      (
        [
          Field(name: "content-length", value: "12"), Field(name: "x-custom", value: "v"),
          Field(name: "www-authenticate", value: "Basic realm=\"x\""), Field(name: "etag", value: ""),
          Field(name: "content-encoding", value: "gzip"),
        ], true
      ),
      // Lengths that are not numbers.
      ([Field(name: "Content-Length", value: "abc")], true),
      ([Field(name: "Content-Length", value: "5, 5")], true),
      ([Field(name: "Content-Length", value: "5"), Field(name: "Content-Length", value: "5")], true),
      ([Field(name: "Content-Length", value: "-3")], true),
      ([], true),
      // One name in two spellings: FoundationNetworking keeps one of them by dictionary order.
      ([Field(name: "Set-Cookie", value: "a=1"), Field(name: "set-cookie", value: "b=2")], false),
      ([Field(name: "X-Foo", value: "1"), Field(name: "x-foo", value: "2")], false),
      ([Field(name: "Content-Length", value: "3"), Field(name: "content-length", value: "4")], false),
      // A name that is not ASCII (FoundationNetworking folds all of Unicode).
      ([Field(name: "Set-Coo\u{212A}ie", value: "k=1"), Field(name: "Content-Length", value: "9")], false),
    ]

    static let names = [
      "Content-Length", "content-length", "CONTENT-LENGTH", "ETag", "etag", "Set-Cookie", "set-cookie",
      "Content-Encoding", "X-Foo", "x-custom", "WWW-Authenticate", "www-authenticate", "Location", "",
    ]

    @Test(arguments: heads.indices)
    func lookupsAnswerWhatTheResponseAnswers(index: Int) throws {
      let (fields, answersAlone) = Self.heads[index]
      let parsed = ParsedResponseHead(statusCode: 200, httpVersion: "HTTP/1.1", fields: fields)
      let head = ResponseHead(parsed: parsed, url: Self.url)
      #expect(head.statusCode == 200)
      #expect(head.url == Self.url)
      let values = Self.names.map { head.value(forHTTPHeaderField: $0) }
      let length = head.expectedContentLength
      let isEncoded = ContentDecoding.isEncoded(head)
      #expect(head.isResponseMade == !answersAlone)
      // Answered alone: what a response made the engine's way answers. Otherwise the head asked its
      // own response (which of two spellings FoundationNetworking keeps depends on its dictionary,
      // so only the head's response is the reference).
      let fresh = try #require(parsed.response(url: Self.url))
      let reference = try #require(answersAlone ? fresh : head.httpResponse)
      #expect(values == Self.names.map { reference.value(forHTTPHeaderField: $0) }, "\(fields)")
      #expect(length == reference.expectedContentLength, "\(fields)")
      #expect(isEncoded == ContentDecoding.isEncoded(reference))
      // Made once, then always the same object, made as the engine made it.
      let response = try #require(head.httpResponse)
      #expect(head.response === response)
      #expect(head.isResponseMade)
      #expect(response.statusCode == 200)
      #expect(response.mimeType == fresh.mimeType)
      if answersAlone {
        #expect(response.allHeaderFields as? [String: String] == fresh.allHeaderFields as? [String: String])
        #expect(response.expectedContentLength == fresh.expectedContentLength)
      }
    }

    @Test func aHeadMadeFromAResponseAnswersFromIt() throws {
      let response = try #require(
        HTTPURLResponse(
          url: Self.url, statusCode: 404, httpVersion: "HTTP/1.1",
          headerFields: ["content-length": "7", "ETag": "\"t\""]))
      let head = ResponseHead(response)
      #expect(head.statusCode == 404)
      #expect(head.response === response)
      #expect(head.isResponseMade)
      #expect(head.value(forHTTPHeaderField: "etag") == "\"t\"")
      #expect(head.expectedContentLength == 7)
      let plain = ResponseHead(
        URLResponse(
          url: URL(fileURLWithPath: "/x"), mimeType: nil, expectedContentLength: 3, textEncodingName: nil))
      #expect(plain.statusCode == nil)
      #expect(plain.httpResponse == nil)
      #expect(plain.value(forHTTPHeaderField: "Content-Length") == nil)
      #expect(plain.expectedContentLength == 3)
    }

    /// A successful fetch on the libcurl engine makes no `HTTPURLResponse` until it is asked for;
    /// then ``SessionFetcher/response`` is the same object every time, with the headers received.
    @Test(
      arguments: FetcherEngine.libcurl.isAvailable ? [FetcherEngine.urlSession, .libcurl] : [.urlSession])
    func aFetchMakesTheResponseOnlyWhenAskedFor(engine: FetcherEngine) async throws {
      let server = try TestServer()
      defer { server.stop() }
      let fetcher = server.fetcher("/bytes/5", queue: DispatchQueue(label: "response-head"))
      fetcher.engine = engine
      let result = await fetcher.fetchResult()
      #expect(result.error == nil)
      #expect(fetcher.statusCode == 200)
      let head = try #require(fetcher.storage.withLock { $0.lifecycle.exchange?.responseHead })
      // The URLSession engine hands over a response it made. A global monitor (another test's,
      // running meanwhile) is handed the response, which makes it.
      if fetcher.storage.withLock({ $0.plan?.monitors.isEmpty ?? false }) {
        #expect(head.isResponseMade == (engine == .urlSession))
      }
      let response = try #require(fetcher.response as? HTTPURLResponse)
      #expect(fetcher.response === response)
      #expect(response.statusCode == 200)
      #expect(response.expectedContentLength == 5)
      #expect(response.value(forHTTPHeaderField: "etag") == "\"bytes-5\"")
      #expect(fetcher.responseHeaders?["Accept-Ranges"] == "bytes")
      #expect(fetcher.responseHeaders?["Content-Length"] == "5")
    }

    /// A `Set-Cookie` still reaches the jar (the response is made for it), and a 404 still fails
    /// with its status and the response.
    @Test(
      arguments: FetcherEngine.libcurl.isAvailable ? [FetcherEngine.urlSession, .libcurl] : [.urlSession])
    func cookiesAndFailuresStillSeeTheResponse(engine: FetcherEngine) async throws {
      let server = try TestServer()
      defer { server.stop() }
      let cookies = server.fetcher("/set-cookie?c=a=1&c=b=2", queue: DispatchQueue(label: "response-head"))
      cookies.engine = engine
      let jar = SessionCookieStorage()
      cookies.cookieStorage = jar
      #expect(await cookies.fetchResult().error == nil)
      #expect(Set(jar.cookies(for: server.url("/")).map(\.name)) == ["a", "b"])
      #expect(cookies.responseHeaders?["Set-Cookie"] == "a=1, b=2")
      let missing = server.fetcher("/status/404", queue: DispatchQueue(label: "response-head"))
      missing.engine = engine
      let failure = await missing.fetchResult()
      #expect((failure.error as? SessionFetcherError)?.statusCode == 404)
      #expect(missing.statusCode == 404)
      #expect((missing.response as? HTTPURLResponse)?.statusCode == 404)
    }
  }
#endif
