import Foundation

/// Checks ``TLSSettings`` when a fetch begins, before any traffic: files readable and holding the
/// PEM they should, pins well formed, something left to trust.
enum TLSValidation {
  /// The kinds of PEM block the settings' files hold.
  enum PEMKind: Equatable {
    case certificate
    case privateKey(encrypted: Bool)
    case other
  }

  /// The PEM blocks of `text` whose base64 decodes, by kind, in order; nil when a block is
  /// malformed (no end line, or a body that is not base64).
  static func pemBlocks(_ text: String) -> [PEMKind]? {
    pemBlocks(bytes: Array(text.utf8))
  }

  /// ``pemBlocks(_:)`` on the file's bytes (PEM is ASCII; it runs at every fetch that names files,
  /// so it works on bytes, not on `Character`s).
  static func pemBlocks(bytes: [UInt8]) -> [PEMKind]? {
    var kinds: [PEMKind] = []
    var label: ArraySlice<UInt8>?
    var body: [UInt8] = []
    var headers = false
    let begin = Array("-----BEGIN ".utf8)
    let dashes = Array("-----".utf8)
    var lineStart = 0
    while lineStart <= bytes.count {
      var lineEnd = lineStart
      while lineEnd < bytes.count, bytes[lineEnd] != 0x0A, bytes[lineEnd] != 0x0D { lineEnd += 1 }
      var first = lineStart
      var last = lineEnd
      while first < last, bytes[first] == 0x20 || bytes[first] == 0x09 { first += 1 }
      while last > first, bytes[last - 1] == 0x20 || bytes[last - 1] == 0x09 { last -= 1 }
      let line = bytes[first..<last]
      lineStart = lineEnd + 1
      if let current = label {
        if line.starts(with: "-----END ".utf8), line.count == current.count + 14,
          line.dropFirst(9).prefix(current.count).elementsEqual(current), line.suffix(5).elementsEqual(dashes)
        {
          guard !body.isEmpty, Data(base64Encoded: Data(body)) != nil else { return nil }
          kinds.append(kind(of: String(decoding: current, as: UTF8.self), encryptedHeader: headers))
          label = nil
        } else if line.starts(with: dashes) {
          return nil
        } else if line.contains(UInt8(ascii: ":")) {
          // RFC 1421 headers of a legacy encrypted key (`Proc-Type: 4,ENCRYPTED`, `DEK-Info`).
          if String(decoding: line, as: UTF8.self).uppercased().contains("ENCRYPTED") { headers = true }
        } else {
          body.append(contentsOf: line)
        }
      } else if line.starts(with: begin), line.count > 16, line.suffix(5).elementsEqual(dashes) {
        label = line.dropFirst(11).dropLast(5)
        body.removeAll(keepingCapacity: true)
        headers = false
      }
    }
    return label == nil ? kinds : nil
  }

  private static func kind(of label: String, encryptedHeader: Bool) -> PEMKind {
    switch label {
    case "CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CERTIFICATE":
      return .certificate
    case "ENCRYPTED PRIVATE KEY":
      return .privateKey(encrypted: true)
    case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY":
      return .privateKey(encrypted: encryptedHeader)
    default:
      return .other
    }
  }

  /// Whether `pin` is `sha256//` and the base64 of 32 bytes (several pins may be joined with `;`
  /// in libcurl's syntax; here each is one).
  static func isWellFormedPin(_ pin: String) -> Bool {
    guard pin.hasPrefix("sha256//") else { return false }
    return Data(base64Encoded: String(pin.dropFirst(8)))?.count == 32
  }

  /// Throws ``SessionFetcherError/invalidTLSSettings(_:)`` for the first problem found.
  static func check(_ settings: TLSSettings) throws {
    func fail(_ text: String) -> SessionFetcherError { .invalidTLSSettings(text) }
    func blocks(_ url: URL, _ role: String) throws -> [PEMKind] {
      guard url.isFileURL, let data = FileManager.default.contents(atPath: url.path) else {
        throw fail("\(role) \(url.path) is missing or unreadable")
      }
      guard let kinds = pemBlocks(bytes: Array(data)), !kinds.isEmpty else {
        throw fail("\(role) \(url.path) is not PEM")
      }
      return kinds
    }
    if !settings.trustsSystemRoots && settings.additionalTrustRoots.isEmpty {
      throw fail("trustsSystemRoots is false and additionalTrustRoots is empty: nothing would be trusted")
    }
    for root in settings.additionalTrustRoots
    where !(try blocks(root, "additionalTrustRoots file")).contains(.certificate) {
      throw fail("additionalTrustRoots file \(root.path) holds no PEM certificate")
    }
    if settings.clientKey != nil && settings.clientCertificate == nil {
      throw fail("clientKey is set without clientCertificate")
    }
    if let certificate = settings.clientCertificate {
      let certificateKinds = try blocks(certificate, "clientCertificate file")
      guard certificateKinds.contains(.certificate) else {
        throw fail("clientCertificate file \(certificate.path) holds no PEM certificate")
      }
      let keyURL = settings.clientKey ?? certificate
      let keyKinds = settings.clientKey == nil ? certificateKinds : try blocks(keyURL, "clientKey file")
      let keys = keyKinds.compactMap { kind -> Bool? in
        if case .privateKey(let encrypted) = kind { return encrypted }
        return nil
      }
      guard let encrypted = keys.first else {
        throw fail("clientKey file \(keyURL.path) holds no PEM private key (set clientKey to the key's file)")
      }
      if encrypted && settings.clientKeyPassword == nil {
        throw fail("clientKey file \(keyURL.path) is encrypted and clientKeyPassword is not set")
      }
    }
    if let pin = settings.pinnedPublicKeys.first(where: { !isWellFormedPin($0) }) {
      throw fail(
        "pinnedPublicKeys entry \"\(pin)\" is not sha256// and the base64 of a 32-byte SHA-256 digest")
    }
  }
}
