import FetcherTesting
import Foundation
import SessionFetcher
import TestTraits
import Testing

#if canImport(Glibc)
  import Glibc
#endif

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
      #expect(await eventually(timeout: 60) { stream.bufferedByteCount == length })
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

  /// A high-water mark past half of `Int.max` (never pause) streams as any other: the ring's size
  /// after a drain (twice the mark) saturates instead of trapping.
  @Test func aHighWaterMarkNearIntMaxStreamsTheBody() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let length = 300_000
    let fetcher = server.fetcher("/bytes/\(length)")
    let total = try await bounded {
      let stream = try await fetcher.beginStreaming(highWaterMark: .max)
      #expect(await eventually(timeout: 60) { stream.bufferedByteCount == length })
      var body = Data()
      for try await chunk in stream { body.append(chunk) }
      return body
    }
    #expect(total == TestServer.patternBytes(count: length))
  }

  /// Each chunk a fetcher hands over holds a block of about its own size: on the libcurl engine,
  /// bytes kept to go out together (TLS records, small pieces of a stream) must not each keep a
  /// block of the engine's chunk size (128 KiB) while they wait, as a slow reader's buffer or an
  /// accumulate block's queue holds thousands of them.
  @Test(.linuxOnly("needs glibc: reads block sizes with malloc_usable_size"))
  func smallChunksHoldBlocksOfTheirOwnSize() async throws {
    #if canImport(Glibc)
      typealias UsableSize = @convention(c) (UnsafeMutableRawPointer?) -> Int
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size") else { return }
      let usableSize = unsafeBitCast(symbol, to: UsableSize.self)
      let server = try TestServer()
      defer { server.stop() }
      let fetcher = server.fetcher("/stream?bytes=70000&chunkSize=7000&interval=20")
      let blocks = Recorder<String>()
      fetcher.accumulateDataBlock = { chunk in
        guard let chunk, chunk.count > 64 else { return }
        let block = chunk.withUnsafeBytes { usableSize(UnsafeMutableRawPointer(mutating: $0.baseAddress)) }
        if block > 2 * chunk.count + 4096 { blocks.append("\(chunk.count) bytes in a block of \(block)") }
      }
      let result = await fetcher.fetchResult()
      #expect(result.error == nil)
      #expect(blocks.values.isEmpty, "\(blocks.values)")
    #endif
  }
}
