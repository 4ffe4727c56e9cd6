import Foundation

/// A request as ``TestServer`` received it: what custom route handlers are given and what
/// ``TestServer/requests`` records.
public struct RecordedRequest: Sendable {
  /// One `name=value` pair of the query, percent-decoded.
  public struct QueryItem: Sendable, Hashable {
    /// The decoded name.
    public var name: String
    /// The decoded value (empty when the item had no `=`).
    public var value: String

    /// Creates a query item.
    public init(name: String, value: String) {
      self.name = name
      self.value = value
    }
  }

  /// The request method, e.g. `GET`.
  public var method: String
  /// The path of the request-target without the query, exactly as sent (not percent-decoded).
  /// For an absolute-form target (`http://host/p?q`) it is the path part (`/p`).
  public var path: String
  /// The query parameters, percent-decoded; when a name repeats, the last value wins (see
  /// ``queryItems`` for all of them). `+` is kept as is, not turned into a space.
  public var query: [String: String]
  /// Every query parameter in order, repeats included.
  public var queryItems: [QueryItem]
  /// The raw request-target from the request line, e.g. `/bytes/10?x=1`.
  public var target: String
  /// The HTTP version from the request line, e.g. `HTTP/1.1`.
  public var version: String
  /// The header fields in the order received, names in their original case.
  public var headers: [HTTPHeader]
  /// The request body after removing any chunked framing. Empty when the body was not kept
  /// (`/upload?discard=1`); ``bodyLength`` and ``bodyChecksum`` are always set.
  public var body: Data
  /// The number of body bytes received (after de-chunking), kept or not.
  public var bodyLength: Int
  /// The FNV-1a 64 checksum of the body (see ``TestServer/checksum(_:)``).
  public var bodyChecksum: String
  /// Whether the body was sent with `Transfer-Encoding: chunked`.
  public var wasChunked: Bool
  /// Identifies the TCP connection that carried the request; requests on one kept-alive
  /// connection share it. Numbered from 1 per server.
  public var connectionID: Int
  /// The position of this request among all the server received, from 1 (not reset by
  /// ``TestServer/resetRecords()``).
  public var sequenceNumber: Int

  /// Creates a request record; the server makes these, tests may make them to unit-test handlers.
  public init(
    method: String = "GET", target: String = "/", version: String = "HTTP/1.1",
    headers: [HTTPHeader] = [], body: Data = Data(), wasChunked: Bool = false,
    connectionID: Int = 0, sequenceNumber: Int = 0
  ) {
    let parts = RequestTarget(target)
    self.method = method
    self.target = target
    self.path = parts.path
    self.queryItems = parts.queryItems
    self.query = parts.query
    self.version = version
    self.headers = headers
    self.body = body
    self.bodyLength = body.count
    self.bodyChecksum = TestServer.checksum(body)
    self.wasChunked = wasChunked
    self.connectionID = connectionID
    self.sequenceNumber = sequenceNumber
  }

  /// The value of the first header named `name` (case-insensitive), or `nil`.
  public func header(_ name: String) -> String? {
    headers.first(named: name)
  }

  /// Every value of the headers named `name` (case-insensitive), in order.
  public func headerValues(_ name: String) -> [String] {
    headers.values(named: name)
  }

  /// Every value of the query parameter `name`, in order.
  public func queryValues(_ name: String) -> [String] {
    queryItems.filter { $0.name == name }.map(\.value)
  }

  /// The body decoded as UTF-8 (invalid sequences repaired), for assertions.
  public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
