import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What one exchange on a ``ScriptedEngine`` answers: a list of steps the engine performs in order.
///
/// The engine performs the steps one after the other on its event queue, and stops where the
/// script says to wait: at a ``ScriptedGate`` the test has not opened, at ``Step/stall``, or while
/// the fetcher has paused the exchange (it resumes from the next step). When the steps run out
/// after a head, the exchange completes successfully.
///
/// ```swift
/// // A 503 with Retry-After, then the body in two chunks with a pause the test ends.
/// let release = ScriptedGate()
/// engine.respond(
///   to: "/items",
///   with: .response(status: 503, headers: ["Retry-After": "0"]),
///   ScriptedExchange([
///     .head(status: 200), .body(Data("first ".utf8)), .wait(release), .body(Data("second".utf8)),
///   ]))
/// ```
public struct ScriptedExchange: Sendable {
  /// One step of an exchange.
  public enum Step: Sendable {
    /// The response head. A 3xx with a `Location` is first offered to the fetcher as a redirect
    /// (which it refuses, and then follows itself, as on the real engines); a 401 with
    /// `WWW-Authenticate` or a 407 with `Proxy-Authenticate` is first presented as an
    /// authentication challenge. If the fetcher answers a challenge with a credential, the head is
    /// not handed over: the engine sends again within the exchange, and the next steps answer that.
    case head(status: Int, headers: [String: String] = [:])
    /// A chunk of the response body (after a head).
    case body(Data)
    /// Waits until the test opens `gate`; the exchange performs no step meanwhile.
    case wait(ScriptedGate)
    /// Ends the exchange with `error` (a `URLError` as the real engines report, or any other).
    case fail(any Error)
    /// Answers nothing more, ever: only a cancellation (the fetcher's timeout, a stop) ends the
    /// exchange.
    case stall
  }

  /// The steps, in the order the engine performs them.
  public var steps: [Step]

  /// An exchange of `steps`.
  public init(_ steps: [Step]) {
    self.steps = steps
  }

  /// A complete response: its head, then `body` (nothing when empty).
  public static func response(status: Int = 200, headers: [String: String] = [:], body: Data = Data())
    -> ScriptedExchange
  {
    ScriptedExchange([.head(status: status, headers: headers)] + (body.isEmpty ? [] : [.body(body)]))
  }

  /// A response whose body comes in `chunks`, each a step of its own.
  public static func response(status: Int = 200, headers: [String: String] = [:], chunks: [Data])
    -> ScriptedExchange
  {
    ScriptedExchange([.head(status: status, headers: headers)] + chunks.map { .body($0) })
  }

  /// A redirect to `location` (absolute, or relative to the request's URL) with `status`.
  public static func redirect(to location: String, status: Int = 302, headers: [String: String] = [:])
    -> ScriptedExchange
  {
    var headers = headers
    headers["Location"] = location
    return .response(status: status, headers: headers, body: Data("redirecting".utf8))
  }

  /// A 401 whose `WWW-Authenticate` is `authenticate` (or, with `proxy`, a 407 whose
  /// `Proxy-Authenticate` is).
  public static func challenge(
    _ authenticate: String = #"Basic realm="scripted""#, proxy: Bool = false, body: Data = Data()
  ) -> ScriptedExchange {
    .response(
      status: proxy ? 407 : 401, headers: [proxy ? "Proxy-Authenticate" : "WWW-Authenticate": authenticate],
      body: body)
  }

  /// An exchange that fails with `error` before any head (a refused or reset connection).
  public static func failure(_ error: any Error) -> ScriptedExchange {
    ScriptedExchange([.fail(error)])
  }

  /// A connection that never answers: only the fetcher's own timeout, or a stop, ends it.
  public static let stall = ScriptedExchange([.stall])
}

/// An error of a ``ScriptedEngine`` exchange whose script cannot be performed, reported to the
/// fetcher as the exchange's error.
public enum ScriptedEngineError: Error, Equatable, CustomStringConvertible {
  /// No exchange was scripted for the request (neither by URL nor in order).
  case noScript(method: String, url: String)
  /// A ``ScriptedExchange/Step/body(_:)`` came before any head.
  case bodyBeforeHead
  /// The steps ran out before any head.
  case endedBeforeHead

  /// What cannot be performed, for a test's failure message.
  public var description: String {
    switch self {
    case .noScript(let method, let url): return "no scripted exchange for \(method) \(url)"
    case .bodyBeforeHead: return "the script has a body chunk before its head"
    case .endedBeforeHead: return "the script ended before any head"
    }
  }
}
