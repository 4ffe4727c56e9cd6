import Foundation
import SessionFetcher

/// `demo URL`: one GET of a real URL, printing its status, headers and body size.
enum URLFetch {
  static func run(url: URL, allowsInsecureHTTP: Bool) async throws {
    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.callbackQueue = DispatchQueue(label: "SessionFetcherDemo.fetch")
    if allowsInsecureHTTP { fetcher.allowedInsecureSchemes = ["http"] }
    fetcher.resourceTimeoutInterval = 60

    Console.say("GET \(url.absoluteString)")
    let body: Data
    do {
      body = try await fetcher.beginFetch()
    } catch let error as SessionFetcherError {
      guard let status = error.statusCode else {
        throw DemoFailure("could not fetch \(url.absoluteString): \(Format.error(error))")
      }
      printResponse(of: fetcher, bodySize: error.data?.count ?? 0)
      throw DemoFailure("the server answered HTTP \(status)")
    } catch {
      throw DemoFailure("could not fetch \(url.absoluteString): \(Format.error(error))")
    }
    printResponse(of: fetcher, bodySize: body.count)
  }

  private static func printResponse(of fetcher: SessionFetcher, bodySize: Int) {
    let status = fetcher.statusCode
    Console.say(
      "HTTP \(status) \(HTTPURLResponse.localizedString(forStatusCode: status)) "
        + "in \(Format.seconds(fetcher.timing.duration ?? 0))")
    if let finalURL = fetcher.response?.url, finalURL != fetcher.request?.url {
      Console.say("final URL: \(finalURL.absoluteString)")
    }
    let headers = (fetcher.responseHeaders ?? [:]).sorted { $0.key.lowercased() < $1.key.lowercased() }
    for (name, value) in headers {
      Console.say("\(name): \(value)")
    }
    Console.say("body: \(bodySize) bytes (\(Format.bytes(Int64(bodySize))))")
  }
}
