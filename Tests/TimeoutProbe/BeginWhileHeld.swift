import FetcherTesting
import Foundation
import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `timeout-probe begin-while-held`: `beginFetch()` returns while the engine is busy. An upload's
/// body stream holds its first read; on the URLSession engine that read holds FoundationNetworking's
/// work queue, which every URLSession of the process shares (checked first: a task of a URLSession
/// of its own cannot even be made meanwhile), so the hold is made in a child process. Then a second
/// fetcher, on a session of its own, begins on another thread: its `beginFetch()` must return while
/// the read is still held. The read is released whatever happened, and both fetches must end well.
///
/// Prints `begin returned while held: <true|false>, upload <body or error>, get <ok or error>` and
/// exits 0, or exits 1 with what it waited for in vain.
enum BeginWhileHeld {
  static func run() {
    guard let server = try? TestServer() else { TimeoutProbe.fail("no test server") }
    let queue = DispatchQueue(label: "begin-while-held")
    let hold = ReadHold()
    let upload = Outcome()
    let uploadDone = DispatchSemaphore(value: 0)
    let uploader = fetcher(server.url("/echo"), queue: queue)
    uploader.request?.httpMethod = "POST"
    uploader.bodyStreamProvider = { HeldStream(hold) }
    uploader.beginFetch { data, error in
      upload.set(error.map { "error \($0)" } ?? String(decoding: data ?? Data(), as: UTF8.self))
      uploadDone.signal()
    }
    guard hold.waitUntilReading(timeout: 20) else { TimeoutProbe.fail("the upload's body was never read") }
    if FetcherEngine.default == .urlSession {
      let made = DispatchSemaphore(value: 0)
      let url = server.url("/bytes/1")
      Thread.detachNewThread {
        _ = URLSession(configuration: .ephemeral).dataTask(with: url)
        made.signal()
      }
      if made.wait(timeout: .now() + 2) == .success {
        hold.release()
        TimeoutProbe.fail("the held read does not hold FoundationNetworking's work queue")
      }
    }

    let get = Outcome()
    let getDone = DispatchSemaphore(value: 0)
    let getter = fetcher(server.url("/bytes/10"), queue: queue)
    // A session of its own: nothing shared with the upload but the engine.
    getter.configuration = .ephemeral
    let returned = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      getter.beginFetch { data, error in
        get.set(
          error.map { "error \($0)" } ?? (data == TestServer.patternBytes(count: 10) ? "ok" : "wrong body"))
        getDone.signal()
      }
      returned.signal()
    }
    // Generous for a loaded machine: a begin that waits for the engine waits until the release.
    let returnedWhileHeld = returned.wait(timeout: .now() + 10) == .success
    hold.release()
    guard returnedWhileHeld || returned.wait(timeout: .now() + 30) == .success else {
      TimeoutProbe.fail("beginFetch never returned after the release")
    }
    guard uploadDone.wait(timeout: .now() + 30) == .success else {
      TimeoutProbe.fail("the upload never ended")
    }
    guard getDone.wait(timeout: .now() + 30) == .success else { TimeoutProbe.fail("the GET never ended") }
    print("begin returned while held: \(returnedWhileHeld), upload \(upload.get()), get \(get.get())")
    TimeoutProbe.finish(0)
  }

  static func fetcher(_ url: URL, queue: DispatchQueue) -> SessionFetcher {
    let fetcher = SessionFetcher(request: URLRequest(url: url))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = queue
    return fetcher
  }
}
