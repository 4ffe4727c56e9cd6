#if canImport(FoundationNetworking)
  import FetcherTesting
  import Foundation
  import SessionFetcher
  import Testing

  @Suite("Curl engine: responses, redirects and challenges")
  struct CurlResponseTests {
    @Test func interimResponsesAreSkipped() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      var request = URLRequest(url: server.url("/echo"))
      request.httpMethod = "POST"
      request.setValue("100-continue", forHTTPHeaderField: "Expect")
      let (record, _) = try curlExchange(engine, request, body: .data(Data(repeating: 7, count: 10_000)))
      #expect(server.requests(path: "/echo").first?.header("Expect") == "100-continue")
      #expect(record.completions.first! == nil)
      #expect(record.events == ["response 200", "data", "complete"])
      #expect(record.body == Data(repeating: 7, count: 10_000))
    }

    @Test func repeatedHeaderNamesAreJoinedAsFoundationNetworkingDoes() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let (record, _) = try curlExchange(engine, URLRequest(url: server.url("/set-cookie?c=a=1&c=b=2")))
      let headers = record.response?.allHeaderFields as? [String: String] ?? [:]
      #expect(headers["Set-Cookie"] == "a=1, b=2")
    }

    @Test func redirectIsReportedWithTheResolvedLocationAndNotFollowed() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let (record, _) = try curlExchange(
        engine, URLRequest(url: server.url("/redirect?to=bytes/10&status=307")))
      #expect(record.events == ["redirect 307", "response 307", "data", "complete"])
      #expect(record.redirects.first?.target == server.url("/bytes/10"))
      #expect(record.response?.statusCode == 307)
      #expect(record.body == Data("redirecting".utf8))
      #expect(record.completions.first! == nil)
      #expect(server.requestCount(path: "/bytes/10") == 0)
    }

    @Test func challengeAnsweredWithCredentialIsSentAgainWithBasic() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let (record, _) = try curlExchange(engine, URLRequest(url: server.url("/basic-auth/user/pa55"))) {
        handler in
        handler.answer = { challenge in
          challenge.previousFailureCount == 0
            ? (.useCredential, URLCredential(user: "user", password: "pa55", persistence: .none))
            : (.cancelAuthenticationChallenge, nil)
        }
      }
      #expect(record.events == ["challenge 0", "response 200", "data", "complete"])
      #expect(record.response?.statusCode == 200)
      #expect(record.completions.first! == nil)
      let challenge = try #require(record.challenges.first)
      #expect(challenge.protectionSpace.host == "127.0.0.1")
      #expect(challenge.protectionSpace.port == Int(server.port))
      #expect(challenge.protectionSpace.realm == "test")
      #expect(challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodHTTPBasic)
      #expect((challenge.failureResponse as? HTTPURLResponse)?.statusCode == 401)
      let requests = server.requests(path: "/basic-auth/user/pa55")
      #expect(requests.count == 2)
      #expect(requests.first?.header("Authorization") == nil)
      #expect(
        requests.last?.header("Authorization") == "Basic " + Data("user:pa55".utf8).base64EncodedString())
      #expect(String(decoding: record.body, as: UTF8.self).contains("\"authenticated\":true"))
    }

    @Test func wrongCredentialIsChallengedAgainThenTheUnauthorizedResponseDelivered() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let (record, _) = try curlExchange(engine, URLRequest(url: server.url("/basic-auth/user/pa55"))) {
        handler in
        handler.answer = { challenge in
          challenge.previousFailureCount == 0
            ? (.useCredential, URLCredential(user: "user", password: "wrong", persistence: .none))
            : (.cancelAuthenticationChallenge, nil)
        }
      }
      #expect(record.events == ["challenge 0", "challenge 1", "response 401", "data", "complete"])
      #expect(record.completions.first! == nil)
      #expect(server.requestCount(path: "/basic-auth/user/pa55") == 2)
    }

    @Test func cancelledChallengeDeliversTheUnauthorizedResponse() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let (record, task) = try curlExchange(engine, URLRequest(url: server.url("/bearer/t0k3n")))
      #expect(record.events == ["challenge 0", "response 401", "data", "complete"])
      #expect(
        record.challenges.first?.protectionSpace.authenticationMethod == NSURLAuthenticationMethodDefault)
      #expect((task.response as? HTTPURLResponse)?.statusCode == 401)
      #expect(String(decoding: record.body, as: UTF8.self).contains("\"authenticated\":false"))
      #expect(server.requestCount(path: "/bearer/t0k3n") == 1)
    }

    @Test func challengedStreamUploadAsksForANewStream() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let payload = TestServer.patternBytes(count: 30_000)
      var request = URLRequest(url: server.url("/basic-auth/u/p"))
      request.httpMethod = "POST"
      let (record, _) = try curlExchange(engine, request, body: .stream(InputStream(data: payload))) {
        handler in
        handler.answer = { _ in (.useCredential, URLCredential(user: "u", password: "p", persistence: .none))
        }
        handler.newBodyStream = { InputStream(data: payload) }
      }
      #expect(record.newBodyStreams == 1)
      #expect(record.response?.statusCode == 200)
      let requests = server.requests(path: "/basic-auth/u/p")
      #expect(requests.count == 2)
      #expect(requests.last?.bodyChecksum == TestServer.checksum(payload))
      #expect(requests.last?.wasChunked == true)
    }
  }
#endif
