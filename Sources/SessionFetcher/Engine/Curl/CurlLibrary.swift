#if LIBCURL_ENGINE
  import CCurl

  /// The libcurl the engine uses, opened at run time: on Linux the `libcurl.so.4` FoundationNetworking
  /// itself links, on macOS the system's `/usr/lib/libcurl.4.dylib` (or the file named by the
  /// environment variable `SESSIONFETCHER_LIBCURL_PATH`, read once at the first use).
  ///
  /// Loading happens once per process, on first use of any member, from any thread; the answer never
  /// changes afterwards.
  package enum CurlLibrary {
    /// Why the libcurl engine cannot be used (the library is missing, older than 7.68.0, or lacks a
    /// function), or nil when it can.
    package static var unavailableReason: String? {
      guard ccurl_load() != 0 else { return nil }
      return ccurl_unavailable_reason().map { String(cString: $0) } ?? "libcurl could not be loaded"
    }

    /// The loaded libcurl's version, such as `"7.88.1"`, or nil when it is unavailable.
    package static var version: String? {
      guard ccurl_load() == 0, let version = ccurl_version() else { return nil }
      return String(cString: version)
    }

    /// The loaded libcurl's version as a number (`0x075801` for 7.88.1), or 0 when unavailable.
    package static var versionNumber: UInt32 {
      guard ccurl_load() == 0 else { return 0 }
      return ccurl_version_number()
    }

    /// libcurl's own text for a `CURLcode`.
    static func describe(code: Int32) -> String {
      String(cString: ccurl_easy_strerror(code))
    }
  }
#else
  import CCurl

  /// The libcurl engine is not available on this platform (iOS, tvOS, watchOS, visionOS).
  package enum CurlLibrary {
    /// Always says why, with the C target's sentence.
    package static var unavailableReason: String? {
      ccurl_unavailable_reason().map { String(cString: $0) }
        ?? "the libcurl engine is unavailable on this platform"
    }
    /// Always nil.
    package static var version: String? { nil }
    /// Always 0.
    package static var versionNumber: UInt32 { 0 }
  }
#endif
