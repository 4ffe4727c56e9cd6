import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

/// On the URLSession engine on Linux a stream's buffer copies FoundationNetworking's chunks into a
/// ring on arrival (see `ByteRing`): a reader that is behind takes new chunks of 64 KiB, not the
/// engine's own; on the other engines it takes the chunks as they came. Either way the bytes are the
/// body's, in order.
@Suite("Stream chunk copies", .ownThreads)
struct StreamChunkCopyTests {
  @Test func aReaderBehindTakesTheBodyInTheBuffersOwnChunks() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let length = 1_000_000
    let fetcher = server.fetcher("/bytes/\(length)")
    let chunks = try await bounded {
      let stream = try await fetcher.beginStreaming(highWaterMark: 8 << 20)
      // Nothing is read until the whole body waits in the buffer.
      #expect(await eventually(timeout: 20) { stream.bufferedByteCount == length })
      var chunks: [Data] = []
      for try await chunk in stream { chunks.append(chunk) }
      return chunks
    }
    #expect(chunks.reduce(Data(), +) == TestServer.patternBytes(count: length))
    #if canImport(FoundationNetworking)
      if FetcherEngine.default == .urlSession {
        let ringChunk = 64 * 1024
        #expect(chunks.dropLast().allSatisfy { $0.count == ringChunk }, "\(chunks.map(\.count))")
        #expect(chunks.last?.count == length % ringChunk)
      }
    #endif
  }
}
