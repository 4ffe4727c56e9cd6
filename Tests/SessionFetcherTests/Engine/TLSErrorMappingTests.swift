import Foundation
import Testing

@testable import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// TLS failures as Apple's `URLError` codes, from libcurl's codes and texts (libcurl engine) and
/// from FoundationNetworking's `-1` errors (URLSession engine). The texts are libcurl 7.88 and
/// OpenSSL 3.0's.
@Suite("TLS error mapping")
struct TLSErrorMappingTests {
  @Test(
    arguments: [
      (
        60, "SSL certificate problem: unable to get local issuer certificate",
        .serverCertificateHasUnknownRoot
      ),
      (60, "SSL certificate problem: self-signed certificate", .serverCertificateHasUnknownRoot),
      (
        60, "SSL certificate problem: self signed certificate in certificate chain",
        .serverCertificateHasUnknownRoot
      ),
      (60, "SSL certificate problem: certificate has expired", .serverCertificateHasBadDate),
      (60, "SSL certificate problem: certificate is not yet valid", .serverCertificateHasBadDate),
      (
        60, "SSL: no alternative certificate subject name matches target host name '127.0.0.1'",
        .serverCertificateUntrusted
      ),
      (60, "SSL peer certificate or SSH remote key was not OK", .serverCertificateUntrusted),
      (90, "SSL: public key does not match pinned public key", .serverCertificateUntrusted),
      (83, "SSL: issuer check failed", .serverCertificateUntrusted),
      (
        56, "OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0",
        .clientCertificateRequired
      ),
      (
        35, "OpenSSL/3.0.19: error:0A000410:SSL routines::sslv3 alert handshake failure",
        .secureConnectionFailed
      ),
      (
        35, "OpenSSL/3.0.19: error:0A00042E:SSL routines::tlsv1 alert protocol version",
        .secureConnectionFailed
      ),
      (35, "OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection to 127.0.0.1:8443", .networkConnectionLost),
      (
        35, "OpenSSL SSL_connect: Connection reset by peer in connection to 127.0.0.1:8443",
        .networkConnectionLost
      ),
      (59, "failed setting cipher list: NOPE", .secureConnectionFailed),
      (58, "could not load PEM client certificate", .clientCertificateRejected),
    ] as [(Int32, String, URLError.Code)])
  func libcurlCodes(code: Int32, message: String, expected: URLError.Code) {
    #expect(TLSErrorMapping.code(curlCode: code, message: message) == expected)
  }

  @Test(
    arguments: [
      (7, "Failed to connect to 127.0.0.1 port 1: Connection refused"),
      (56, "Recv failure: Connection reset by peer"),
      (18, "transfer closed with 100 bytes remaining to read"),
      (28, "Operation timed out after 1000 milliseconds"),
    ] as [(Int32, String)])
  func otherLibcurlCodesAreNotTLS(code: Int32, message: String) {
    #expect(TLSErrorMapping.code(curlCode: code, message: message) == nil)
  }

  static func foundationError(_ text: String, code: URLError.Code = .unknown) -> URLError {
    URLError(
      code,
      userInfo: [
        NSLocalizedDescriptionKey: text, NSURLErrorFailingURLErrorKey: URL(string: "https://127.0.0.1/")!,
      ])
  }

  @Test(
    arguments: [
      (
        "SSL certificate problem: unable to get local issuer certificate",
        URLError.Code.serverCertificateHasUnknownRoot
      ),
      ("SSL certificate problem: certificate has expired", .serverCertificateHasBadDate),
      (
        "SSL: no alternative certificate subject name matches target host name 'localhost'",
        .serverCertificateUntrusted
      ),
      ("SSL: public key does not match pinned public key", .serverCertificateUntrusted),
      (
        "OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0",
        .clientCertificateRequired
      ),
      ("OpenSSL/3.0.19: error:0A00010B:SSL routines::wrong version number", .secureConnectionFailed),
      ("OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection to 127.0.0.1:8443", .networkConnectionLost),
    ] as [(String, URLError.Code)])
  func foundationNetworkingTexts(text: String, expected: URLError.Code) {
    let mapped = TLSErrorMapping.fromFoundationNetworking(Self.foundationError(text))
    #expect(mapped?.code == expected)
    // The library's text and the URL stay in the error.
    #expect(mapped?.userInfo[NSLocalizedDescriptionKey] as? String == text)
    #expect(mapped?.failingURL == URL(string: "https://127.0.0.1/"))
  }

  @Test func otherFoundationNetworkingErrorsPassUnchanged() {
    #expect(
      TLSErrorMapping.fromFoundationNetworking(Self.foundationError("transfer closed with 5 bytes remaining"))
        == nil)
    #expect(
      TLSErrorMapping.fromFoundationNetworking(
        Self.foundationError("SSL certificate problem", code: .timedOut)) == nil)
  }
}
