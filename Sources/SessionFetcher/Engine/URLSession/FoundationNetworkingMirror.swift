#if canImport(FoundationNetworking)
  import Foundation

  /// Reads FoundationNetworking's private stored properties by reflection, for the workarounds that
  /// must reach a task's libcurl handle (``ReceivePause``, ``ResponseHeadGuard``). A property that a
  /// toolchain renames or removes reads as nil, and the workaround then does nothing.
  ///
  /// Every data task is read this way: where a property was found is remembered by type and label,
  /// and later reads go to that child alone instead of making (and copying) every child before it.
  enum FoundationNetworkingMirror {
    /// The stored property `label` of `subject` or of one of its superclasses.
    static func child(_ subject: Any, _ label: String) -> Any? {
      let key = PlaceKey(type: ObjectIdentifier(type(of: subject)), label: label)
      if let place = places.withLock({ $0[key] }) {
        // A place that does not hold `label` (an enum in another case) is searched again.
        if let value = child(subject, label, at: place) { return value }
      }
      var mirror: Mirror? = Mirror(reflecting: subject)
      var depth = 0
      while let current = mirror {
        for (offset, child) in current.children.enumerated() where child.label == label {
          places.withLock { $0[key] = Place(depth: depth, offset: offset) }
          return child.value
        }
        mirror = current.superclassMirror
        depth += 1
      }
      return nil
    }

    /// The value inside an optional (nil for `.none`), or the value itself.
    static func unwrapped(_ value: Any?) -> Any? {
      guard let value else { return nil }
      guard let optional = value as? any OptionalValue else { return value }
      return optional.wrappedValue
    }

    /// Where a stored property was found: how many superclass mirrors up, and its position among
    /// that mirror's children.
    private struct Place {
      var depth: Int
      var offset: Int
    }

    private struct PlaceKey: Hashable {
      var type: ObjectIdentifier
      var label: String
    }

    /// Bounded by the few FoundationNetworking types and labels read.
    private static let places = Locked<[PlaceKey: Place]>([:])

    private static func child(_ subject: Any, _ label: String, at place: Place) -> Any? {
      var mirror = Mirror(reflecting: subject)
      for _ in 0..<place.depth {
        guard let superclass = mirror.superclassMirror else { return nil }
        mirror = superclass
      }
      let children = mirror.children
      guard place.offset < children.count else { return nil }
      let child = children[children.index(children.startIndex, offsetBy: place.offset)]
      return child.label == label ? child.value : nil
    }
  }

  /// An `Optional` of any wrapped type, for ``FoundationNetworkingMirror/unwrapped(_:)``.
  private protocol OptionalValue {
    var wrappedValue: Any? { get }
  }

  extension Optional: OptionalValue {
    fileprivate var wrappedValue: Any? { map { $0 } }
  }
#endif
