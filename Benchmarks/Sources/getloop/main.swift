import FetcherService
import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// getloop fetcher|service COUNT URL: COUNT sequential GETs of URL, each started from the completion
// of the one before (as the benchmark's closed loop does), after one warm-up GET.
let arguments = CommandLine.arguments
let mode = arguments[1]
let count = Int(arguments[2])!
let url = URL(string: arguments[3])!
let queue = DispatchQueue(label: "getloop.callbacks")
let service: FetcherService? = mode == "service" ? FetcherService() : nil
if let service {
  service.allowLocalhostRequest = true
  service.allowedInsecureSchemes = ["http"]
  service.callbackQueue = queue
}
let done = DispatchSemaphore(value: 0)
final class Counter: @unchecked Sendable {
  var remaining = 0
  var failures = 0
}
let counter = Counter()
counter.remaining = count + 1
@Sendable func issue() {
  let fetcher: SessionFetcher
  if let service {
    fetcher = service.fetcher(url: url)
  } else {
    fetcher = SessionFetcher.fetcher(url: url)
    fetcher.allowLocalhostRequest = true
    fetcher.allowedInsecureSchemes = ["http"]
    fetcher.callbackQueue = queue
  }
  fetcher.beginFetch { data, error in
    if error != nil || fetcher.statusCode != 200 || data?.count != 5 { counter.failures += 1 }
    counter.remaining -= 1
    if counter.remaining == 0 { done.signal() } else { issue() }
  }
}
issue()
done.wait()
print("done \(count) failures \(counter.failures)")
