#if FOUNDATION_NETWORKING
  import CCurl
  import Foundation

  /// Stops and restarts the reading of a running FoundationNetworking task's response, through the
  /// libcurl handle inside it, which is all FoundationNetworking has no API for.
  ///
  /// `URLSessionTask.suspend()` removes the transfer from libcurl, which closes the connection, and
  /// `resume()` sends the request again (see ``URLSessionEngineSession/pausing``). A response that
  /// cannot be continued with a Range request (an event stream, a chunked or compressed body) would
  /// then be buffered as fast as the server sends, however slow its consumer. libcurl itself can pause
  /// a transfer (`curl_easy_pause`): it stops reading the socket, TCP makes the server wait, and
  /// nothing is lost.
  ///
  /// The handle is found by reflection of FoundationNetworking's own objects (`Mirror`): the
  /// URLSession's multi handle (`multiHandle`), its queue (`queue`: every libcurl call of the
  /// session runs on it, so the pause does too), its running easy handles (`easyHandles`), and for
  /// each the task it moves (`delegate._task`) and its libcurl handle (`rawHandle`). The libcurl
  /// library is the one FoundationNetworking loaded (`dlopen` of the same name returns it). If any
  /// of these is not where swift-corelibs-foundation 6.x keeps it, a pause does nothing: the response
  /// is buffered as fast as it comes, as it was before.
  ///
  /// FoundationNetworking's own timer for the request's `timeoutInterval` (restarted on every chunk)
  /// would end a paused transfer: a pause moves it out of reach (`DispatchSourceTimer.schedule`) and
  /// a resume starts it again. The fetcher's own idle timeout is off while paused, as on every engine.
  enum ResponseReadPause {
    /// `curl_easy_pause`'s bits (curl.h).
    private static let pauseReceive: Int32 = 1
    private static let continueAll: Int32 = 0

    /// Whether libcurl can be called here (FoundationNetworking's objects are looked for at each
    /// pause).
    static var isAvailable: Bool { ccurl_load() == 0 }

    /// Stops reading `task`'s response, if it is running on `session` (else nothing happens: not
    /// started, ended, or not found). Returns at once: the pause is made on `session`'s libcurl
    /// queue, in the order asked.
    static func pause(_ task: URLSessionTask, in session: URLSession) {
      change(task, in: session, pause: true)
    }

    /// Goes on reading `task`'s response after ``pause(_:in:)``.
    static func resume(_ task: URLSessionTask, in session: URLSession) {
      change(task, in: session, pause: false)
    }

    private static func change(_ task: URLSessionTask, in session: URLSession, pause: Bool) {
      guard ccurl_load() == 0, let multi = multiHandle(of: session) else { return }
      let found = Found(task: task, multiHandle: multi.handle)
      multi.queue.async {
        // On the multi handle's queue: its list of easy handles, their timers and libcurl's state
        // change only here.
        guard let easy = easyHandle(of: found.task, in: found.multiHandle),
          let raw = FoundationNetworkingMirror.child(easy, "rawHandle") as? UnsafeMutableRawPointer
        else { return }
        let timer = timeoutTimer(of: easy)
        if pause {
          guard ccurl_easy_pause(raw, pauseReceive) == 0 else { return }
          timer?.source.schedule(deadline: .distantFuture)
        } else {
          if let timer { timer.source.schedule(deadline: .now() + .milliseconds(timer.milliseconds)) }
          // libcurl may hand over what it holds, and FoundationNetworking deliver it, in this call:
          // on this queue, as for any other chunk.
          _ = ccurl_easy_pause(raw, continueAll)
        }
      }
    }

    /// The URLSession's `_MultiHandle` and its queue.
    private static func multiHandle(of session: URLSession) -> (handle: AnyObject, queue: DispatchQueue)? {
      guard
        let handle = FoundationNetworkingMirror.child(session, "multiHandle").flatMap({ $0 as AnyObject? }),
        let queue = FoundationNetworkingMirror.child(handle, "queue") as? DispatchQueue,
        FoundationNetworkingMirror.child(handle, "easyHandles") != nil
      else { return nil }
      return (handle, queue)
    }

    /// The running `_EasyHandle` that moves `task`, on the multi handle's queue.
    private static func easyHandle(of task: URLSessionTask, in multi: AnyObject) -> Any? {
      guard let handles = FoundationNetworkingMirror.child(multi, "easyHandles") else { return nil }
      for easy in Mirror(reflecting: handles).children.map(\.value) {
        guard
          let delegate = FoundationNetworkingMirror.unwrapped(
            FoundationNetworkingMirror.child(easy, "delegate")),
          let owner = FoundationNetworkingMirror.unwrapped(
            FoundationNetworkingMirror.child(delegate, "_task")) as? URLSessionTask
        else { continue }
        if owner === task { return easy }
      }
      return nil
    }

    /// The easy handle's request timer (`_TimeoutSource`): its dispatch timer and interval.
    private static func timeoutTimer(of easy: Any) -> (source: any DispatchSourceTimer, milliseconds: Int)? {
      guard
        let timer = FoundationNetworkingMirror.unwrapped(
          FoundationNetworkingMirror.child(easy, "timeoutTimer")),
        let source = FoundationNetworkingMirror.child(timer, "rawSource") as? any DispatchSourceTimer,
        let milliseconds = FoundationNetworkingMirror.child(timer, "milliseconds") as? Int
      else { return nil }
      return (source, milliseconds)
    }

    /// What a pause hands to the multi handle's queue, where FoundationNetworking's objects are
    /// touched.
    private struct Found: @unchecked Sendable {
      let task: URLSessionTask
      let multiHandle: AnyObject
    }
  }
#endif
