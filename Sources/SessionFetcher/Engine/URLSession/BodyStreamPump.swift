import Foundation

/// Hands a request body stream to Apple's URLSession as the input half of a bound stream pair,
/// fed from the stream the fetcher was given on a thread of its own.
///
/// Apple's URLSession reads a body stream by scheduling it on a run loop and waiting for its
/// events (`hasBytesAvailable`, `endEncountered`). The streams the fetcher sends are `InputStream`
/// subclasses written in Swift (`MIMEInputStream`, a caller's stream, the fetcher's progress
/// wrapper), which send no events, and uploads from such streams have been known to hang there. A
/// bound pair's input half is Foundation's own and sends them. FoundationNetworking reads a body
/// stream with plain blocking `read` calls and swift-corelibs-foundation has no bound pairs, so on
/// Linux the stream goes to URLSession as it is.
///
/// ``pump(_:into:length:beforeClosing:)`` is the copy itself, into any ``BodyStreamSink``, so that it is tested on
/// every platform.
enum BodyStreamPump {
  /// The bytes read from the source at once, and the bound pair's buffer.
  static let bufferSize = 64 * 1024

  #if canImport(Darwin)
    /// The stream for URLSession to read in place of `source`: the input half of a bound pair that
    /// a new thread fills from `source` (see ``pump(_:into:length:beforeClosing:)``). `failed` is called on that
    /// thread when `source` fails, or is not `length` bytes long when a length is given.
    static func boundStream(
      reading source: InputStream, length: Int64?, failed: @escaping @Sendable (URLError) -> Void
    ) -> InputStream {
      var input: InputStream?
      var output: OutputStream?
      Stream.getBoundStreams(withBufferSize: bufferSize, inputStream: &input, outputStream: &output)
      guard let input, let output else { return source }
      // Handed to the thread, which alone uses them from now on.
      nonisolated(unsafe) let body = source
      nonisolated(unsafe) let sink = output
      let thread = Thread {
        // Reported before the pair closes: the task's error is in place before URLSession can see
        // the body end (see `URLSessionEngineTask.bodyFailure`).
        _ = pump(body, into: sink, length: length) { failure in
          if let failure { failed(failure) }
        }
      }
      thread.name = "SessionFetcher.bodyStream"
      thread.start()
      return input
    }
  #endif

  /// Copies `source` into `sink` in order, opening and then closing both; nil when the whole body
  /// went over, else why not. Blocks in `read` and `write` (a bound pair's `write` waits for the
  /// reader).
  ///
  /// With `length` (a body sent with that `Content-Length`), the last byte is written only once
  /// `source` has ended right after it: a source that ends short, runs long or fails leaves the
  /// body incomplete, and the failure says which, as on the libcurl engine. The sink refusing bytes
  /// (URLSession closed its half: the task ended) stops the copy, with no failure to report.
  ///
  /// `beforeClosing` gets the result while both streams are still open.
  static func pump(
    _ source: InputStream, into sink: some BodyStreamSink, length: Int64?,
    beforeClosing: (URLError?) -> Void = { _ in }
  ) -> URLError? {
    source.open()
    sink.open()
    let failure = copy(source, into: sink, length: length)
    beforeClosing(failure)
    source.close()
    sink.close()
    return failure
  }

  /// The copy of ``pump(_:into:length:beforeClosing:)``, between opened streams.
  private static func copy(_ source: InputStream, into sink: some BodyStreamSink, length: Int64?) -> URLError?
  {
    var buffer = [UInt8](repeating: 0, count: bufferSize)
    var read: Int64 = 0
    // The byte at `length - 1`, read but not written until `source` has shown that it ends there.
    var heldLastByte: UInt8?
    while true {
      let count = buffer.withUnsafeMutableBufferPointer { source.read($0.baseAddress!, maxLength: $0.count) }
      if count < 0 { return RequestBodyStreamError.failed(source.streamError) }
      if count == 0 {
        guard let length else { return nil }
        guard read == length else {
          return RequestBodyStreamError.lengthMismatch(expected: length, read: read)
        }
        if let heldLastByte, !write([heldLastByte], count: 1, to: sink) { return nil }
        return nil
      }
      read += Int64(count)
      var writable = count
      if let length {
        if read > length { return RequestBodyStreamError.lengthMismatch(expected: length, read: read) }
        if read == length {
          writable = count - 1
          heldLastByte = buffer[count - 1]
        }
      }
      if writable > 0, !write(buffer, count: writable, to: sink) { return nil }
    }
  }

  /// Writes the first `count` bytes of `bytes`; false when the sink takes no more.
  private static func write(_ bytes: [UInt8], count: Int, to sink: some BodyStreamSink) -> Bool {
    var offset = 0
    while offset < count {
      let wrote = bytes.withUnsafeBufferPointer {
        sink.write($0.baseAddress! + offset, maxLength: count - offset)
      }
      guard wrote > 0 else { return false }
      offset += wrote
    }
    return true
  }
}

/// Where ``BodyStreamPump`` writes: the output half of a bound pair (an `OutputStream`), or a
/// test's recorder.
protocol BodyStreamSink {
  func open()
  func close()
  /// Writes up to `maxLength` bytes; returns how many, or 0 or -1 when it takes no more.
  func write(_ buffer: UnsafePointer<UInt8>, maxLength: Int) -> Int
}

extension OutputStream: BodyStreamSink {}

/// The errors of a request body stream that cannot be sent whole, the same on every engine: the
/// fetcher reports them as ``SessionFetcherError/bodyUnavailable(description:)`` when the body
/// had an exact length.
enum RequestBodyStreamError {
  /// The stream's `read` failed with `streamError`.
  static func failed(_ streamError: (any Error)?) -> URLError {
    guard let streamError else { return URLError(.requestBodyStreamExhausted) }
    return URLError(
      .requestBodyStreamExhausted,
      userInfo: [
        NSUnderlyingErrorKey: streamError,
        NSLocalizedDescriptionKey: "The request body stream failed: \(streamError.localizedDescription)",
      ])
  }

  /// The stream ended after `read` of its `expected` bytes, or (`read` past `expected`) ran long.
  static func lengthMismatch(expected: Int64, read: Int64) -> URLError {
    let text =
      read < expected
      ? "The request body stream ended after \(read) of its \(expected) bytes"
      : "The request body stream ran past its \(expected) bytes"
    return URLError(.requestBodyStreamExhausted, userInfo: [NSLocalizedDescriptionKey: text])
  }
}
