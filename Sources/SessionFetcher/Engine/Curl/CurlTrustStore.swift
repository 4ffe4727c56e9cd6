#if canImport(FoundationNetworking)
  import CCurl
  import Foundation

  /// The system's CA bundle as libcurl finds it by default, read once per process, for trust
  /// settings that add roots to it (see `CurlTransfer.applyTLS`).
  enum CurlTrustStore {
    private static let bundle = Locked<Data?>(nil)

    /// The PEM bytes of libcurl's default CA file (`CURLINFO_CAINFO`, 7.84.0), else of the first
    /// of the usual Linux locations that exists; empty when none does.
    static func systemBundle(of easy: UnsafeMutableRawPointer) -> Data {
      if let known = bundle.withLock({ $0 }) { return known }
      var path: UnsafePointer<CChar>?
      var candidates = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem",
      ]
      if ccurl_easy_getinfo_string(easy, CCURLINFO_STRING + 61, &path) == CCURLE_OK, let path {
        candidates.insert(String(cString: path), at: 0)
      }
      var data = Data()
      for candidate in candidates {
        if let contents = FileManager.default.contents(atPath: candidate) {
          data = contents
          data.append(0x0A)
          break
        }
      }
      bundle.withLock { $0 = data }
      return data
    }
  }
#endif
