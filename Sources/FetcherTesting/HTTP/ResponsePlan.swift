import Foundation
import SessionFetcher

/// Everything the connection does to answer one request, decided by a route before any byte is
/// written. Routes are pure apart from sleeping; the connection performs the plan.
enum ResponseAction {
  /// Send a response.
  case respond(ResponsePlan)
  /// Send nothing and wait until the client leaves or the server stops (`/hang`).
  case hang
  /// Close the connection without sending anything (`/empty`).
  case closeWithoutResponse
  /// Send these bytes, which are not HTTP, then close (`/garbage`).
  case garbage(Data)
}

/// A response to send: head, body source, framing, pacing and how the exchange ends.
struct ResponsePlan {
  /// Where the body bytes come from.
  enum Body {
    case empty
    case data(Data)
    /// `count` pattern bytes starting at pattern position `offset`, generated while sending.
    case pattern(offset: Int, count: Int)
    /// `prefix`, `unit` repeated `times` times, then `suffix`, generated while sending (a
    /// compression bomb, an endless run of gzip members).
    case repeating(prefix: Data, unit: Data, times: Int, suffix: Data)

    var count: Int {
      switch self {
      case .empty: return 0
      case .data(let data): return data.count
      case .pattern(_, let count): return count
      case .repeating(let prefix, let unit, let times, let suffix):
        let (middle, overflow) = unit.count.multipliedReportingOverflow(by: times)
        return overflow ? Int.max / 2 : prefix.count + middle + suffix.count
      }
    }
  }

  /// What happens after the body bytes are written.
  enum Ending: Equatable {
    /// The exchange is complete; the connection may be kept alive.
    case complete
    /// Close with a FIN (the body may be short of its `Content-Length`).
    case close
    /// Close with a RST.
    case reset
    /// Keep the connection open without sending more, until the client leaves or the server stops.
    case stall
  }

  var status: Int
  var headers: [HTTPHeader]
  var body: Body = .empty
  /// Send with `Transfer-Encoding: chunked`, in chunks of this many bytes.
  var chunkSize: Int?
  /// The `Content-Length` to announce when it differs from the body actually sent (faults).
  var announcedLength: Int?
  /// Send the body in this many pieces with ``pieceInterval`` seconds between them (`/drip`).
  var pieces = 1
  var pieceInterval: Double = 0
  /// Where each piece ends (byte offsets into the body, ascending), when the pieces are not of
  /// equal size (`/sse`: one event per piece). Overrides the even split.
  var pieceEnds: [Int]?
  var ending: Ending = .complete

  init(status: Int, headers: [HTTPHeader] = [], body: Body = .empty) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  init(_ response: TestResponse) {
    self.init(status: response.status, headers: response.headers, body: .data(response.body))
    let encodings = response.headers.values(named: "Transfer-Encoding")
    if encodings.contains(where: { $0.lowercased().contains("chunked") }) {
      chunkSize = 16_384
    }
    switch response.fault {
    case nil, .closeWithoutResponse:
      break
    case .truncate(let length):
      announcedLength = length
      ending = .close
    case .reset(let length):
      announcedLength = length
      ending = .reset
    case .stall(let length):
      announcedLength = length
      ending = .stall
    }
  }

  /// Whether the status forbids a body (RFC 9110 §6.4.1).
  var statusForbidsBody: Bool {
    (100..<200).contains(status) || status == 204 || status == 304
  }
}

extension ResponsePlan {
  /// A JSON response.
  static func json(_ value: JSONValue, status: Int = 200, headers: [HTTPHeader] = []) -> ResponsePlan {
    ResponsePlan(
      status: status,
      headers: [HTTPHeader(name: "Content-Type", value: "application/json")] + headers,
      body: .data(Data(value.text.utf8)))
  }

  /// A `text/plain; charset=utf-8` response.
  static func text(_ text: String, status: Int = 200, headers: [HTTPHeader] = []) -> ResponsePlan {
    ResponsePlan(
      status: status,
      headers: [HTTPHeader(name: "Content-Type", value: "text/plain; charset=utf-8")] + headers,
      body: .data(Data(text.utf8)))
  }
}
