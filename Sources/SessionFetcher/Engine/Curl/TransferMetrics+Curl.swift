#if LIBCURL_ENGINE
  import CCurl
  import Foundation

  extension TransferMetrics {
    /// What libcurl measured of the transfer on `easy` (after it ended, before it is freed).
    ///
    /// Phases are libcurl's `_TIME_T` values (microseconds from the start); a phase of 0 did not
    /// happen, and none of DNS, connect and TLS happen on a reused connection.
    init(curlEasyHandle easy: UnsafeMutableRawPointer) {
      func long(_ info: Int32) -> Int {
        var value = 0
        return ccurl_easy_getinfo_long(easy, info, &value) == CCURLE_OK ? value : 0
      }
      func offset(_ info: Int32) -> Int64 {
        var value: Int64 = 0
        return ccurl_easy_getinfo_off(easy, info, &value) == CCURLE_OK ? value : 0
      }
      func phase(_ info: Int32) -> TimeInterval? {
        let microseconds = offset(info)
        return microseconds > 0 ? TimeInterval(microseconds) / 1_000_000 : nil
      }
      let reused = long(CCURLINFO_NUM_CONNECTS) == 0
      var address: UnsafePointer<CChar>?
      _ = ccurl_easy_getinfo_string(easy, CCURLINFO_PRIMARY_IP, &address)
      let remoteAddress = address.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
      let port = long(CCURLINFO_PRIMARY_PORT)
      self.init(
        nameLookup: reused ? nil : phase(CCURLINFO_NAMELOOKUP_TIME_T),
        connect: reused ? nil : phase(CCURLINFO_CONNECT_TIME_T),
        secureConnection: reused ? nil : phase(CCURLINFO_APPCONNECT_TIME_T),
        requestStart: phase(CCURLINFO_PRETRANSFER_TIME_T),
        firstByte: phase(CCURLINFO_STARTTRANSFER_TIME_T),
        total: phase(CCURLINFO_TOTAL_TIME_T) ?? 0,
        isReusedConnection: reused,
        httpVersion: Self.httpVersion(curlValue: long(CCURLINFO_HTTP_VERSION)),
        remoteAddress: remoteAddress,
        remotePort: port > 0 ? port : nil,
        requestBytes: Int64(long(CCURLINFO_REQUEST_SIZE)) + offset(CCURLINFO_SIZE_UPLOAD_T),
        responseBytes: Int64(long(CCURLINFO_HEADER_SIZE)) + offset(CCURLINFO_SIZE_DOWNLOAD_T))
    }

    /// `CURLINFO_HTTP_VERSION`'s value as a protocol name.
    static func httpVersion(curlValue: Int) -> String? {
      switch curlValue {
      case Int(CCURL_HTTP_VERSION_1_0): return "HTTP/1.0"
      case Int(CCURL_HTTP_VERSION_1_1): return "HTTP/1.1"
      case Int(CCURL_HTTP_VERSION_2_0): return "HTTP/2"
      case Int(CCURL_HTTP_VERSION_3): return "HTTP/3"
      default: return nil
      }
    }
  }
#endif
