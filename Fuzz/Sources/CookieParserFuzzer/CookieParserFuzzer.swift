// libFuzzer target for the Set-Cookie parser and the cookie jar.
//
// Run: `Fuzz/run.sh 60 CookieParserFuzzer` (seeds in Fuzz/Corpus/CookieParser; see Fuzz/README.md).
// Build flags matter: `-Xswiftc -sanitize=fuzzer,address` as one flag. SwiftPM's separate
// `--sanitize=fuzzer --sanitize=address` reach the compiler as two flags, the last one wins, and
// the code is then built without coverage instrumentation (libFuzzer warns "no interesting inputs").
//
// The first input byte picks the URL the header is "received from"; the rest is a joined
// Set-Cookie header value. Beyond not crashing, the target checks the parser's promises and traps
// (a finding) when one is broken.

import Foundation
import SessionFetcher

private let fuzzURLs: [URL] = [
  "https://www.example.com/docs/page",
  "http://www.example.com/",
  "https://example.co.uk/a/b/c",
  "http://127.0.0.1:8080/path",
  "http://[::1]:9090/",
  "http://localhost/",
  "https://co.uk/",
  "https://someone.github.io/repo/",
].map { URL(string: $0)! }

private let parseDate = Date(timeIntervalSince1970: 1_622_505_600)

@_cdecl("LLVMFuzzerTestOneInput")
public func cookieParserFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  guard let selector = bytes.first else { return 0 }
  let url = fuzzURLs[Int(selector) % fuzzURLs.count]
  let joined = String(decoding: bytes.dropFirst(), as: UTF8.self)

  let pieces = SetCookieParser.splitJoinedHeader(joined)
  for piece in pieces {
    precondition(!piece.isEmpty, "splitJoinedHeader returned an empty piece")
    guard let cookie = SetCookieParser.parse(piece, from: url, now: parseDate) else { continue }
    checkInvariants(cookie, from: url, now: parseDate)
  }
  // The whole string as one header must not crash either.
  if let cookie = SetCookieParser.parse(joined, from: url, now: parseDate) {
    checkInvariants(cookie, from: url, now: parseDate)
  }

  // Through the jar: what it stores and sends must stay well-formed.
  let storage = SessionCookieStorage()
  storage.handleSetCookieHeaders(pieces, for: url)
  let storedAt = Date()
  for cookie in storage.cookies {
    checkInvariants(cookie, from: url, now: storedAt.addingTimeInterval(60))
    precondition(!cookie.isExpired(at: storedAt.addingTimeInterval(-60)), "expired cookie kept")
  }
  if let header = storage.cookieHeaderValue(for: url) {
    precondition(
      !header.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }, "CR, LF or NUL in Cookie header")
  }
  return 0
}

/// `now` is the parse time, or a bit after it: expiries may not lie beyond it plus the cap.
private func checkInvariants(_ cookie: SessionCookie, from url: URL, now: Date) {
  let nameAndValue = cookie.name + cookie.value
  precondition(!nameAndValue.isEmpty, "cookie with empty name and value")
  precondition(nameAndValue.utf8.count <= SetCookieParser.maximumNameValueBytes, "oversized cookie")
  precondition(
    !nameAndValue.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }, "control character in cookie")
  let isWhitespace: (UInt8?) -> Bool = { $0 == 0x20 || $0 == 0x09 }
  precondition(
    !isWhitespace(cookie.name.utf8.first) && !isWhitespace(cookie.name.utf8.last), "untrimmed name")
  precondition(
    !isWhitespace(cookie.value.utf8.first) && !isWhitespace(cookie.value.utf8.last), "untrimmed value")
  // Byte checks, as the parser's: "/" followed by a combining mark is one Character.
  precondition(cookie.path.utf8.first == UInt8(ascii: "/"), "path without a leading slash")
  precondition(
    !cookie.domain.isEmpty && cookie.domain.utf8.first != UInt8(ascii: "."), "bad domain \(cookie.domain)")
  if let expiry = cookie.expiresDate {
    precondition(expiry <= now.addingTimeInterval(SetCookieParser.maximumLifetime), "expiry beyond the cap")
  }
  if cookie.isSecure {
    precondition(url.scheme == "https", "Secure cookie from http")
  }
  // The cookie must belong to the host that set it.
  var host = url.host(percentEncoded: false)!.lowercased()
  if host.hasPrefix("[") { host = String(host.dropFirst().dropLast()) }
  if cookie.isHostOnly {
    precondition(cookie.domain == host, "host-only cookie for \(cookie.domain) from \(host)")
  } else {
    precondition(
      host == cookie.domain || host.hasSuffix("." + cookie.domain), "foreign domain \(cookie.domain)")
    precondition(cookie.domain.contains("."), "single-label domain cookie \(cookie.domain)")
    precondition(!SetCookieParser.knownPublicSuffixes.contains(cookie.domain), "public-suffix cookie")
  }
}
