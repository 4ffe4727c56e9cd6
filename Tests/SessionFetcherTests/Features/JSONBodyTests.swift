import FetcherTesting
import Foundation
import SessionFetcher
import Testing

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

  @Test func anExistingContentTypeIsKeptAndTheEncoderIsUsed() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/echo")
    fetcher.setRequestValue("application/vnd.api+json", forHTTPHeaderField: "Content-Type")
    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    struct Shape: Encodable { var sideCount = 4 }
    try fetcher.setJSONBody(Shape(), using: encoder)
    let data = try await fetcher.beginFetch()
    #expect(String(decoding: data, as: UTF8.self) == #"{"side_count":4}"#)
    #expect(server.requests.last?.header("Content-Type") == "application/vnd.api+json")
  }

  @Test func aValueThatFailsToEncodeThrowsAndChangesNothing() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher("/echo")
    fetcher.bodyData = Data("previous".utf8)
    #expect(throws: EncodingError.self) { try fetcher.setJSONBody(Broken()) }
    #expect(fetcher.bodyData == Data("previous".utf8))
    #expect(fetcher.request?.value(forHTTPHeaderField: "Content-Type") == nil)
    // What goes out is the body that was there before, not a partial one.
    let data = try await fetcher.beginFetch()
    #expect(data == Data("previous".utf8))
  }

  @Test func theJSONBodyReplacesAStreamBody() throws {
    let fetcher = SessionFetcher.fetcher(urlString: "https://example.com/notes")
    fetcher.bodyStreamProvider = { InputStream(data: Data()) }
    try fetcher.setJSONBody(["a": 1])
    #expect(fetcher.bodyStreamProvider == nil)
    #expect(fetcher.bodyData == Data(#"{"a":1}"#.utf8))
  }
}
