import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// `setJSONBody` over a real connection: the body framed with its Content-Length. Which body and
/// Content-Type go out, and a value that fails to encode, are in `ScriptedJSONBodyTests`.
@Suite("setJSONBody")
struct JSONBodyTests {
  struct Note: Codable, Equatable {
    var title: String
    var stars: Int
  }

  struct Broken: Encodable {
    var value = Double.nan  // JSONEncoder refuses non-finite numbers by default.
  }

  @Test func theValueIsSentAsJSON() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/echo")
    try fetcher.setJSONBody(Note(title: "Hi", stars: 3))
    let data = try await fetcher.beginFetch()
    #expect(try JSONDecoder().decode(Note.self, from: data) == Note(title: "Hi", stars: 3))
    let record = try #require(server.requests.last)
    #expect(record.method == "POST")
    #expect(record.header("Content-Type") == "application/json")
    #expect(record.header("Content-Length") == String(data.count))
    #expect(!record.wasChunked)
  }

  @Test func theJSONBodyReplacesAStreamBody() throws {
    let fetcher = SessionFetcher.fetcher(urlString: "https://example.com/notes")
    fetcher.bodyStreamProvider = { InputStream(data: Data()) }
    try fetcher.setJSONBody(["a": 1])
    #expect(fetcher.bodyStreamProvider == nil)
    #expect(fetcher.bodyData == Data(#"{"a":1}"#.utf8))
  }
}
