import Foundation

/// TLS failures as the `URLError` codes Apple platforms use, from what libcurl (directly, or under
/// FoundationNetworking, which reports every one of them as `-1`) says about them.
///
/// The verdict comes from libcurl's code and OpenSSL's text together: a TLS 1.3 server that wants a
/// client certificate says so in an alert that arrives after the handshake, as a receive error.
enum TLSErrorMapping {
  /// libcurl's codes that concern TLS.
  enum CurlCode {
    static let sslConnectError: Int32 = 35
    static let sslCertProblem: Int32 = 58
    static let sslCipher: Int32 = 59
    static let peerFailedVerification: Int32 = 60
    static let sslIssuerError: Int32 = 83
    static let sslPinnedPubKeyNotMatch: Int32 = 90
  }

  /// The code for a transfer that failed with libcurl's `code` and `message`, or nil when it is not
  /// a TLS verdict.
  static func code(curlCode code: Int32, message: String) -> URLError.Code? {
    let text = message.lowercased()
    if text.contains("alert certificate required") { return .clientCertificateRequired }
    switch code {
    case CurlCode.sslConnectError where isLostConnection(text):
      // Closed or reset during the handshake: no verdict on the certificate; retried like any
      // other lost connection.
      return .networkConnectionLost
    case CurlCode.peerFailedVerification, CurlCode.sslIssuerError:
      return verdict(text) ?? .serverCertificateUntrusted
    case CurlCode.sslPinnedPubKeyNotMatch:
      return .serverCertificateUntrusted
    case CurlCode.sslConnectError, CurlCode.sslCipher:
      return verdict(text) ?? .secureConnectionFailed
    case CurlCode.sslCertProblem:
      return .clientCertificateRejected
    default:
      return nil
    }
  }

  /// Whether libcurl's text tells of a connection that ended under TLS rather than of a verdict.
  static func isLostConnection(_ text: String) -> Bool {
    text.contains("ssl_error_syscall") || text.contains("unexpected eof") || text.contains("connection reset")
      || text.contains("ssl_read") || text.contains("ssl_write") || text.contains("broken pipe")
  }

  /// The certificate verdict OpenSSL's text names, or nil.
  private static func verdict(_ text: String) -> URLError.Code? {
    if text.contains("expired") || text.contains("not yet valid") { return .serverCertificateHasBadDate }
    if text.contains("unable to get local issuer") || text.contains("unable to get issuer")
      || text.contains("self signed certificate") || text.contains("self-signed certificate")
    {
      return .serverCertificateHasUnknownRoot
    }
    if text.contains("subject name") || text.contains("does not match target host")
      || text.contains("certificate verify failed") || text.contains("pinned public key")
    {
      return .serverCertificateUntrusted
    }
    return nil
  }

  /// FoundationNetworking's `-1` for a TLS failure, with libcurl's text as its description,
  /// as the code Apple platforms use (the text kept); nil for any other error.
  static func fromFoundationNetworking(_ error: URLError) -> URLError? {
    guard error.code == .unknown else { return nil }
    let message = error.userInfo[NSLocalizedDescriptionKey] as? String ?? ""
    let text = message.lowercased()
    let code: URLError.Code?
    if text.contains("alert certificate required") {
      code = .clientCertificateRequired
    } else if isLostConnection(text) {
      code = .networkConnectionLost
    } else if text.hasPrefix("ssl certificate problem") || text.contains("ssl peer certificate")
      || text.contains("no alternative certificate subject name") || text.contains("pinned public key")
    {
      code = verdict(text) ?? .serverCertificateUntrusted
    } else if text.hasPrefix("ssl") || text.contains("openssl") || text.contains("tls") {
      code = verdict(text) ?? .secureConnectionFailed
    } else {
      code = nil
    }
    guard let code else { return nil }
    return URLError(code, userInfo: error.userInfo)
  }
}
