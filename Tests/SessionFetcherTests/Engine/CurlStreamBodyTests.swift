#if canImport(FoundationNetworking)
  import FetcherTesting
  import Foundation
  import SessionFetcher
  import Testing

  #if canImport(Glibc)
    import Glibc
    import TestTraits
  #endif

  @Suite("Curl engine: body streams that block", .ownThreads)
  struct CurlStreamBodyTests {
    /// A body stream with no bytes yet (a pipe whose producer is slow) pauses its own upload only:
    /// another transfer of the same engine completes meanwhile, and the upload ends whole once the
    /// producer writes the rest.
    @Test func aBlockingStreamDoesNotHoldUpOtherTransfers() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      let payload = TestServer.patternBytes(count: 300_000, offset: 5)
      var pipeEnds: [Int32] = [0, 0]
      try #require(pipe(&pipeEnds) == 0)
      let (readEnd, writeEnd) = (pipeEnds[0], pipeEnds[1])
      defer { close(readEnd) }
      let stream = try #require(InputStream(fileAtPath: "/dev/fd/\(readEnd)"))

      let releaseRest = DispatchSemaphore(value: 0)
      let producer = Thread {
        func write(_ part: Data) {
          part.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
              let count = Glibc.write(writeEnd, bytes.baseAddress! + offset, bytes.count - offset)
              if count <= 0 { return }
              offset += count
            }
          }
        }
        write(payload.prefix(100_000))
        _ = releaseRest.wait(timeout: .now() + 30)
        write(payload.dropFirst(100_000))
        close(writeEnd)
      }
      producer.start()

      var upload = URLRequest(url: server.url("/echo"))
      upload.httpMethod = "POST"
      let uploadHandler = CurlRecordingHandler()
      let uploadTask = try #require(
        engine.makeTask(request: upload, body: .stream(stream), handler: uploadHandler))
      uploadTask.resume()

      // While the stream waits for its producer, a GET on the same engine (one loop thread) ends.
      let (other, _) = try curlExchange(engine, URLRequest(url: server.url("/bytes/1000")))
      #expect(other.completions.count == 1 && other.completions.first! == nil)
      #expect(other.body.count == 1000)
      #expect(uploadHandler.current.completions.isEmpty)

      releaseRest.signal()
      try #require(uploadHandler.waitForCompletion(), "no completion: \(uploadTask.diagnosticSummary)")
      let record = uploadHandler.current
      #expect(record.completions.first! == nil)
      let headers = record.response?.allHeaderFields as? [String: String] ?? [:]
      #expect(headers["X-Request-Chunked"] == "1")
      #expect(headers["X-Body-Checksum"] == TestServer.checksum(payload))
      #expect(record.sent.last?.total == Int64(payload.count))
    }

    /// A stream that is over at once sends an empty chunked body (the end seen from the stream's
    /// thread reaches libcurl as the body's end).
    @Test func anEmptyStreamSendsAnEmptyBody() throws {
      let server = try TestServer()
      defer { server.stop() }
      let engine = try makeCurlEngine()
      var request = URLRequest(url: server.url("/echo"))
      request.httpMethod = "POST"
      let (record, _) = try curlExchange(engine, request, body: .stream(InputStream(data: Data())))
      #expect(record.completions.count == 1 && record.completions.first! == nil)
      let headers = record.response?.allHeaderFields as? [String: String] ?? [:]
      #expect(headers["X-Body-Checksum"] == TestServer.checksum(Data()))
    }
  }
#endif
