import FetcherService
import Foundation
import SessionFetcher

// The server: the first argument, such as the demo's local one (`demo --serve` prints its address).
let base = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "https://httpbin.org"

let service = FetcherService()
service.isRetryEnabled = true
service.allowLocalhostRequest = true  // plain http to this machine only; other URLs must be https

// async/await: returns the body; throws SessionFetcherError (an HTTP status, a refused URL) or URLError.
let data = try await service.fetcher(urlString: "\(base)/headers").beginFetch()
print("GET /headers: \(data.count) bytes")

// A final status outside 200–299 is an error that carries the status code and the body.
do {
  _ = try await service.fetcher(urlString: "\(base)/status/404").beginFetch()
} catch let error as SessionFetcherError {
  print("GET /status/404: \(error)")  // HTTP status 404 (not found, …)
}

// Closure form: the completion runs on the fetcher's callbackQueue, the main queue unless you set
// another (free here while this code awaits).
let fetcher = service.fetcher(urlString: "\(base)/bytes/1024")
await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
  fetcher.beginFetch { data, error in
    print("GET /bytes/1024: \(data?.count ?? 0) bytes, error: \(error.map { "\($0)" } ?? "none")")
    done.resume()
  }
}
