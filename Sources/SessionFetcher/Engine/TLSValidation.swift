import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Checks ``TLSSettings`` when a fetch begins, before any traffic: files readable and holding the
/// PEM they should, pins well formed, something left to trust.
///
/// A file must be a regular file of at most ``maximumFileSize`` bytes (a directory, a FIFO or a
/// device is refused without being read, so a FIFO cannot hang the fetch), and each certificate or
/// private key block must hold well-formed DER of the right shape, so that a truncated or damaged
/// file fails here, naming it, rather than in the TLS library when the first connection is made.
enum TLSValidation {
  /// The largest TLS file read: 10 MiB (a bundle of every public root is about 200 KiB).
  static let maximumFileSize = 10 * 1024 * 1024

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
  ///
  /// The verdict depends on the bytes alone, and every fetch that names a file checks it again when
  /// it begins: verdicts are remembered by contents (``verdictCacheByteLimit`` bytes of contents at
  /// most), so a fetch whose file still holds what an earlier one checked compares the bytes instead
  /// of decoding them. A file whose contents changed is checked anew. Only contents made of
  /// certificates alone are remembered: a private key's bytes are never kept beyond the check.
  static func pemBlocks(bytes: [UInt8]) -> [PEMKind]? {
    if let known = verdicts.withLock({ $0.kinds[bytes] }) { return known.kinds }
    let kinds = scanPEMBlocks(bytes: bytes)
    let onlyCertificates = kinds.map { !$0.isEmpty && $0.allSatisfy { $0 == .certificate } } ?? false
    if onlyCertificates, bytes.count <= verdictCacheByteLimit {
      verdicts.withLock { cache in
        if cache.bytes + bytes.count > verdictCacheByteLimit {
          cache.kinds.removeAll()
          cache.bytes = 0
        }
        if cache.kinds.updateValue(Verdict(kinds: kinds), forKey: bytes) == nil { cache.bytes += bytes.count }
      }
    }
    return kinds
  }

  /// The most file contents whose verdicts ``pemBlocks(bytes:)`` remembers (1 MiB: a few bundles of
  /// every public root); past it the verdicts are forgotten and gathered again.
  static let verdictCacheByteLimit = 1024 * 1024

  private struct Verdict {
    var kinds: [PEMKind]?
  }

  private struct VerdictCache {
    var kinds: [[UInt8]: Verdict] = [:]
    /// The bytes of contents held as keys.
    var bytes = 0
  }

  private static let verdicts = Locked(VerdictCache())

  /// Whether the verdict on `bytes` is remembered (for tests).
  static func remembersVerdict(on bytes: [UInt8]) -> Bool {
    verdicts.withLock { $0.kinds[bytes] != nil }
  }

  /// ``pemBlocks(bytes:)`` without the remembered verdicts.
  static func scanPEMBlocks(bytes: [UInt8]) -> [PEMKind]? {
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
          guard !body.isEmpty, let der = Data(base64Encoded: Data(body)) else { return nil }
          let kind = kind(of: String(decoding: current, as: UTF8.self), encryptedHeader: headers)
          // A legacy encrypted key's body is ciphertext; every other certificate or key is DER.
          guard headers || isWellFormed(der: Array(der), as: kind) else { return nil }
          kinds.append(kind)
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

  /// Whether `der` holds a well-formed DER encoding of `kind`, a SEQUENCE of the kind's shape
  /// followed only by other well-formed elements (a `TRUSTED CERTIFICATE` carries its trust
  /// settings after it):
  /// - a certificate: SEQUENCE, SEQUENCE, BIT STRING (X.509), the first (TBSCertificate) an
  ///   optional `[0]` version, then INTEGER and six SEQUENCEs (signature algorithm, issuer,
  ///   validity, subject, public key), the second starting with an OBJECT IDENTIFIER;
  /// - a private key: an INTEGER version and more (PKCS #8, PKCS #1, SEC 1, DSA);
  /// - an encrypted private key: SEQUENCE, OCTET STRING (PKCS #8).
  ///
  /// Every constructed element, at any depth, must hold exactly its children: a truncated or cut
  /// body fails. `.other` blocks are not checked.
  static func isWellFormed(der: [UInt8], as kind: PEMKind) -> Bool {
    guard kind != .other else { return true }
    guard let elements = derElements(der[...], depth: 0), let first = elements.first,
      first.tag == 0x30, let children = derElements(first.content, depth: 1)
    else { return false }
    let tags = children.map(\.tag)
    switch kind {
    case .certificate:
      guard tags == [0x30, 0x30, 0x03], let tbs = derElements(children[0].content, depth: 2),
        derElements(children[1].content, depth: 2)?.first?.tag == 0x06
      else { return false }
      let fields = tbs.map(\.tag).drop { $0 == 0xA0 }
      return fields.prefix(6).elementsEqual([0x02, 0x30, 0x30, 0x30, 0x30, 0x30])
    case .privateKey(encrypted: false): return tags.count >= 2 && tags[0] == 0x02
    case .privateKey(encrypted: true): return tags == [0x30, 0x04]
    case .other: return true
    }
  }

  private struct DERElement {
    var tag: UInt8
    var content: ArraySlice<UInt8>
  }

  /// The DER elements that fill `bytes` exactly, with every constructed one checked the same way
  /// down to a depth of 32; nil when anything is malformed or `bytes` is empty.
  private static func derElements(_ bytes: ArraySlice<UInt8>, depth: Int) -> [DERElement]? {
    guard depth < 32, !bytes.isEmpty else { return nil }
    var elements: [DERElement] = []
    var index = bytes.startIndex
    while index < bytes.endIndex {
      let tag = bytes[index]
      index += 1
      // High tag numbers (never in certificates or keys) and indefinite lengths are refused.
      guard tag & 0x1F != 0x1F, index < bytes.endIndex else { return nil }
      var length = Int(bytes[index])
      index += 1
      if length & 0x80 != 0 {
        let count = length & 0x7F
        guard (1...4).contains(count), bytes.endIndex - index >= count else { return nil }
        length = 0
        for _ in 0..<count {
          length = length << 8 | Int(bytes[index])
          index += 1
        }
      }
      guard bytes.endIndex - index >= length else { return nil }
      let content = bytes[index..<index + length]
      index += length
      if tag & 0x20 != 0, !content.isEmpty, derElements(content, depth: depth + 1) == nil { return nil }
      elements.append(DERElement(tag: tag, content: content))
    }
    return elements
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
    func blocks(_ url: URL, path: String?, _ role: String) throws -> [PEMKind] {
      if let path, let known = rememberedVerdict(onFileAt: path) { return known }
      let bytes: [UInt8]
      let stamp: FileStamp?
      switch readStampedFile(url) {
      case .success(let read): (bytes, stamp) = read
      case .failure(let problem): throw fail("\(role) \(url.path) \(problem.text)")
      }
      guard let kinds = pemBlocks(bytes: bytes), !kinds.isEmpty else {
        throw fail("\(role) \(url.path) is not PEM (or holds a damaged certificate or key)")
      }
      if let stamp, let path { remember(kinds, ofFileAt: path, stamp: stamp) }
      return kinds
    }
    if !settings.trustsSystemRoots && settings.additionalTrustRoots.isEmpty {
      throw fail("trustsSystemRoots is false and additionalTrustRoots is empty: nothing would be trusted")
    }
    for (root, path) in zip(settings.additionalTrustRoots, settings.additionalTrustRootPaths)
    where !(try blocks(root, path: path, "additionalTrustRoots file")).contains(.certificate) {
      throw fail("additionalTrustRoots file \(root.path) holds no PEM certificate")
    }
    if settings.clientKey != nil && settings.clientCertificate == nil {
      throw fail("clientKey is set without clientCertificate")
    }
    if let certificate = settings.clientCertificate {
      let certificateKinds = try blocks(
        certificate, path: TLSSettings.filePath(certificate), "clientCertificate file")
      guard certificateKinds.contains(.certificate) else {
        throw fail("clientCertificate file \(certificate.path) holds no PEM certificate")
      }
      let keyURL = settings.clientKey ?? certificate
      let keyKinds =
        settings.clientKey == nil
        ? certificateKinds : try blocks(keyURL, path: TLSSettings.filePath(keyURL), "clientKey file")
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

  /// The verdicts on files by path, with the stamp each file had when read: a fetch whose file still
  /// has that stamp, settled, takes the verdict without opening the file (a `stat` instead of an
  /// open, reads and a pass over the bytes). Verdicts alone are kept, never a file's bytes, so a
  /// key file's verdict is remembered too. At most ``fileVerdictLimit`` paths.
  private static let fileVerdicts = Locked([String: (stamp: FileStamp, kinds: [PEMKind])]())

  /// The most paths whose verdicts are remembered; past it they are forgotten and gathered again.
  static let fileVerdictLimit = 64

  /// The verdict remembered for the file at `path`, if the file still has the stamp it had then,
  /// settled.
  static func rememberedVerdict(onFileAt path: String) -> [PEMKind]? {
    guard let known = fileVerdicts.withLock({ $0[path] }), let stamp = FileStamp(path: path),
      stamp == known.stamp
    else { return nil }
    guard stamp.isSettled else {
      // The clock went back since: the stamp no longer tells every change.
      fileVerdicts.withLock { _ = $0.removeValue(forKey: path) }
      return nil
    }
    return known.kinds
  }

  private static func remember(_ kinds: [PEMKind], ofFileAt path: String, stamp: FileStamp) {
    guard stamp.isSettled else { return }
    fileVerdicts.withLock { verdicts in
      if verdicts.count >= fileVerdictLimit, verdicts[path] == nil { verdicts.removeAll() }
      verdicts[path] = (stamp, kinds)
    }
  }

  /// Why a TLS file could not be read.
  struct ReadProblem: Error, Equatable {
    /// What is wrong, to follow the file's path in a message ("is a directory").
    var text: String
  }

  /// The bytes of the regular file at `url`, at most ``maximumFileSize`` of them. Opened without
  /// blocking, and its type checked on the open descriptor: a FIFO, a device or a directory is
  /// refused without a read (a FIFO would block a plain open or read until a writer came).
  static func readFile(_ url: URL) -> Result<[UInt8], ReadProblem> {
    readStampedFile(url).map(\.bytes)
  }

  /// ``readFile(_:)``, with the file's stamp as the open descriptor gave it (nil when it cannot be
  /// taken).
  static func readStampedFile(_ url: URL) -> Result<(bytes: [UInt8], stamp: FileStamp?), ReadProblem> {
    guard url.isFileURL else { return .failure(ReadProblem(text: "is not a file URL")) }
    let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else {
      return .failure(ReadProblem(text: "is missing or unreadable"))
    }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return .failure(ReadProblem(text: "is unreadable")) }
    switch info.st_mode & S_IFMT {
    case S_IFREG: break
    case S_IFDIR: return .failure(ReadProblem(text: "is a directory, not a file"))
    default: return .failure(ReadProblem(text: "is not a regular file (a FIFO, socket or device)"))
    }
    guard info.st_size <= maximumFileSize else {
      return .failure(ReadProblem(text: "is larger than \(maximumFileSize / 1024 / 1024) MiB"))
    }
    // Read straight into a buffer of the size `fstat` gave (one byte more, to see the end without
    // another read when the size held); it grows only if the file grew since.
    var capacity = Int(info.st_size) + 1
    var bytes: [UInt8] = []
    var failed = false
    while !failed {
      let previous = bytes
      var filled = previous.count
      bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
        guard let base = buffer.baseAddress else { return }
        if filled > 0 {
          previous.withUnsafeBufferPointer { base.initialize(from: $0.baseAddress!, count: filled) }
        }
        while filled < capacity {
          let count = read(descriptor, base + filled, capacity - filled)
          if count < 0 && errno == EINTR { continue }
          if count < 0 { failed = true }
          if count <= 0 { break }
          filled += count
        }
        initialized = filled
      }
      guard !failed else { return .failure(ReadProblem(text: "is unreadable")) }
      // The file may have grown since `fstat`.
      guard bytes.count <= maximumFileSize else {
        return .failure(ReadProblem(text: "is larger than \(maximumFileSize / 1024 / 1024) MiB"))
      }
      if bytes.count < capacity { break }
      capacity = min(capacity * 2, maximumFileSize + 1)
    }
    return .success((bytes, FileStamp(info)))
  }
}
