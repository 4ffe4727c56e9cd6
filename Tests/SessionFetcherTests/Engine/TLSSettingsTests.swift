import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

/// `TLSSettings`: what is checked at begin, and what the URLSession engine refuses.
@Suite("TLS settings")
struct TLSSettingsTests {
  static let body = Data((0..<48).map { UInt8($0) }).base64EncodedString()
  /// `tag`, the DER length of `content`, and `content`.
  static func der(_ tag: UInt8, _ content: Data) -> Data {
    let count = content.count
    let length = count < 128 ? Data([UInt8(count)]) : Data([0x82, UInt8(count >> 8), UInt8(count & 0xFF)])
    return Data([tag]) + length + content
  }
  /// DER of a certificate's shape (what is checked, not a certificate a TLS library would load):
  /// SEQUENCE { TBSCertificate { [0] version, serial, algorithm, issuer, validity, subject, key },
  /// algorithm, BIT STRING }; `padding` bytes in the subject.
  static func certificateDER(padding: Int) -> Data {
    let algorithm = der(0x30, der(0x06, Data([0x2A, 0x86, 0x48])))
    let subject = der(0x30, padding > 0 ? der(0x04, Data(repeating: 0x41, count: padding)) : Data())
    let tbs = der(
      0x30,
      der(0xA0, der(0x02, Data([2]))) + der(0x02, Data([1])) + algorithm + der(0x30, Data())
        + der(0x30, Data()) + subject + der(0x30, algorithm + der(0x03, Data([0]))))
    return der(0x30, tbs + algorithm + der(0x03, Data([0])))
  }
  static let certificateDER = certificateDER(padding: 0)
  /// The DER of a PKCS #8 key's shape: SEQUENCE { INTEGER 0, SEQUENCE {}, OCTET STRING }.
  static let keyDER = Data([0x30, 0x08, 0x02, 0x01, 0x00, 0x30, 0x00, 0x04, 0x01, 0x00])
  /// The DER of an encrypted PKCS #8 key's shape: SEQUENCE { SEQUENCE {}, OCTET STRING }.
  static let encryptedKeyDER = Data([0x30, 0x05, 0x30, 0x00, 0x04, 0x01, 0x00])
  /// A PEM block of `label`; its body is `body`, else DER of the shape the label names.
  static func block(_ label: String, headers: [String] = [], body: String? = nil) -> String {
    let der =
      label == "ENCRYPTED PRIVATE KEY" ? encryptedKeyDER : label.contains("KEY") ? keyDER : certificateDER
    let text = body ?? der.base64EncodedString()
    return (["-----BEGIN \(label)-----"] + headers + [text, "-----END \(label)-----"]).joined(separator: "\n")
      + "\n"
  }

  @Test(
    arguments: [
      (block("CERTIFICATE"), [.certificate]),
      (block("CERTIFICATE") + block("CERTIFICATE"), [.certificate, .certificate]),
      ("text before\n" + block("CERTIFICATE") + "text after\n", [.certificate]),
      (block("PRIVATE KEY"), [.privateKey(encrypted: false)]),
      (block("RSA PRIVATE KEY"), [.privateKey(encrypted: false)]),
      (block("EC PRIVATE KEY"), [.privateKey(encrypted: false)]),
      (block("ENCRYPTED PRIVATE KEY"), [.privateKey(encrypted: true)]),
      (
        block("RSA PRIVATE KEY", headers: ["Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,00", ""]),
        [.privateKey(encrypted: true)]
      ),
      (block("CERTIFICATE") + block("PRIVATE KEY"), [.certificate, .privateKey(encrypted: false)]),
      // A legacy encrypted key's body is ciphertext: not DER, and not checked as DER.
      (
        block(
          "RSA PRIVATE KEY", headers: ["Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,00", ""], body: body),
        [.privateKey(encrypted: true)]
      ),
      // A TRUSTED CERTIFICATE carries its trust settings after the certificate.
      (
        block("TRUSTED CERTIFICATE", body: (certificateDER + Data([0x30, 0x00])).base64EncodedString()),
        [.certificate]
      ),
      (block("PUBLIC KEY", body: body), [.other]),
      (block("PUBLIC KEY"), [.other]),
      ("", []),
      ("no pem here", []),
    ] as [(String, [TLSValidation.PEMKind])])
  func pemBlocks(text: String, kinds: [TLSValidation.PEMKind]) {
    #expect(TLSValidation.pemBlocks(text) == kinds)
  }

  /// Verdicts are remembered for certificates only: the bytes of a file holding a private key (or
  /// anything but certificates) are not kept in the process after its check.
  @Test(
    arguments: [
      (block("CERTIFICATE") + "<!-- remembered -->\n", true),
      (block("CERTIFICATE") + block("PRIVATE KEY") + "<!-- kept? -->\n", false),
      (block("PRIVATE KEY") + "<!-- kept? -->\n", false),
      (block("ENCRYPTED PRIVATE KEY") + "<!-- kept? -->\n", false),
      (block("PUBLIC KEY") + "<!-- kept? -->\n", false),
      ("-----BEGIN CERTIFICATE-----\n" + body + "\n<!-- damaged -->\n", false),
    ])
  func onlyCertificatesAreRemembered(text: String, remembered: Bool) {
    let bytes = Array(text.utf8)
    _ = TLSValidation.pemBlocks(bytes: bytes)
    #expect(TLSValidation.remembersVerdict(on: bytes) == remembered)
  }

  @Test(arguments: [
    "-----BEGIN CERTIFICATE-----\n" + body + "\n",  // no end line
    block("CERTIFICATE", body: "not base64 !!"),
    block("CERTIFICATE", body: ""),
    // Base64 that decodes, to bytes that are not the DER of a certificate or key.
    block("CERTIFICATE", body: body),
    block("CERTIFICATE", body: certificateDER.dropLast().base64EncodedString()),  // truncated
    // A cut element after the certificate.
    block("CERTIFICATE", body: (certificateDER + Data([0x30])).base64EncodedString()),
    block("CERTIFICATE", body: keyDER.base64EncodedString()),  // a key's shape
    // The outer shape of a certificate, with an empty TBSCertificate.
    block("CERTIFICATE", body: Data([0x30, 7, 0x30, 0, 0x30, 0, 0x03, 1, 0]).base64EncodedString()),
    // An indefinite length (BER, not DER).
    block("CERTIFICATE", body: Data([0x30, 0x80, 0x30, 0x00, 0x00, 0x00]).base64EncodedString()),
    block("PRIVATE KEY", body: Data([0x02, 0x01, 0x00]).base64EncodedString()),  // not a SEQUENCE
    // A SEQUENCE whose length runs past its end.
    block("EC PRIVATE KEY", body: Data([0x30, 0x05, 0x02, 0x01, 0x00]).base64EncodedString()),
    block("PRIVATE KEY", body: Data([0x30, 0x00]).base64EncodedString()),  // an empty SEQUENCE
    block("ENCRYPTED PRIVATE KEY", body: keyDER.base64EncodedString()),  // not the encrypted shape
    "-----BEGIN CERTIFICATE-----\n" + body + "\n-----END PRIVATE KEY-----\n",  // mismatched end
  ])
  func malformedPEM(text: String) {
    #expect(TLSValidation.pemBlocks(text) == nil)
  }

  static let digest = Data(repeating: 7, count: 32).base64EncodedString()

  @Test(arguments: [
    ("sha256//" + digest, true),
    (digest, false),
    ("sha1//" + digest, false),
    ("sha256//" + Data(repeating: 7, count: 20).base64EncodedString(), false),
    ("sha256//not base64", false),
    ("sha256//", false),
  ])
  func pins(pin: String, valid: Bool) {
    #expect(TLSValidation.isWellFormedPin(pin) == valid)
  }

  /// Writes `files` (name → text) into a new folder.
  static func folder(_ files: [String: String]) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
    return folder
  }

  /// Each bad setting is refused with a text naming the file or the setting (never a password).
  @Test func badSettingsAreRefusedNamingTheFileOrSetting() throws {
    let folder = try Self.folder([
      "ca.pem": Self.block("CERTIFICATE"), "garbage.pem": "garbage", "key.pem": Self.block("PRIVATE KEY"),
      "client.pem": Self.block("CERTIFICATE"),
      "both.pem": Self.block("CERTIFICATE") + Self.block("PRIVATE KEY"),
      "encrypted.pem": Self.block("ENCRYPTED PRIVATE KEY"),
    ])
    defer { try? FileManager.default.removeItem(at: folder) }
    func file(_ name: String) -> URL { folder.appendingPathComponent(name) }
    var cases: [(TLSSettings, String?)] = []
    func add(_ expected: String?, _ change: (inout TLSSettings) -> Void) {
      var settings = TLSSettings()
      change(&settings)
      cases.append((settings, expected))
    }
    add(nil) { $0.additionalTrustRoots = [file("ca.pem")] }
    add("missing.pem is missing or unreadable") { $0.additionalTrustRoots = [file("missing.pem")] }
    add("garbage.pem is not PEM") { $0.additionalTrustRoots = [file("garbage.pem")] }
    add("key.pem holds no PEM certificate") { $0.additionalTrustRoots = [file("key.pem")] }
    add("nothing would be trusted") { $0.trustsSystemRoots = false }
    add(nil) {
      $0.trustsSystemRoots = false
      $0.additionalTrustRoots = [file("ca.pem")]
    }
    add(nil) {
      $0.clientCertificate = file("client.pem")
      $0.clientKey = file("key.pem")
    }
    add(nil) { $0.clientCertificate = file("both.pem") }
    add("client.pem holds no PEM private key") { $0.clientCertificate = file("client.pem") }
    add("clientKey is set without clientCertificate") { $0.clientKey = file("key.pem") }
    add("encrypted.pem is encrypted and clientKeyPassword is not set") {
      $0.clientCertificate = file("client.pem")
      $0.clientKey = file("encrypted.pem")
    }
    add(nil) {
      $0.clientCertificate = file("client.pem")
      $0.clientKey = file("encrypted.pem")
      $0.clientKeyPassword = "hunter2"
    }
    add("is not sha256//") { $0.pinnedPublicKeys = ["sha256//" + Self.digest, "abc"] }
    add(nil) { $0.pinnedPublicKeys = ["sha256//" + Self.digest] }
    for (settings, expected) in cases {
      do {
        try TLSValidation.check(settings)
        #expect(expected == nil, "\(settings) passed, expected \(expected ?? "")")
      } catch {
        guard case .invalidTLSSettings(let text)? = error as? SessionFetcherError else {
          Issue.record("unexpected \(error)")
          continue
        }
        #expect(expected.map { text.contains($0) } == true, "\(settings): \(text)")
        #expect(!text.contains("hunter2"))
      }
    }
  }

  /// Verdicts are remembered by contents: a file rewritten in place with other bytes of the same
  /// length (a damaged certificate, then a key) is judged again at the next check, and the first
  /// contents again when they come back.
  @Test func aFileRewrittenInPlaceIsJudgedByItsNewContents() throws {
    let good = Self.block("CERTIFICATE")
    var damaged = Array(good.utf8)
    // One base64 letter of the body changed: still base64, no longer the DER of a certificate.
    let index = damaged.firstIndex(of: UInt8(ascii: "\n"))! + 1
    damaged[index] = damaged[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
    let key = Self.block("PRIVATE KEY")
    let folder = try Self.folder(["roots.pem": good])
    defer { try? FileManager.default.removeItem(at: folder) }
    let roots = folder.appendingPathComponent("roots.pem")
    var settings = TLSSettings()
    settings.additionalTrustRoots = [roots]
    func verdict() -> String? {
      do {
        try TLSValidation.check(settings)
        return nil
      } catch {
        guard case .invalidTLSSettings(let text)? = error as? SessionFetcherError else { return "\(error)" }
        return text
      }
    }
    #expect(verdict() == nil)
    try Data(damaged).write(to: roots)
    #expect(verdict()?.contains("roots.pem is not PEM") == true)
    try Data(key.utf8).write(to: roots)
    #expect(verdict()?.contains("roots.pem holds no PEM certificate") == true)
    try Data(good.utf8).write(to: roots)
    #expect(verdict() == nil)
  }

  /// A file unchanged for a while is judged by its stamp (its verdict remembered without its
  /// bytes, a key file's too); a fresh file is read at every check; a file rewritten in place, to
  /// the same length, has another stamp and is judged again.
  @Test func aSettledFileIsJudgedByItsStampUntilItChanges() async throws {
    let good = Self.block("CERTIFICATE")
    var damaged = Array(good.utf8)
    let index = damaged.firstIndex(of: UInt8(ascii: "\n"))! + 1
    damaged[index] = damaged[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
    let folder = try Self.folder([
      "roots.pem": good, "client.pem": Self.block("CERTIFICATE") + Self.block("PRIVATE KEY"),
    ])
    defer { try? FileManager.default.removeItem(at: folder) }
    let roots = folder.appendingPathComponent("roots.pem")
    let client = folder.appendingPathComponent("client.pem")
    var settings = TLSSettings()
    settings.additionalTrustRoots = [roots]
    settings.clientCertificate = client
    try TLSValidation.check(settings)
    // Still fresh after the check (so it was when the check ended): nothing remembered.
    if FileStamp(path: roots.path)?.isSettled == false {
      #expect(TLSValidation.rememberedVerdict(onFileAt: roots.path) == nil)
    }
    #expect(await eventually(timeout: 60) { FileStamp(path: roots.path)?.isSettled == true })
    try TLSValidation.check(settings)
    #expect(TLSValidation.rememberedVerdict(onFileAt: roots.path) == [.certificate])
    #expect(
      TLSValidation.rememberedVerdict(onFileAt: client.path) == [.certificate, .privateKey(encrypted: false)])
    try Data(damaged).write(to: roots)
    #expect(TLSValidation.rememberedVerdict(onFileAt: roots.path) == nil)
    #expect(throws: SessionFetcherError.self) { try TLSValidation.check(settings) }
  }

  /// `readFile` returns the file's bytes whatever their length (it reads into a buffer of the size
  /// `fstat` gives), and refuses a file past the limit.
  @Test(arguments: [0, 1, 1_000, 65_535, 65_536, 65_537, 300_000])
  func readFileReturnsEveryByte(length: Int) throws {
    let folder = try Self.folder([:])
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("bytes.bin")
    let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    try Data(bytes).write(to: file)
    #expect(try TLSValidation.readFile(file).get() == bytes)
  }

  @Test func readFileRefusesAFilePastTheLimit() throws {
    let folder = try Self.folder([:])
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("big.pem")
    try Data(count: TLSValidation.maximumFileSize + 1).write(to: file)
    #expect(throws: TLSValidation.ReadProblem.self) { try TLSValidation.readFile(file).get() }
    try Data(count: TLSValidation.maximumFileSize).write(to: file)
    #expect(try TLSValidation.readFile(file).get().count == TLSValidation.maximumFileSize)
  }

  /// The roots' paths are decoded once, when the roots are set, and always match them: what
  /// `URL.path` gives (percent escapes decoded), nil for a URL that is not a file URL.
  @Test(arguments: [
    ([] as [String], [] as [String?]),
    (["file:///etc/ca.pem"], ["/etc/ca.pem"]),
    (["file:///srv/my%20certs/ca%2Bold.pem"], ["/srv/my certs/ca+old.pem"]),
    (["https://example.com/ca.pem", "file:///a.pem"], [nil, "/a.pem"]),
  ])
  func trustRootPathsFollowTheRoots(urls: [String], paths: [String?]) throws {
    var settings = TLSSettings()
    settings.additionalTrustRoots = [URL(fileURLWithPath: "/first.pem")]
    #expect(settings.additionalTrustRootPaths == ["/first.pem"])
    settings.additionalTrustRoots = try urls.map { try #require(URL(string: $0)) }
    #expect(settings.additionalTrustRootPaths == paths)
    var other = TLSSettings()
    other.additionalTrustRoots = settings.additionalTrustRoots
    #expect(other == settings)
    settings.additionalTrustRoots.append(URL(fileURLWithPath: "/last.pem"))
    #expect(settings.additionalTrustRootPaths == paths + ["/last.pem"])
  }

  @Test func theDescriptionNeverShowsThePassword() {
    var settings = TLSSettings()
    settings.clientCertificate = URL(fileURLWithPath: "/etc/client.pem")
    settings.clientKeyPassword = "hunter2"
    settings.minimumVersion = .tls13
    #expect(!settings.description.contains("hunter2"))
    #expect(settings.description.contains("key password set") && settings.description.contains("TLS 1.3"))
    #expect(TLSSettings().isDefault && !settings.isDefault)
    #expect(TLSVersion.tls12 < .tls13)
  }

  /// The URLSession engine has no TLS configuration on Linux: any setting other than the defaults
  /// fails the fetch at begin, naming the setting and the engine that can, with nothing sent.
  @Test func theURLSessionEngineRefusesWhatItCannotHonour() async throws {
    let server = try TestServer()
    defer { server.stop() }
    let folder = try Self.folder([
      "ca.pem": Self.block("CERTIFICATE"), "both.pem": Self.block("CERTIFICATE") + Self.block("PRIVATE KEY"),
    ])
    defer { try? FileManager.default.removeItem(at: folder) }
    var changes: [(String, (inout TLSSettings) -> Void)] = [
      ("additionalTrustRoots", { $0.additionalTrustRoots = [folder.appendingPathComponent("ca.pem")] }),
      ("pinnedPublicKeys", { $0.pinnedPublicKeys = ["sha256//" + Self.digest] }),
      ("minimumVersion = TLS 1.3", { $0.minimumVersion = .tls13 }),
    ]
    changes.append(
      ("clientCertificate", { $0.clientCertificate = folder.appendingPathComponent("both.pem") }))
    for (name, change) in changes {
      let fetcher = server.fetcher("/text?value=x")
      fetcher.engine = .urlSession
      change(&fetcher.tlsSettings)
      let result = await fetcher.fetchResult()
      guard case .unsupportedByEngine(let text)? = result.fetcherError else {
        Issue.record("\(name): \(String(describing: result.error))")
        continue
      }
      #expect(text.contains(name) && text.contains("libcurl"), "\(text)")
    }
    #expect(server.requestCount(path: "/text") == 0)
    // The defaults pass.
    let plain = server.fetcher("/text?value=x")
    plain.engine = .urlSession
    #expect(await plain.fetchResult().data == Data("x".utf8))
  }
}
