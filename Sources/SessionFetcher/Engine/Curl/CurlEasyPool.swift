#if LIBCURL_ENGINE
  import CCurl

  /// The easy handles of one ``CurlLoop`` kept between transfers (loop thread only).
  ///
  /// A handle whose transfer is over is kept for the next transfer, instead of freed and made
  /// again: `curl_easy_init` and `curl_easy_cleanup` zero and set up several kilobytes each time.
  /// libcurl keeps what a handle holds across transfers by design, its TLS session cache among it: a
  /// later connection to the same host with the same TLS settings may resume a session (libcurl
  /// matches the settings before it does). At most ``capacity`` handles are kept; the rest are freed.
  ///
  /// A handle whose transfer set only what every plain exchange sets (``CurlKeptSetup``) is kept as
  /// it is, and the next transfer sets only what differs; any other is reset (`curl_easy_reset`:
  /// every option back to its default, as a new handle has them), so that nothing of one exchange
  /// (a method, a body, a proxy, a credential, TLS settings) reaches another.
  final class CurlEasyPool {
    private var handles: [(easy: UnsafeMutableRawPointer, setup: CurlKeptSetup?)] = []
    /// The most handles kept.
    let capacity: Int

    init(capacity: Int) {
      self.capacity = capacity
    }

    /// A kept handle with what its last transfer left set (nil: every option at its default), or a
    /// new one; nil when libcurl cannot make one.
    func take() -> (easy: UnsafeMutableRawPointer, setup: CurlKeptSetup?)? {
      if let kept = handles.popLast() { return kept }
      return ccurl_easy_init().map { (easy: $0, setup: nil) }
    }

    /// Takes back a handle no multi handle holds any more: kept with `setup` (reset when nil), or
    /// freed.
    func give(_ easy: UnsafeMutableRawPointer, keeping setup: CurlKeptSetup?) {
      guard handles.count < capacity else {
        ccurl_easy_cleanup(easy)
        return
      }
      if setup == nil {
        ccurl_easy_reset(easy)
      } else {
        // The header list and the error buffer were the ended transfer's, freed with it.
        ccurl_easy_setopt_slist(easy, CCURLOPT_HTTPHEADER, nil)
        ccurl_easy_setopt_ptr(easy, CCURLOPT_ERRORBUFFER, nil)
      }
      handles.append((easy: easy, setup: setup))
    }

    /// Frees every kept handle (the loop is ending).
    func drain() {
      for handle in handles { ccurl_easy_cleanup(handle.easy) }
      handles = []
    }

    deinit { drain() }
  }

  /// What a handle kept without a reset still has set, besides the options every transfer sets the
  /// same way: those of a plain exchange (a `GET` without a body, proxy, Unix socket, credential or
  /// TLS settings of its own, on a connection that may be kept) that may differ between transfers.
  struct CurlKeptSetup: Equatable {
    var httpVersion: Int
    var pipeWait: Bool
    var acceptEncoding: String
  }
#endif
