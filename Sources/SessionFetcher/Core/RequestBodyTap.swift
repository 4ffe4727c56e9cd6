import Foundation

/// A monitor that sees the bytes of a streamed request body as the engine reads them (logging
/// does, to log a stream provider's or a MIME document's body by its bytes).
///
/// Asked each time the fetcher makes a stream of the body (each attempt and each redirect that
/// resends it, and when the engine asks for the body again), just after the request was reported
/// with `fetcher(_:willSendRequest:)`. The returned closure gets every piece the engine reads, on
/// the engine's reading thread; nil leaves the stream untouched.
package protocol RequestBodyStreamObserver: FetcherEventMonitor {
  func fetcherWillReadRequestBodyStream(_ fetcher: SessionFetcher) -> (@Sendable (Data) -> Void)?
}

extension SessionFetcher {
  /// `stream` itself, or a stream that reads it and shows each piece to the observing monitors.
  func observedBodyStream(_ stream: InputStream) -> InputStream {
    let sinks = allMonitors().compactMap { monitor in
      (monitor as? any RequestBodyStreamObserver)?.fetcherWillReadRequestBodyStream(self)
    }
    guard !sinks.isEmpty else { return stream }
    return TeeInputStream(stream) { piece in
      for sink in sinks { sink(piece) }
    }
  }
}

/// Reads another stream and hands a copy of every piece read to `sink`: the request gets exactly
/// the bytes it would have read, and the copy costs one `Data` per read.
///
/// Like any `InputStream` it is used from one thread at a time (the engine's reader).
final class TeeInputStream: InputStream {
  private let base: InputStream
  private let sink: @Sendable (Data) -> Void

  init(_ base: InputStream, sink: @escaping @Sendable (Data) -> Void) {
    self.base = base
    self.sink = sink
    super.init(data: Data())
  }

  override var streamStatus: Stream.Status { base.streamStatus }

  override var streamError: Error? { base.streamError }

  override var hasBytesAvailable: Bool { base.hasBytesAvailable }

  override func open() { base.open() }

  override func close() { base.close() }

  override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
    let count = base.read(buffer, maxLength: length)
    if count > 0 { sink(Data(bytes: buffer, count: count)) }
    return count
  }

  override func getBuffer(
    _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
  ) -> Bool {
    false
  }

  override func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
    base.schedule(in: aRunLoop, forMode: mode)
  }

  override func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {
    base.remove(from: aRunLoop, forMode: mode)
  }
}
