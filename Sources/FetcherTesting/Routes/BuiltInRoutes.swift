import Foundation
import SessionFetcher

/// The routes every ``TestServer`` answers (see the ``TestServer`` documentation for the table).
///
/// Each route is a function from the request to a ``ResponseAction``; none writes to the socket.
enum BuiltInRoutes {
  static func action(for request: RecordedRequest, context: RouteContext) -> ResponseAction {
    let components = request.decodedPathComponents
    guard let first = components.first else { return .respond(notFound()) }
    let rest = Array(components.dropFirst())
    switch (first, rest.count) {
    case ("status", 1): return .respond(status(rest[0], request))
    case ("bytes", 1): return .respond(bytes(rest[0], request))
    case ("text", 0): return .respond(.text(request.query["value"] ?? ""))
    case ("echo", 0): return .respond(echo(request))
    case ("upload", 0): return .respond(upload(request))
    case ("headers", 0): return .respond(headers(request))
    case ("delay", 1): return delay(rest[0], context)
    case ("hang", 0): return .hang
    case ("drip", 0): return .respond(drip(request))
    case ("redirect", 0): return .respond(redirect(request))
    case ("redirect", 1): return .respond(redirectChain(rest[0], request, context))
    case ("cookies", 0): return .respond(cookies(request))
    case ("set-cookie", 0): return .respond(setCookie(request))
    case ("etag", 1): return .respond(etag(rest[0], request))
    case ("basic-auth", 2): return .respond(basicAuth(user: rest[0], password: rest[1], request))
    case ("bearer", 1): return .respond(bearer(rest[0], request))
    case ("digest-auth", 3), ("digest-auth", 4):
      return .respond(
        DigestAuthRoute.respond(
          qop: rest[0], user: rest[1], password: rest[2], algorithm: rest.count == 4 ? rest[3] : "MD5",
          request))
    case ("retry-after", 0): return .respond(retryAfter(request))
    case ("chunked", 0): return .respond(chunked(request))
    case ("truncate", 0): return .respond(partialBody(request, ending: .close))
    case ("reset", 0): return .respond(partialBody(request, ending: .reset))
    case ("stall", 0): return .respond(partialBody(request, ending: .stall))
    case ("empty", 0): return .closeWithoutResponse
    case ("garbage", 0): return .garbage(garbageBytes)
    case ("fail-first", 0): return failFirst(request, context)
    case ("sse", 0): return .respond(StreamingRoutes.sse(request))
    case ("stream", 0): return .respond(StreamingRoutes.stream(request))
    case ("encoded", 0): return .respond(EncodingRoutes.encoded(request))
    case ("bomb", 0): return .respond(EncodingRoutes.bomb(request))
    case ("gzip-members", 0): return .respond(EncodingRoutes.endlessMembers())
    case ("corrupt-encoding", 0): return .respond(EncodingRoutes.corrupt(request))
    default: return .respond(notFound())
    }
  }

  /// Bytes that no HTTP client can take for a status line.
  static let garbageBytes = Data("\u{1}\u{2}GARBAGE\u{0} this is not HTTP at all \u{7F}\r\n\r\n".utf8)

  static func notFound() -> ResponsePlan {
    .text("not found", status: 404)
  }

  static func badRequest(_ reason: String) -> ResponsePlan {
    .text("bad request: \(reason)", status: 400)
  }

  /// `{"error":{"message":"Server Status N","code":N}}`
  static func errorBody(_ status: Int) -> JSONValue {
    .object([
      ("error", .object([("message", .string("Server Status \(status)")), ("code", .integer(status))]))
    ])
  }

  static func errorResponse(_ status: Int, retryAfter: String?) -> ResponsePlan {
    var plan = ResponsePlan.json(errorBody(status), status: status)
    if let retryAfter { plan.headers.append(HTTPHeader(name: "Retry-After", value: retryAfter)) }
    return plan
  }

  // MARK: - Routes

  private static func status(_ code: String, _ request: RecordedRequest) -> ResponsePlan {
    guard let status = Int(code), (100...999).contains(status) else {
      return badRequest("invalid status \(code)")
    }
    return errorResponse(status, retryAfter: request.query["retryAfter"])
  }

  private static func bytes(_ countText: String, _ request: RecordedRequest) -> ResponsePlan {
    guard let count = Int(countText), count >= 0 else { return badRequest("invalid count \(countText)") }
    let etag = "\"bytes-\(count)\""
    var headers = [
      HTTPHeader(name: "Content-Type", value: request.query["contentType"] ?? "application/octet-stream"),
      HTTPHeader(name: "ETag", value: etag),
      HTTPHeader(name: "Accept-Ranges", value: "bytes"),
    ]
    var plan = ResponsePlan(status: 200, body: .pattern(offset: 0, count: count))
    let ifRangeMatches = request.header("If-Range").map { $0 == etag } ?? true
    if let rangeHeader = request.header("Range"), ifRangeMatches {
      switch ByteRange.parse(rangeHeader, length: count) {
      case .none:
        break
      case .unsatisfiable:
        headers.append(HTTPHeader(name: "Content-Range", value: "bytes */\(count)"))
        plan = ResponsePlan(status: 416, body: .empty)
      case .range(let range):
        headers.append(
          HTTPHeader(name: "Content-Range", value: "bytes \(range.lowerBound)-\(range.upperBound)/\(count)"))
        plan = ResponsePlan(
          status: 206, body: .pattern(offset: range.lowerBound, count: range.count))
      }
    }
    plan.headers = headers
    if request.flagParameter("chunked") {
      plan.chunkSize = max(1, request.intParameter("chunkSize", default: 16_384))
    }
    return plan
  }

  private static func echo(_ request: RecordedRequest) -> ResponsePlan {
    var headers = [
      HTTPHeader(name: "Content-Type", value: request.header("Content-Type") ?? "application/octet-stream"),
      HTTPHeader(name: "X-Request-Method", value: request.method),
      HTTPHeader(name: "X-Body-Length", value: String(request.bodyLength)),
      HTTPHeader(name: "X-Body-Checksum", value: request.bodyChecksum),
      HTTPHeader(name: "X-Request-Chunked", value: request.wasChunked ? "1" : "0"),
    ]
    if let length = request.header("Content-Length") {
      headers.append(HTTPHeader(name: "X-Request-Content-Length", value: length))
    }
    return ResponsePlan(status: 200, headers: headers, body: .data(request.body))
  }

  private static func upload(_ request: RecordedRequest) -> ResponsePlan {
    .json(
      .object([
        ("method", .string(request.method)),
        ("length", .integer(request.bodyLength)),
        ("checksum", .string(request.bodyChecksum)),
        ("chunked", .bool(request.wasChunked)),
      ]))
  }

  private static func headers(_ request: RecordedRequest) -> ResponsePlan {
    var headerMembers: [(String, JSONValue)] = []
    for field in request.headers {
      if let index = headerMembers.firstIndex(where: { $0.0.equalsIgnoringASCIICase(field.name) }),
        case .string(let previous) = headerMembers[index].1
      {
        headerMembers[index].1 = .string(previous + ", " + field.value)
      } else {
        headerMembers.append((field.name, .string(field.value)))
      }
    }
    var queryMembers: [(String, JSONValue)] = []
    for item in request.queryItems {
      if let index = queryMembers.firstIndex(where: { $0.0 == item.name }) {
        queryMembers[index].1 = .string(item.value)
      } else {
        queryMembers.append((item.name, .string(item.value)))
      }
    }
    return .json(
      .object([
        ("method", .string(request.method)),
        ("path", .string(request.path)),
        ("query", .object(queryMembers)),
        ("headers", .object(headerMembers)),
      ]))
  }

  private static func delay(_ secondsText: String, _ context: RouteContext) -> ResponseAction {
    guard let seconds = Double(secondsText), seconds >= 0, seconds.isFinite else {
      return .respond(badRequest("invalid delay \(secondsText)"))
    }
    guard context.stopSignal.sleep(seconds: seconds) else { return .closeWithoutResponse }
    return .respond(.text("delayed"))
  }

  private static func drip(_ request: RecordedRequest) -> ResponsePlan {
    let count = max(0, request.intParameter("bytes", default: 10))
    var plan = ResponsePlan(
      status: 200,
      headers: [
        HTTPHeader(name: "Content-Type", value: request.query["contentType"] ?? "application/octet-stream")
      ],
      body: .pattern(offset: 0, count: count))
    plan.pieces = max(1, request.intParameter("chunks", default: min(max(count, 1), 10)))
    plan.pieceInterval = max(0, request.doubleParameter("interval", default: 100)) / 1000
    return plan
  }

  private static func redirectResponse(to location: String, status: Int) -> ResponsePlan {
    .text("redirecting", status: status, headers: [HTTPHeader(name: "Location", value: location)])
  }

  private static func redirect(_ request: RecordedRequest) -> ResponsePlan {
    redirectResponse(to: request.query["to"] ?? "/", status: request.intParameter("status", default: 302))
  }

  private static func redirectChain(
    _ hopsText: String, _ request: RecordedRequest, _ context: RouteContext
  ) -> ResponsePlan {
    guard let hops = Int(hopsText), hops >= 0 else { return badRequest("invalid hop count \(hopsText)") }
    if hops == 0 { return .text("redirect done") }
    var location = "/redirect/\(hops - 1)"
    if let rawQuery = RequestTarget(request.target).rawQuery { location += "?" + rawQuery }
    if request.flagParameter("absolute") {
      location = context.baseURL.absoluteString + location
    }
    return redirectResponse(to: location, status: request.intParameter("status", default: 302))
  }

  private static func cookies(_ request: RecordedRequest) -> ResponsePlan {
    .json(.object([("cookie", .string(request.headerValues("Cookie").joined(separator: "; ")))]))
  }

  private static func setCookie(_ request: RecordedRequest) -> ResponsePlan {
    let cookies = request.queryValues("c").map { HTTPHeader(name: "Set-Cookie", value: $0) }
    if let location = request.query["redirect"] {
      var plan = redirectResponse(to: location, status: request.intParameter("status", default: 302))
      plan.headers += cookies
      return plan
    }
    return .text("cookies set", headers: cookies)
  }

  private static func etag(_ tag: String, _ request: RecordedRequest) -> ResponsePlan {
    let etag = request.flagParameter("weak") ? "W/\"\(tag)\"" : "\"\(tag)\""
    var headers = [HTTPHeader(name: "ETag", value: etag)]
    if let cacheControl = request.query["cacheControl"] {
      headers.append(HTTPHeader(name: "Cache-Control", value: cacheControl))
    }
    let ifNoneMatch = request.headerValues("If-None-Match").joined(separator: ",")
    if EntityTag.list(ifNoneMatch, weaklyMatches: tag) {
      return ResponsePlan(status: 304, headers: headers)
    }
    return .text("etag body \(tag)", headers: headers)
  }

  private static func basicAuth(user: String, password: String, _ request: RecordedRequest) -> ResponsePlan {
    if let credentials = authorization(request, scheme: "Basic"),
      let decoded = Data(base64Encoded: credentials),
      String(decoding: decoded, as: UTF8.self) == "\(user):\(password)"
    {
      return .json(.object([("authenticated", .bool(true)), ("user", .string(user))]))
    }
    return .json(
      .object([("authenticated", .bool(false))]), status: 401,
      headers: [HTTPHeader(name: "WWW-Authenticate", value: "Basic realm=\"test\"")])
  }

  private static func bearer(_ token: String, _ request: RecordedRequest) -> ResponsePlan {
    if authorization(request, scheme: "Bearer") == token {
      return .json(.object([("authenticated", .bool(true)), ("token", .string(token))]))
    }
    return .json(
      .object([("authenticated", .bool(false))]), status: 401,
      headers: [HTTPHeader(name: "WWW-Authenticate", value: "Bearer realm=\"test\"")])
  }

  /// The credentials of the `Authorization` header when it uses `scheme` (case-insensitive).
  private static func authorization(_ request: RecordedRequest, scheme: String) -> String? {
    guard let value = request.header("Authorization"), let space = value.firstIndex(of: " ") else {
      return nil
    }
    guard String(value[..<space]).equalsIgnoringASCIICase(scheme) else { return nil }
    return String(value[value.index(after: space)...]).trimmingHTTPWhitespace()
  }

  private static func retryAfter(_ request: RecordedRequest) -> ResponsePlan {
    errorResponse(request.intParameter("status", default: 503), retryAfter: request.query["after"] ?? "1")
  }

  private static func chunked(_ request: RecordedRequest) -> ResponsePlan {
    let chunks = max(0, request.intParameter("chunks", default: 4))
    let size = max(1, request.intParameter("size", default: 1024))
    var plan = ResponsePlan(
      status: 200,
      headers: [
        HTTPHeader(name: "Content-Type", value: request.query["contentType"] ?? "application/octet-stream")
      ],
      body: .pattern(offset: 0, count: chunks * size))
    plan.chunkSize = size
    return plan
  }

  /// `/truncate`, `/reset`, `/stall`: announce `length`, send `send` bytes, then end as told.
  private static func partialBody(_ request: RecordedRequest, ending: ResponsePlan.Ending) -> ResponsePlan {
    let length = max(1, request.intParameter("length", default: 1024))
    let sent = min(max(0, request.intParameter("send", default: length / 2)), length - 1)
    var plan = ResponsePlan(
      status: 200, headers: [HTTPHeader(name: "Content-Type", value: "application/octet-stream")],
      body: .pattern(offset: 0, count: sent))
    plan.announcedLength = length
    plan.ending = ending
    return plan
  }

  private static func failFirst(_ request: RecordedRequest, _ context: RouteContext) -> ResponseAction {
    let failures = request.intParameter("n", default: 1)
    let attempt = context.nextAttempt(request.query["key"] ?? "")
    let count = max(0, request.intParameter("bytes", default: 16))
    let attemptHeader = HTTPHeader(name: "X-Attempt", value: String(attempt))
    guard attempt <= failures else {
      return .respond(
        ResponsePlan(
          status: 200,
          headers: [HTTPHeader(name: "Content-Type", value: "application/octet-stream"), attemptHeader],
          body: .pattern(offset: 0, count: count)))
    }
    let fault = request.query["fault"]?.lowercased() ?? "status"
    switch fault {
    case "empty":
      return .closeWithoutResponse
    case "reset", "truncate", "stall":
      let length = max(count, 2)
      var plan = ResponsePlan(
        status: 200, headers: [attemptHeader], body: .pattern(offset: 0, count: length / 2))
      plan.announcedLength = length
      plan.ending =
        switch fault {
        case "reset": .reset
        case "stall": .stall
        default: .close
        }
      return .respond(plan)
    default:
      var plan = errorResponse(
        request.intParameter("status", default: 503), retryAfter: request.query["retryAfter"])
      plan.headers.append(attemptHeader)
      return .respond(plan)
    }
  }
}
