import Foundation

/// One event of a `text/event-stream` (server-sent events, WHATWG HTML § 9.2).
public struct ServerSentEvent: Sendable, Hashable, CustomStringConvertible {
  /// The last event ID of the stream when this event was dispatched (an `id:` field stays in force
  /// for later events); nil when none was set or it was reset to empty.
  public var id: String?
  /// The event type: the `event:` field, or `"message"`.
  public var event: String
  /// The `data:` lines joined with LF.
  public var data: String
  /// The reconnection time in milliseconds that the event's own `retry:` field set, if any.
  public var retry: Int?

  /// Creates an event.
  public init(id: String? = nil, event: String = "message", data: String, retry: Int? = nil) {
    self.id = id
    self.event = event
    self.data = data
    self.retry = retry
  }

  public var description: String {
    "ServerSentEvent(\(event)\(id.map { " id=\($0)" } ?? "")\(retry.map { " retry=\($0)" } ?? ""): \(data))"
  }
}

/// The `text/event-stream` grammar as a pure value type: feed it bytes as they arrive, get the
/// events they complete.
///
/// Follows the WHATWG HTML "event stream interpretation": a leading BOM is skipped; lines end with
/// CRLF, LF or CR (also split across pieces); `:` starts a comment; `field: value` loses one space
/// after the colon; a line without a colon is a field with an empty value; `data` lines accumulate;
/// `event` sets the type; `id` (unless it contains NUL) sets the last event ID, which persists; `retry`
/// with only ASCII digits sets ``reconnectionTime``; unknown fields are ignored; an empty line
/// dispatches the event unless its data is empty. An event unterminated at the end of the stream is
/// never dispatched.
///
/// Memory is bounded by ``maximumEventLength``: an event's data (its `data:` values joined with
/// LF) may be that many bytes long, and so may a line's value (after its field name, the colon and
/// one space); a byte more makes ``parse(_:)`` throw ``SessionFetcherError/responseTooLarge(limit:)``
/// as soon as it arrives, without waiting for the line's or the event's end.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// let events = try parser.parse(Data("event: add\ndata: 1\n\n".utf8))
/// // [ServerSentEvent(event: "add", data: "1")]
/// ```
public struct ServerSentEventParser: Sendable {
  private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

  /// The last event ID seen (the `Last-Event-ID` to send when reconnecting); empty when none.
  public private(set) var lastEventID = ""
  /// The reconnection time in milliseconds that the stream asked for with `retry:`, if any.
  public private(set) var reconnectionTime: Int?
  /// The bytes parsed so far (comments and fields included): whether a connection delivered
  /// anything.
  package private(set) var parsedByteCount = 0

  /// The longest event data, and the longest field value, in bytes (see the type's description).
  public let maximumEventLength: Int

  private var lines: ByteLineSplitter
  private var start: [UInt8] = []
  private var isPastStart = false
  private var dataBuffer = ""
  private var dataLength = 0
  private var hasData = false
  private var eventType = ""
  private var idBuffer = ""
  private var retryInEvent: Int?
  private var isOverLimit = false

  /// The longest field name a line may carry besides a value of ``maximumEventLength`` bytes
  /// (`retry`, the longest defined name, with the colon and the space).
  private static let fieldAllowance = "retry: ".utf8.count

  /// Creates a parser at the start of a stream.
  ///
  /// - Parameters:
  ///   - maximumEventLength: the most bytes of data one event may carry, and of one line's value
  ///     (default 16 MiB, as ``SessionFetcher/maximumEventLength``); at least 1.
  ///   - lastEventID: the last event ID the stream starts with: an event stream's ID persists from
  ///     one connection to the next, so the events of a resumed connection that carry no `id:` have
  ///     the ID it was resumed from.
  public init(maximumEventLength: Int = SessionFetcher.defaultMaximumEventLength, lastEventID: String = "") {
    self.maximumEventLength = max(1, maximumEventLength)
    self.lastEventID = lastEventID
    idBuffer = lastEventID
    let lineLimit = self.maximumEventLength.addingReportingOverflow(Self.fieldAllowance)
    lines = ByteLineSplitter(maximumLineLength: lineLimit.overflow ? .max : lineLimit.partialValue)
  }

  /// Parses the next bytes of the stream and returns the events they complete, in order.
  ///
  /// - Throws: ``SessionFetcherError/responseTooLarge(limit:)`` (the limit being
  ///   ``maximumEventLength``) when an event's data or a line grows past the limit; the events
  ///   completed before it in `bytes` are lost, and every later call throws the same error.
  public mutating func parse(_ bytes: Data) throws -> [ServerSentEvent] {
    guard !isOverLimit else { throw tooLarge }
    parsedByteCount += bytes.count
    do {
      return try parseWithinLimits(bytes)
    } catch {
      isOverLimit = true
      dataBuffer = ""
      start = []
      throw tooLarge
    }
  }

  private var tooLarge: SessionFetcherError { .responseTooLarge(limit: Int64(maximumEventLength)) }

  private struct EventTooLong: Error {}

  private mutating func parseWithinLimits(_ bytes: Data) throws -> [ServerSentEvent] {
    var events: [ServerSentEvent] = []
    if isPastStart {
      for line in try lines.append(bytes) { try process(line, into: &events) }
      return events
    }
    // Hold the first bytes until it is clear whether they are a byte order mark.
    start.append(contentsOf: bytes)
    let prefix = Self.byteOrderMark.prefix(start.count)
    if start.count < Self.byteOrderMark.count && start.elementsEqual(prefix) { return [] }
    isPastStart = true
    let rest = start.starts(with: Self.byteOrderMark) ? Array(start.dropFirst(3)) : start
    start = []
    for line in try lines.append(rest) { try process(line, into: &events) }
    return events
  }

  private mutating func process(_ line: [UInt8], into events: inout [ServerSentEvent]) throws {
    if line.isEmpty {
      dispatch(into: &events)
      return
    }
    if line.first == UInt8(ascii: ":") { return }
    let field: String
    var value: ArraySlice<UInt8>
    if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
      field = String(decoding: line[..<colon], as: UTF8.self)
      value = line[(colon + 1)...]
      if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
    } else {
      field = String(decoding: line, as: UTF8.self)
      value = []
    }
    switch field {
    case "event":
      eventType = String(decoding: value, as: UTF8.self)
    case "data":
      // The data as dispatched: the values joined with LF.
      dataLength += (hasData ? 1 : 0) + value.count
      guard dataLength <= maximumEventLength else { throw EventTooLong() }
      dataBuffer += String(decoding: value, as: UTF8.self)
      dataBuffer += "\n"
      hasData = true
    case "id":
      if !value.contains(0) { idBuffer = String(decoding: value, as: UTF8.self) }
    case "retry":
      if !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }) {
        // Digits beyond Int's range mean "a very long time".
        let time = Int(String(decoding: value, as: UTF8.self)) ?? Int.max
        reconnectionTime = time
        retryInEvent = time
      }
    default:
      break
    }
  }

  private mutating func dispatch(into events: inout [ServerSentEvent]) {
    lastEventID = idBuffer
    defer {
      dataBuffer = ""
      dataLength = 0
      hasData = false
      eventType = ""
      retryInEvent = nil
    }
    guard hasData else { return }
    var data = dataBuffer
    if data.hasSuffix("\n") { data.removeLast() }
    events.append(
      ServerSentEvent(
        id: lastEventID.isEmpty ? nil : lastEventID, event: eventType.isEmpty ? "message" : eventType,
        data: data, retry: retryInEvent))
  }
}

/// The server-sent events of a body stream, parsed with ``ServerSentEventParser``.
///
/// Obtain one with ``FetcherStream/events`` or ``SessionFetcher/events()``. An event whose data, or
/// a line whose value, passes ``SessionFetcher/maximumEventLength`` (16 MiB by default) ends the
/// sequence with ``SessionFetcherError/responseTooLarge(limit:)`` as soon as its bytes pass the
/// limit, and stops the fetch: the rest of the body is not read.
public struct ServerSentEvents<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable
where Base.Element == Data {
  /// The event type.
  public typealias Element = ServerSentEvent

  let base: Base
  let maximumEventLength: Int
  /// The ID the parser starts with (the one a resumed event source sends as `Last-Event-ID`).
  let lastEventID: String

  init(_ base: Base, maximumEventLength: Int, lastEventID: String = "") {
    self.base = base
    self.maximumEventLength = maximumEventLength
    self.lastEventID = lastEventID
  }

  /// Iterates the events.
  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(
      base: base.makeAsyncIterator(),
      parser: ServerSentEventParser(maximumEventLength: maximumEventLength, lastEventID: lastEventID))
  }

  /// Gives the events in order.
  public struct AsyncIterator: AsyncIteratorProtocol {
    var base: Base.AsyncIterator
    /// The parser, with the stream's last event ID and reconnection time so far.
    public private(set) var parser: ServerSentEventParser
    var ready: [ServerSentEvent] = []
    var isDone = false

    init(base: Base.AsyncIterator, parser: ServerSentEventParser) {
      self.base = base
      self.parser = parser
    }

    /// The next event, or nil at the end of the stream.
    ///
    /// - Throws: what the body stream throws, or ``SessionFetcherError/responseTooLarge(limit:)``
    ///   (once; the fetch is stopped) for an event or a line longer than
    ///   ``SessionFetcher/maximumEventLength``.
    public mutating func next() async throws -> ServerSentEvent? {
      while ready.isEmpty {
        if isDone { return nil }
        guard let chunk = try await base.next() else {
          isDone = true
          return nil
        }
        do {
          ready = try parser.parse(chunk).reversed()
        } catch {
          isDone = true
          stopStreamTransfer(&base)
          throw error
        }
      }
      return ready.removeLast()
    }
  }
}
