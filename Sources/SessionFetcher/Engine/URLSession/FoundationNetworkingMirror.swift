#if FOUNDATION_NETWORKING
  import Foundation

  /// Reads FoundationNetworking's private stored properties by reflection, for the workarounds that
  /// must reach a task's libcurl handle (``ReceivePause``, ``ResponseHeadGuard``). A property that a
  /// toolchain renames or removes reads as nil, and the workaround then does nothing.
  enum FoundationNetworkingMirror {
    /// The stored property `label` of `subject` or of one of its superclasses.
    static func child(_ subject: Any, _ label: String) -> Any? {
      var mirror: Mirror? = Mirror(reflecting: subject)
      while let current = mirror {
        if let value = current.children.first(where: { $0.label == label })?.value { return value }
        mirror = current.superclassMirror
      }
      return nil
    }

    /// The value inside an optional (nil for `.none`), or the value itself.
    static func unwrapped(_ value: Any?) -> Any? {
      guard let value else { return nil }
      let mirror = Mirror(reflecting: value)
      guard mirror.displayStyle == .optional else { return value }
      return mirror.children.first?.value
    }
  }
#endif
