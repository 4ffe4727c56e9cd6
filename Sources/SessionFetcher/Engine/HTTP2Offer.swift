import CCurl

/// Whether a transfer offers HTTP/2 (by ALPN, over TLS), for the engines that run on libcurl.
///
/// libcurl before 8.13.0 can report an HTTP/2 body cut short as complete when the response has no
/// `Content-Length`: a stream the server resets with `NO_ERROR` before its end (fixed in 8.0.0), and
/// a connection its HTTP/2 layer ends on a protocol error, such as DATA on stream 0, an oversized
/// frame or a flow-control overflow (fixed in 8.13.0: libcurl then checks for the session closing as
/// it reads). Nothing a caller of libcurl 7.x can read tells such a body from a whole one, so by
/// default those versions speak HTTP/1.1, whose framing tells a cut chunked body from a whole one.
/// ``TLSSettings/offersHTTP2`` overrides the default.
package enum HTTP2Offer {
  /// The first libcurl release (`LIBCURL_VERSION_NUM`) that reports every HTTP/2 body cut short
  /// as an error.
  package static let reliableLibcurlVersion: UInt32 = 0x08_0D_00

  /// Whether to offer HTTP/2: `setting` when the caller chose, else whether `libcurlVersion` (as
  /// `LIBCURL_VERSION_NUM`, 0 when unknown) reports cut HTTP/2 bodies.
  package static func offers(setting: Bool?, libcurlVersion: UInt32) -> Bool {
    setting ?? (libcurlVersion >= reliableLibcurlVersion)
  }

  /// Whether a transfer offers HTTP/2 when the caller did not choose, with the libcurl this
  /// process loads (none: false).
  package static let offeredByDefault = offers(
    setting: nil, libcurlVersion: ccurl_load() == 0 ? ccurl_version_number() : 0)
}
