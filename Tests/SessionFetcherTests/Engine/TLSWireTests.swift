import FetcherTesting
import Foundation
import Testing

@testable import SessionFetcher

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// TLSSettings on the libcurl engine against real TLS servers (`openssl s_server`) with
/// certificates made at run time.
@Suite(
  "TLS on the libcurl engine", .serialized,
  .enabled(if: TLSFixtures.isAvailable && FetcherEngine.libcurl.isAvailable, "needs openssl and libcurl"))
struct TLSWireTests {
  let fixtures: TLSFixtures

  init() async throws {
    fixtures = try await TLSFixtures.make()
  }

  /// Fetches `url` on the libcurl engine with retries on (no TLS verdict may be retried).
  func fetch(_ url: URL, _ configure: (inout TLSSettings) -> Void = { _ in }) async -> (
    SessionFetcher, FetchResult
  ) {
    let fetcher = SessionFetcher.fetcher(url: url)
    fetcher.engine = .libcurl
    fetcher.callbackQueue = DispatchQueue(label: "test.tls")
    fetcher.allowLocalhostRequest = true
    fetcher.isRetryEnabled = true
    fetcher.minRetryInterval = 0.05
    configure(&fetcher.tlsSettings)
    return (fetcher, await fetcher.fetchResult(timeout: 30))
  }

  func trustingCA(_ settings: inout TLSSettings) {
    settings.additionalTrustRoots = [fixtures.file("ca.pem")]
  }

  /// A refused handshake: the URLError code, the library's text kept, and no retry.
  func expectRefused(
    _ outcome: (SessionFetcher, FetchResult), _ code: URLError.Code,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let error = outcome.1.error as? URLError
    #expect(error?.code == code, "\(String(describing: outcome.1.error))", sourceLocation: sourceLocation)
    #expect(!(error?.localizedDescription.isEmpty ?? true), sourceLocation: sourceLocation)
    #expect(outcome.0.timing.retryCount == 0, sourceLocation: sourceLocation)
  }

  @Test func aPrivateCAIsTrustedThroughAdditionalTrustRoots() async throws {
    let server = try await TLSFixtures.Server.start(fixtures, certificate: "server")
    let (fetcher, result) = await fetch(server.url(), trustingCA)
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(fetcher.statusCode == 200)
    #expect(fetcher.timing.transferMetrics?.secureConnection != nil)
    expectRefused(await fetch(server.url()), .serverCertificateHasUnknownRoot)
  }

  @Test func anExpiredCertificateHasABadDate() async throws {
    let server = try await TLSFixtures.Server.start(fixtures, certificate: "expired")
    expectRefused(await fetch(server.url(), trustingCA), .serverCertificateHasBadDate)
  }

  @Test func aCertificateForAnotherHostIsUntrusted() async throws {
    let server = try await TLSFixtures.Server.start(fixtures, certificate: "wronghost")
    expectRefused(await fetch(server.url(), trustingCA), .serverCertificateUntrusted)
  }

  /// Without the system's roots only the listed ones count: the private CA's server is refused
  /// when only another CA is listed, and that CA's server is accepted.
  @Test func withoutSystemRootsOnlyTheListedRootsAreTrusted() async throws {
    let server = try await TLSFixtures.Server.start(fixtures, certificate: "server")
    let foreign = try await TLSFixtures.Server.start(fixtures, certificate: "foreign")
    func otherCAOnly(_ settings: inout TLSSettings) {
      settings.trustsSystemRoots = false
      settings.additionalTrustRoots = [fixtures.file("other-ca.pem")]
    }
    expectRefused(await fetch(server.url(), otherCAOnly), .serverCertificateHasUnknownRoot)
    #expect(await fetch(foreign.url(), otherCAOnly).1.error == nil)
  }

  @Test func aPinnedKeyMustMatch() async throws {
    let server = try await TLSFixtures.Server.start(fixtures, certificate: "server")
    let pin = fixtures.serverPin
    let matching = await fetch(server.url()) {
      trustingCA(&$0)
      $0.pinnedPublicKeys = ["sha256//" + Data(repeating: 1, count: 32).base64EncodedString(), pin]
    }
    #expect(matching.1.error == nil, "\(String(describing: matching.1.error))")
    let other = await fetch(server.url()) {
      trustingCA(&$0)
      $0.pinnedPublicKeys = ["sha256//" + Data(repeating: 1, count: 32).base64EncodedString()]
    }
    expectRefused(other, .serverCertificateUntrusted)
  }

  @Test func mutualTLS() async throws {
    let server = try await TLSFixtures.Server.start(
      fixtures, certificate: "server",
      extraArguments: ["-Verify", "1", "-CAfile", fixtures.file("ca2.pem").path])
    expectRefused(await fetch(server.url(), trustingCA), .clientCertificateRequired)
    let plain = await fetch(server.url()) {
      trustingCA(&$0)
      $0.clientCertificate = fixtures.file("client.pem")
      $0.clientKey = fixtures.file("client.key")
    }
    #expect(plain.1.error == nil, "\(String(describing: plain.1.error))")
    let encrypted = await fetch(server.url()) {
      trustingCA(&$0)
      $0.clientCertificate = fixtures.file("client.pem")
      $0.clientKey = fixtures.file("client-encrypted.key")
      $0.clientKeyPassword = TLSFixtures.clientKeyPassword
    }
    #expect(encrypted.1.error == nil, "\(String(describing: encrypted.1.error))")
  }

  /// A wrong key password, or a key that is not the certificate's, is a settings error, found
  /// before any request is sent; the password appears nowhere in it.
  @Test func aKeyThatCannotBeUsedIsASettingsError() async throws {
    let server = try await TLSFixtures.Server.start(fixtures, certificate: "server")
    let wrongPassword = await fetch(server.url()) {
      trustingCA(&$0)
      $0.clientCertificate = fixtures.file("client.pem")
      $0.clientKey = fixtures.file("client-encrypted.key")
      $0.clientKeyPassword = "wrong-password"
    }
    let mismatched = await fetch(server.url()) {
      trustingCA(&$0)
      $0.clientCertificate = fixtures.file("client.pem")
      $0.clientKey = fixtures.file("server.key")
    }
    for (_, result) in [wrongPassword, mismatched] {
      guard case .invalidTLSSettings(let text)? = result.fetcherError else {
        Issue.record("\(String(describing: result.error))")
        continue
      }
      #expect(text.contains("client") && !text.contains("wrong-password"), "\(text)")
    }
  }

  @Test func aMinimumVersionAboveTheServersFails() async throws {
    let server = try await TLSFixtures.Server.start(
      fixtures, certificate: "server", extraArguments: ["-tls1_2"])
    #expect(await fetch(server.url(), trustingCA).1.error == nil)
    expectRefused(
      await fetch(server.url()) {
        trustingCA(&$0)
        $0.minimumVersion = .tls13
      }, .secureConnectionFailed)
  }
}

@Suite(
  "TLS trust roots as they are now", .serialized,
  .enabled(if: TLSFixtures.isAvailable && FetcherEngine.libcurl.isAvailable, "needs openssl and libcurl"))
struct TLSTrustRootChangeTests {
  /// One fetch from `server` on the libcurl engine, trusting only the roots in `roots`.
  private static func fetch(_ server: TLSFixtures.Server, trusting roots: URL) async -> FetchResult {
    let fetcher = SessionFetcher.fetcher(url: server.url())
    fetcher.engine = .libcurl
    fetcher.callbackQueue = DispatchQueue(label: "test.tls.roots")
    fetcher.allowLocalhostRequest = true
    fetcher.tlsSettings.trustsSystemRoots = false
    fetcher.tlsSettings.additionalTrustRoots = [roots]
    return await fetcher.fetchResult(timeout: 30)
  }

  /// A roots file that changed since the last fetch is read again: the next fetch trusts the new
  /// contents (the engine's bundle files are keyed by contents, not by path).
  @Test func aChangedRootsFileIsReadAgain() async throws {
    let fixtures = try await TLSFixtures.make()
    let server = try await TLSFixtures.Server.start(fixtures, certificate: "server")
    defer { server.stop() }
    let roots = fixtures.file("rotating-roots.pem")
    func fetch() async -> FetchResult { await Self.fetch(server, trusting: roots) }
    try Data(contentsOf: fixtures.file("other-ca.pem")).write(to: roots)
    let before = await fetch()
    #expect((before.error as? URLError)?.code == .serverCertificateHasUnknownRoot)
    try Data(contentsOf: fixtures.file("ca.pem")).write(to: roots)
    let after = await fetch()
    #expect(after.error == nil, "\(String(describing: after.error))")
    try Data(contentsOf: fixtures.file("other-ca.pem")).write(to: roots)
    #expect((await fetch().error as? URLError)?.code == .serverCertificateHasUnknownRoot)
  }

  #if canImport(FoundationNetworking)
    /// Roots that keep changing do not fill the disk: past `CurlTrustStore.fileLimit` bundle files,
    /// the least recently used ones that no transfer holds are deleted. Every fetch still trusts
    /// what its own file holds, and roots whose bundle was deleted get a new one.
    @Test func bundlesOfChangingRootsAreBounded() async throws {
      let fixtures = try await TLSFixtures.make()
      let server = try await TLSFixtures.Server.start(fixtures, certificate: "server")
      defer { server.stop() }
      let ca = try Data(contentsOf: fixtures.file("ca.pem"))
      var files: [URL] = []
      for index in 0..<(CurlTrustStore.fileLimit + 8) {
        // The same certificate behind a different first line: other contents, another bundle.
        var contents = Data("# roots \(index)\n".utf8)
        contents.append(ca)
        let file = fixtures.file("changing-roots-\(index).pem")
        try contents.write(to: file)
        files.append(file)
      }
      for file in files {
        let result = await Self.fetch(server, trusting: file)
        #expect(result.error == nil, "\(file.lastPathComponent): \(String(describing: result.error))")
      }
      #expect(CurlTrustStore.keptFileCount <= CurlTrustStore.fileLimit)
      #expect(CurlTrustStore.filesOnDisk <= CurlTrustStore.fileLimit)
      #expect(CurlTrustStore.memoryFileCount <= CurlTrustStore.fileLimit)
      let again = await Self.fetch(server, trusting: files[0])
      #expect(again.error == nil, "\(String(describing: again.error))")
      #expect(CurlTrustStore.filesOnDisk <= CurlTrustStore.fileLimit)
      #expect(CurlTrustStore.memoryFileCount <= CurlTrustStore.fileLimit)
    }

    /// libcurl knows a CA file by its path: a bundle's path names the roots it was made with for
    /// as long as it lives, and is never given again. Bundles past the limit are closed, their
    /// descriptor numbers come back for new bundles, and those get paths not given before.
    @Test func aBundlePathNeverNamesOtherRoots() throws {
      let folder = FileManager.default.temporaryDirectory.appendingPathComponent("roots-\(UUID().uuidString)")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: folder) }
      var given = Set<String>()
      // Not read for roots without the system's.
      let easy = try #require(UnsafeMutableRawPointer(bitPattern: 1))
      for index in 0..<(CurlTrustStore.fileLimit * 3) {
        let contents = Data("# roots \(index)\n".utf8)
        let file = folder.appendingPathComponent("roots-\(index).pem")
        try contents.write(to: file)
        var tls = TLSSettings()
        tls.trustsSystemRoots = false
        tls.additionalTrustRoots = [file]
        let path = try #require(CurlTrustStore.bundleFile(for: tls, easy: easy).path)
        #expect(path.hasPrefix("/proc/self/fd/"), "\(path)")
        #expect(!given.contains(path), "\(path) given twice")
        given.insert(path)
        #expect(FileManager.default.contents(atPath: path) == contents + Data([0x0A]), "\(path)")
        CurlTrustStore.release(path)
      }
      #expect(given.contains { $0.contains("/./") }, "no descriptor number came back: \(given.sorted())")
    }

    /// The bundles are files in memory: fetches with extra roots, with and without the system's,
    /// leave no `sessionfetcher-trust-*` folder in the temporary folder (a killed process could not
    /// remove one), and a bundle whose descriptor number comes back gets another path.
    @Test func bundlesLeaveNothingInTheTemporaryFolder() async throws {
      let fixtures = try await TLSFixtures.make()
      let server = try await TLSFixtures.Server.start(fixtures, certificate: "server")
      defer { server.stop() }
      func trustFolders() -> Set<String> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? []
        return Set(names.filter { $0.hasPrefix("sessionfetcher-trust-") })
      }
      let before = trustFolders()
      let ca = try Data(contentsOf: fixtures.file("ca.pem"))
      for index in 0..<(CurlTrustStore.fileLimit + 4) {
        var contents = Data("# in memory \(index)\n".utf8)
        contents.append(ca)
        let file = fixtures.file("memory-roots-\(index).pem")
        try contents.write(to: file)
        let fetcher = SessionFetcher.fetcher(url: server.url())
        fetcher.engine = .libcurl
        fetcher.callbackQueue = DispatchQueue(label: "test.tls.memory")
        fetcher.allowLocalhostRequest = true
        // Every other fetch with the system's roots too (a bundle of the whole system store).
        fetcher.tlsSettings.trustsSystemRoots = index.isMultiple(of: 2)
        fetcher.tlsSettings.additionalTrustRoots = [file]
        let result = await fetcher.fetchResult(timeout: 30)
        #expect(result.error == nil, "\(index): \(String(describing: result.error))")
      }
      #expect(CurlTrustStore.folderMade == nil)
      #expect(trustFolders() == before)
      #expect(CurlTrustStore.memoryFileCount > 0)
      #expect(CurlTrustStore.memoryFileCount <= CurlTrustStore.fileLimit)
    }
  #endif

  /// Once the roots file has not changed for a while, fetches take the bundle made from it by the
  /// file's stamp, without reading it; rewritten in place, it has another stamp, and the next fetch
  /// trusts the new contents.
  @Test func aSettledRootsFileIsTakenByItsStampUntilItChanges() async throws {
    let fixtures = try await TLSFixtures.make()
    let server = try await TLSFixtures.Server.start(fixtures, certificate: "server")
    defer { server.stop() }
    let roots = fixtures.file("settled-roots.pem")
    func fetch() async -> FetchResult { await Self.fetch(server, trusting: roots) }
    try Data(contentsOf: fixtures.file("ca.pem")).write(to: roots)
    #expect(await eventually(timeout: 60) { FileStamp(path: roots.path)?.isSettled == true })
    for _ in 0..<3 {
      let result = await fetch()
      #expect(result.error == nil, "\(String(describing: result.error))")
    }
    var settings = TLSSettings()
    settings.trustsSystemRoots = false
    settings.additionalTrustRoots = [roots]
    #expect(TLSValidation.rememberedVerdict(onFileAt: roots.path) == [.certificate])
    #if canImport(FoundationNetworking)
      #expect(CurlTrustStore.remembersBundle(for: settings))
    #endif
    try Data(contentsOf: fixtures.file("other-ca.pem")).write(to: roots)
    #if canImport(FoundationNetworking)
      #expect(!CurlTrustStore.remembersBundle(for: settings))
    #endif
    #expect((await fetch().error as? URLError)?.code == .serverCertificateHasUnknownRoot)
  }
}

#if canImport(FoundationNetworking)
  @Suite(
    "TLS body delivery on the libcurl engine", .serialized,
    .enabled(if: TLSFixtures.isAvailable && FetcherEngine.libcurl.isAvailable, "needs openssl and libcurl"))
  struct TLSBodyDeliveryTests {
    /// Over TLS each read brings one record (16 KiB at most): records that are already there when
    /// the engine reads reach the handler together, in chunks of up to the receive buffer's 128 KiB,
    /// not one record at a time; the body arrives whole and in order, across a suspension.
    @Test func recordsReadBackToBackReachTheHandlerTogether() async throws {
      let fixtures = try await TLSFixtures.make()
      let length = 1_048_576
      let expected = TestServer.patternBytes(count: length)
      try expected.write(to: fixtures.file("body.bin"))
      let server = try await TLSFixtures.Server.start(fixtures, certificate: "server", servesFiles: true)
      defer { server.stop() }
      let engine = try makeCurlEngine()
      defer { engine.invalidateAndCancel() }
      var tls = TLSSettings()
      tls.additionalTrustRoots = [fixtures.file("ca.pem")]
      let handler = CurlRecordingHandler()
      let sizes = Locked<[Int]>([])
      let suspended = DispatchSemaphore(value: 0)
      handler.onData = { task, data in
        let isFirst = sizes.withLock { sizes in
          sizes.append(data.count)
          return sizes.count == 1
        }
        guard isFirst else { return }
        // Held while the server fills the socket buffers: the records wait to be read together.
        task.suspend()
        suspended.signal()
      }
      let task = try #require(
        engine.makeTask(
          request: URLRequest(url: server.url("/body.bin")), body: .none, tls: tls, handler: handler))
      task.resume()
      #expect(suspended.wait(timeout: .now() + 30) == .success)
      try await Task.sleep(nanoseconds: 500_000_000)
      task.resume()
      #expect(handler.waitForCompletion())
      #expect(handler.current.completions.first! == nil)
      #expect(handler.current.body == expected)
      let largest = sizes.withLock { $0.max() ?? 0 }
      #expect(largest > 16_384, "largest chunk \(largest) bytes: one TLS record at a time")
      #expect(largest <= 128 * 1024)
    }
  }
#endif
