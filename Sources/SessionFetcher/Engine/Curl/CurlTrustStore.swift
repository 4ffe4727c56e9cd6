#if LIBCURL_ENGINE
  import CCurl
  import Foundation

  #if canImport(Glibc)
    import Glibc
  #elseif canImport(Darwin)
    import Darwin
  #endif

  /// The trust roots of `TLSSettings` that add to or replace the system's, as one PEM file per
  /// distinct set of roots, for `CURLOPT_CAINFO` (see `CurlTransfer.applyTLS`).
  ///
  /// A file, not `CURLOPT_CAINFO_BLOB`: libcurl (7.87 and later) keeps the certificate store it
  /// built from a CA *file* for the whole multi handle, so every connection shares one; from a blob
  /// it parses the whole bundle again for each connection (slow, and large with the system's
  /// roots), and compares the blob byte by byte with every cached
  /// connection's before reusing one.
  ///
  /// The file is in memory: an anonymous, sealed file (`memfd_create`) that libcurl opens by its
  /// descriptor's path under `/proc/self/fd`, so nothing is left on disk even when the process is
  /// killed. Only where that cannot be done (no `memfd_create`, no `/proc`: macOS) is it a file in a private
  /// folder made for the process (mode 0700) in the temporary folder, removed when the process exits
  /// normally; the files hold public certificates only. At most ``fileLimit`` are kept once the
  /// others are no longer in use (see `TrustFileIndex`): roots that change over a process's life do
  /// not fill memory or the disk.
  enum CurlTrustStore {
    private struct Roots: Hashable {
      var system: Bool
      var additional: [Data]
    }

    /// A set of roots by its files' paths and stamps, all settled when taken.
    private struct StampedRoots: Hashable {
      var system: Bool
      var paths: [String]
      var stamps: [FileStamp]
    }

    private struct State {
      var systemBundle: Data?
      var defaultCAFile: String?
      var folder: String?
      /// The descriptors of the bundles in memory, by the path libcurl is given.
      var memoryFiles: [String: Int32] = [:]
      /// How many bundles each descriptor number has held: a path is never given twice.
      var descriptorUses: [Int32: Int] = [:]
      var files = TrustFileIndex<Roots>(limit: fileLimit)
      /// The bundle of each set of roots whose files have not changed since they were read: a
      /// transfer whose files still have these stamps takes the bundle without reading them (at
      /// most ``stampedLimit`` sets).
      var stamped: [StampedRoots: String] = [:]
    }

    /// The most sets of roots remembered by their files' stamps.
    private static let stampedLimit = 64
    /// The most bundle files kept once the others are no longer in use.
    static let fileLimit = 32

    private static let state = Locked(State())

    /// The path of a PEM file holding the system's roots (when `tls.trustsSystemRoots`) and the
    /// contents of `tls.additionalTrustRoots` as they are now; nil when no file can be written here
    /// (the caller then hands libcurl the bytes). A path returned is in use until the caller gives
    /// it back with ``release(_:)``.
    static func bundleFile(for tls: TLSSettings, easy: UnsafeMutableRawPointer) -> (path: String?, pem: Data)
    {
      var stamped = stampedRoots(of: tls)
      if let stamped, let known = state.withLock({ takeStamped(stamped, from: &$0) }) {
        return (known, Data())
      }
      // Read as at begin (no FIFO can block here, nothing past the size limit). The bundle is
      // remembered under the stamps taken before only if every file was read, and read from the
      // file that had that stamp (its descriptor's stamp is the same): a path pointed at another
      // file meanwhile, or a file that could not be read, is never remembered.
      let additional = tls.additionalTrustRoots.enumerated().map { index, url -> Data in
        guard case .success(let read) = TLSValidation.readStampedFile(url) else {
          stamped = nil
          return Data()
        }
        if let expected = stamped?.stamps[index], read.stamp != expected { stamped = nil }
        return Data(read.bytes)
      }
      let roots = Roots(system: tls.trustsSystemRoots, additional: additional)
      if let known = state.withLock({ $0.files.use(roots) }) {
        remember(known, as: stamped)
        return (known, Data())
      }
      var pem = tls.trustsSystemRoots ? systemBundle(of: easy) : Data()
      for contents in additional {
        pem.append(contents)
        pem.append(0x0A)
      }
      let made = state.withLock { state -> (path: String?, pem: Data) in
        if let known = state.files.use(roots) { return (known, Data()) }
        if let path = memoryFile(pem, &state) {
          remove(state.files.add(roots, path: path), from: &state)
          return (path, pem)
        }
        guard let folder = folder(&state) else { return (nil, pem) }
        let path = "\(folder)/\(state.files.nextFileName())"
        guard
          FileManager.default.createFile(atPath: path, contents: pem, attributes: [.posixPermissions: 0o600])
        else { return (nil, pem) }
        remove(state.files.add(roots, path: path), from: &state)
        return (path, pem)
      }
      if let path = made.path { remember(path, as: stamped) }
      return made
    }

    /// The bundle remembered for `stamped`, now in use by one more transfer; nil when there is none.
    private static func takeStamped(_ stamped: StampedRoots, from state: inout State) -> String? {
      guard let path = state.stamped[stamped], state.files.use(path: path) else { return nil }
      return path
    }

    /// A transfer given `path` by ``bundleFile(for:easy:)`` is over.
    static func release(_ path: String) {
      state.withLock { state in remove(state.files.release(path), from: &state) }
    }

    /// The bundle files kept now (for tests).
    static var keptFileCount: Int { state.withLock { $0.files.count } }

    /// The bundles in memory now (for tests).
    static var memoryFileCount: Int { state.withLock { $0.memoryFiles.count } }

    /// The process's folder for bundle files, if one was made (for tests).
    static var folderMade: String? { state.withLock { $0.folder } }

    /// The files in the bundles' folder now, kept or not (for tests).
    static var filesOnDisk: Int {
      guard let folder = state.withLock({ $0.folder }) else { return 0 }
      return (try? FileManager.default.contentsOfDirectory(atPath: folder).count) ?? 0
    }

    /// Deletes the files at `paths`, no longer kept, and forgets the stamps that led to them.
    private static func remove(_ paths: [String], from state: inout State) {
      guard !paths.isEmpty else { return }
      let gone = Set(paths)
      state.stamped = state.stamped.filter { !gone.contains($0.value) }
      for path in paths {
        if let descriptor = state.memoryFiles.removeValue(forKey: path) {
          close(descriptor)
        } else {
          unlink(path)
        }
      }
    }

    /// The path of a new bundle in memory holding `pem`, or nil when none can be made here.
    ///
    /// libcurl knows a CA file by its path, so a path must never name other roots later: once a
    /// descriptor is closed its number comes back, and the path of its next bundle has one more
    /// `./` before the number (which the kernel skips).
    private static func memoryFile(_ pem: Data, _ state: inout State) -> String? {
      let descriptor = pem.withUnsafeBytes { ccurl_memory_file($0.baseAddress, $0.count) }
      guard descriptor >= 0 else { return nil }
      let uses = state.descriptorUses[descriptor, default: 0]
      let path = "/proc/self/fd/" + String(repeating: "./", count: uses) + String(descriptor)
      guard path.utf8.count < 1_024, access(path, R_OK) == 0 else {
        close(descriptor)
        return nil
      }
      state.descriptorUses[descriptor] = uses + 1
      state.memoryFiles[path] = descriptor
      return path
    }

    /// The roots of `tls` by their files' stamps; nil when a file has none (missing, not a
    /// regular file) or changed less than ``FileStamp/settleInterval`` ago.
    private static func stampedRoots(of tls: TLSSettings) -> StampedRoots? {
      var paths: [String] = []
      var stamps: [FileStamp] = []
      paths.reserveCapacity(tls.additionalTrustRoots.count)
      stamps.reserveCapacity(tls.additionalTrustRoots.count)
      for path in tls.additionalTrustRootPaths {
        guard let path, let stamp = FileStamp(path: path), stamp.isSettled else { return nil }
        paths.append(path)
        stamps.append(stamp)
      }
      return StampedRoots(system: tls.trustsSystemRoots, paths: paths, stamps: stamps)
    }

    /// Whether a transfer with `tls` now takes its bundle by its files' stamps, without reading
    /// them (for tests).
    static func remembersBundle(for tls: TLSSettings) -> Bool {
      guard let stamped = stampedRoots(of: tls) else { return false }
      return state.withLock { $0.stamped[stamped] != nil }
    }

    private static func remember(_ path: String, as stamped: StampedRoots?) {
      guard let stamped else { return }
      // `path` is in use by the caller's transfer: it cannot have been removed.
      state.withLock { state in
        if state.stamped.count >= stampedLimit, state.stamped[stamped] == nil { state.stamped.removeAll() }
        state.stamped[stamped] = path
      }
    }

    /// The process's private folder for the bundles (mode 0700), made on first use.
    private static func folder(_ state: inout State) -> String? {
      if let folder = state.folder { return folder }
      var template = Array((NSTemporaryDirectory() + "/sessionfetcher-trust-XXXXXX").utf8CString)
      guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        return nil
      }
      let folder = String(cString: made)
      state.folder = folder
      atexit {
        guard let folder = CurlTrustStore.state.withLock({ $0.folder }) else { return }
        try? FileManager.default.removeItem(atPath: folder)
      }
      return folder
    }

    /// libcurl's default CA file (`CURLINFO_CAINFO`, 7.84.0) when it exists, else nil. With the
    /// default settings the engine gives libcurl this file alone (no CA folder), so that its CA
    /// cache holds one certificate store for all connections instead of one per connection.
    static func defaultCAFile(of easy: UnsafeMutableRawPointer) -> String? {
      if let known = state.withLock({ $0.defaultCAFile }) { return known.isEmpty ? nil : known }
      var path: UnsafePointer<CChar>?
      var found = ""
      if ccurl_easy_getinfo_string(easy, CCURLINFO_STRING + 61, &path) == CCURLE_OK, let path {
        let candidate = String(cString: path)
        if FileManager.default.isReadableFile(atPath: candidate) { found = candidate }
      }
      state.withLock { $0.defaultCAFile = found }
      return found.isEmpty ? nil : found
    }

    /// The PEM bytes of libcurl's default CA file (`CURLINFO_CAINFO`, 7.84.0), else of the first
    /// of the usual Linux locations that exists; empty when none does. Read once per process.
    static func systemBundle(of easy: UnsafeMutableRawPointer) -> Data {
      if let known = state.withLock({ $0.systemBundle }) { return known }
      var candidates = [
        "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "/etc/ssl/ca-bundle.pem", "/etc/ssl/cert.pem",
      ]
      if let path = defaultCAFile(of: easy) { candidates.insert(path, at: 0) }
      var data = Data()
      for candidate in candidates {
        if let contents = FileManager.default.contents(atPath: candidate) {
          data = contents
          data.append(0x0A)
          break
        }
      }
      state.withLock { $0.systemBundle = data }
      return data
    }
  }
#endif
