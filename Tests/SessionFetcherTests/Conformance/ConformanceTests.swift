import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// Client-visible HTTP behaviours a peer client's published tests check, as one table run on each
/// real engine against the in-process `TestServer`: each row names the request, the server route
/// and what the caller sees.
@Suite("Conformance")
struct ConformanceTests {
  /// One behaviour: the request, the route that answers it and the expected outcome.
  struct Row: Sendable, CustomStringConvertible {
    var name: String
    var method = "GET"
    var path: String
    var body: Data?
    /// The final status the fetcher reports.
    var status = 200
    /// The body length the caller receives; nil when the row does not check it.
    var bodyCount: Int?
    /// The method the last request reaching the server carries.
    var serverMethod: String?
    /// The body the caller receives equals the body sent.
    var echoesBody = false

    var description: String { name }
  }

  static let payload = TestServer.patternBytes(count: 4096)

  static let rows: [Row] = [
    Row(name: "301 on GET is followed", path: "/redirect?to=/bytes/7&status=301", bodyCount: 7),
    Row(name: "302 on GET is followed", path: "/redirect?to=/bytes/7&status=302", bodyCount: 7),
    Row(name: "303 on GET is followed", path: "/redirect?to=/bytes/7&status=303", bodyCount: 7),
    Row(name: "307 on GET is followed", path: "/redirect?to=/bytes/7&status=307", bodyCount: 7),
    Row(name: "308 on GET is followed", path: "/redirect?to=/bytes/7&status=308", bodyCount: 7),
    Row(name: "relative Location chain of three hops", path: "/redirect/3", serverMethod: "GET"),
    Row(name: "absolute Location chain of three hops", path: "/redirect/3?absolute=1", serverMethod: "GET"),
    Row(
      name: "307 on POST keeps method and body", method: "POST", path: "/redirect?to=/echo&status=307",
      body: payload, serverMethod: "POST", echoesBody: true),
    Row(name: "Content-Length body", path: "/bytes/1000", bodyCount: 1000),
    Row(name: "empty Content-Length body", path: "/bytes/0", bodyCount: 0),
    Row(name: "large body", path: "/bytes/2000000", bodyCount: 2_000_000),
    Row(name: "HEAD with Content-Length has no body", method: "HEAD", path: "/bytes/10", bodyCount: 0),
    Row(name: "POST body is sent", method: "POST", path: "/echo", body: payload, echoesBody: true),
    Row(name: "PUT body is sent", method: "PUT", path: "/echo", body: payload, echoesBody: true),
    Row(name: "404 is an error with its status", path: "/status/404", status: 404),
    Row(name: "500 is an error with its status", path: "/status/500", status: 500),
  ]

  @Test(arguments: rows)
  func behaviour(_ row: Row) async throws {
    let server = try TestServer()
    defer { server.stop() }
    let fetcher = server.fetcher(row.path)
    fetcher.request?.httpMethod = row.method
    if let body = row.body { fetcher.bodyData = body }
    let result = await fetcher.fetchResult(timeout: 60)
    #expect(fetcher.statusCode == row.status)
    if row.status < 300 {
      #expect(result.error == nil)
    } else {
      #expect(result.error != nil)
    }
    if let count = row.bodyCount { #expect(result.data?.count ?? 0 == count) }
    if let method = row.serverMethod { #expect(server.requests.last?.method == method) }
    if row.echoesBody { #expect(result.data == row.body) }
  }
}
