import FetcherTesting
import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// cookie-bench [COUNT] [jar|wire|raw|all]
//   jar:  SessionCookieStorage alone, COUNT single values, then one joined header
//   wire: a fetch of one response with COUNT Set-Cookie lines from the in-process test server, on
//         the engine SESSIONFETCHER_ENGINE names (urlsession by default), into a jar
//   raw:  the same response through a plain URLSession data task, no fetcher and no jar
// Each line gives wall seconds and the process's CPU seconds (the test server's threads included).

let arguments = Array(CommandLine.arguments.dropFirst())
let count = arguments.first.flatMap { Int($0) } ?? 14_000
let mode = arguments.dropFirst().first ?? "all"
let engineName = ProcessInfo.processInfo.environment["SESSIONFETCHER_ENGINE"] ?? "urlsession"

// Short distinct lines ("Set-Cookie: ax4=1"): libcurl refuses more than 300 KB of response headers.
let values = (0..<count).map { String($0, radix: 36) + "=1" }
let url = URL(string: "http://127.0.0.1:8080/many")!

func cpuSeconds() -> Double {
  var spec = timespec()
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
  return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

func measure(_ label: String, _ body: () -> String) {
  let cpu = cpuSeconds()
  let start = DispatchTime.now().uptimeNanoseconds
  let detail = body()
  let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
  let figures = String(format: "%.3f s wall, %.3f s CPU", wall, cpuSeconds() - cpu)
  print("\(label): \(figures); \(detail)")
}

func unboundedJar() -> SessionCookieStorage {
  let jar = SessionCookieStorage()
  jar.maximumCookieCount = count + 10
  jar.maximumCookiesPerSite = count + 10
  return jar
}

func serve(_ server: TestServer) {
  let headers = values.map { ("Set-Cookie", $0) }
  server.route("/many") { _ in TestResponse(headers: headers, body: Data("ok".utf8)) }
}

if mode == "all" || mode == "jar" {
  let jar = unboundedJar()
  measure("jar, \(count) values, bounds raised") {
    jar.handleSetCookieHeaders(values, for: url)
    return "\(jar.cookies.count) stored"
  }
  let bounded = SessionCookieStorage()
  measure("jar, \(count) values, default bounds") {
    bounded.handleSetCookieHeaders(values, for: url)
    return "\(bounded.cookies.count) stored"
  }
  let joined = values.joined(separator: ", ")
  let response = HTTPURLResponse(
    url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Set-Cookie": joined])!
  let fromResponse = unboundedJar()
  measure("jar, one response with \(count) joined values") {
    fromResponse.handleResponse(response, for: url)
    return "\(fromResponse.cookies.count) stored"
  }
}

if mode == "all" || mode == "wire" {
  let server = try TestServer()
  serve(server)
  for round in 1...2 {
    let jar = unboundedJar()
    let fetcher = SessionFetcher.fetcher(url: server.url("/many"))
    fetcher.allowLocalhostRequest = true
    fetcher.cookieStorage = jar
    fetcher.callbackQueue = DispatchQueue(label: "cookie-bench")
    measure("fetch on \(engineName), \(count) lines, round \(round)") {
      let done = DispatchSemaphore(value: 0)
      nonisolated(unsafe) var failure: (any Error)?
      fetcher.beginFetch { _, error in
        failure = error
        done.signal()
      }
      done.wait()
      return failure.map { "error \($0)" } ?? "\(jar.cookies.count) stored"
    }
  }
  server.stop()
}

if mode == "raw" {
  let server = try TestServer()
  serve(server)
  let configuration = URLSessionConfiguration.ephemeral
  configuration.httpCookieAcceptPolicy = .never
  configuration.httpCookieStorage = nil
  configuration.httpShouldSetCookies = false
  configuration.urlCache = nil
  let session = URLSession(configuration: configuration)
  for round in 1...2 {
    measure("raw URLSession data task, \(count) lines, round \(round)") {
      let done = DispatchSemaphore(value: 0)
      nonisolated(unsafe) var status = 0
      session.dataTask(with: server.url("/many")) { _, response, _ in
        status = (response as? HTTPURLResponse)?.statusCode ?? 0
        done.signal()
      }.resume()
      done.wait()
      return "status \(status)"
    }
  }
  server.stop()
}
