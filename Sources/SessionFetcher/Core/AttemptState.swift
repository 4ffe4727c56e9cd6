import Foundation

/// What spans the hops of one attempt: its start, the redirects it followed and the server
/// challenges it answered.
///
/// It exists only while the fetcher is ``FetcherLifecycle/State/running(_:)``, as the running
/// exchange's ``HopState/attempt``: starting an attempt makes a fresh one, each hop of the attempt
/// hands it on, and leaving `running` drops it, so no count of one attempt can reach the next (the
/// redirect limit and the challenge resends are per attempt).
///
/// A class, touched only under the fetcher's lock, for the same reason as ``HopState``: a change (a
/// redirect counted, a challenge answered) is made in place, without copying the payload out of the
/// state and back. It rides on the exchange rather than beside it in the state's payload: a second
/// reference there was copied, retained and released with every read of the exchange.
final class AttemptState {
  /// When the attempt began: the resource timeout runs from here.
  let start: Date
  /// Redirects followed so far (see `RedirectPolicy.limit(followed:maximum:)`).
  var redirects = 0
  /// The server challenges of the attempt (see `SessionFetcher+Challenges.swift`).
  var challenges = ChallengeState()

  init(start: Date) {
    self.start = start
  }
}
