#if LIBCURL_ENGINE
  import CCurl

  /// The easy handles of one ``CurlLoop`` kept between transfers (loop thread only).
  ///
  /// A handle whose transfer is over is reset (`curl_easy_reset`: every option back to its
  /// default, as a new handle has them) and kept for the next transfer, instead of freed and made
  /// again: `curl_easy_init` and `curl_easy_cleanup` cost about 14,000 instructions per request
  /// (a handle's state is several kilobytes, zeroed and set up each time). libcurl keeps what a
  /// reset leaves by design, its TLS session cache among it: a later connection to the same host
  /// with the same TLS settings may resume a session (libcurl matches the settings before it
  /// does). At most ``capacity`` handles are kept; the rest are freed.
  final class CurlEasyPool {
    private var handles: [UnsafeMutableRawPointer] = []
    /// The most handles kept.
    let capacity: Int

    init(capacity: Int) {
      self.capacity = capacity
    }

    /// A kept handle, reset, or a new one; nil when libcurl cannot make one.
    func take() -> UnsafeMutableRawPointer? {
      handles.popLast() ?? ccurl_easy_init()
    }

    /// Takes back a handle no multi handle holds any more: reset and kept, or freed.
    func give(_ easy: UnsafeMutableRawPointer) {
      guard handles.count < capacity else {
        ccurl_easy_cleanup(easy)
        return
      }
      ccurl_easy_reset(easy)
      handles.append(easy)
    }

    /// Frees every kept handle (the loop is ending).
    func drain() {
      for easy in handles { ccurl_easy_cleanup(easy) }
      handles = []
    }

    deinit { drain() }
  }
#endif
