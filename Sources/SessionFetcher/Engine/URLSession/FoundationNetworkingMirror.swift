#if FOUNDATION_NETWORKING
  @_spi(Reflection) import Swift
  import Foundation

  /// Reads FoundationNetworking's private stored properties by reflection, for the workarounds that
  /// must reach a task's libcurl handle (``ResponseReadPause``, ``ResponseHeadGuard``). A property that a
  /// toolchain renames or removes reads as nil, and the workaround then does nothing.
  ///
  /// Every data task is read this way. A property of a class instance that holds a struct or an enum
  /// is read where the runtime's description of the class puts it (`_forEachField`, looked up once
  /// per class and label), without a `Mirror`. Anything else goes through a `Mirror`, which knows a
  /// `weak` or `unowned` reference from a strong one (a field of a class type may be either, and
  /// only a strong one can be read as its type): where the property was found is remembered by type
  /// and label, and later reads make that child alone instead of every child before it.
  enum FoundationNetworkingMirror {
    /// The stored property `label` of `subject` or of one of its superclasses.
    static func child(_ subject: Any, _ label: String) -> Any? {
      if let objectClass = type(of: subject) as? AnyClass,
        let field = field(label, of: objectClass)
      {
        return read(field, of: subject as AnyObject)
      }
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

    /// A stored property of a class: its offset in an instance, and its type.
    private struct Field {
      var offset: Int
      var type: Any.Type
    }

    /// Bounded by the few FoundationNetworking classes and labels read; nil: not found.
    private static let fields = Locked<[PlaceKey: Field?]>([:])

    /// Where `label` is stored in instances of `objectClass` (its own properties or a superclass's).
    private static func field(_ label: String, of objectClass: AnyClass) -> Field? {
      let key = PlaceKey(type: ObjectIdentifier(objectClass), label: label)
      if let known = fields.withLock({ $0[key] }) { return known }
      var found: Field?
      var current: AnyClass? = objectClass
      while found == nil, let searched = current {
        var seen = false
        _ = _forEachField(of: searched, options: classFields) { name, offset, type, kind in
          guard String(cString: name) == label else { return true }
          seen = true
          if kind == .struct || kind == .enum { found = Field(offset: offset, type: type) }
          return false
        }
        if seen { break }
        current = _getSuperclass(searched)
      }
      fields.withLock { $0[key] = .some(found) }
      return found
    }

    /// `_EachFieldOptions.classType`, a `static var` (not concurrency-safe to read in Swift 6).
    private static let classFields = _EachFieldOptions(rawValue: 1 << 0)

    /// A copy of the value of `field` in `object`.
    private static func read(_ field: Field, of object: AnyObject) -> Any {
      func load<Value>(_: Value.Type) -> Any {
        withExtendedLifetime(object) {
          UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()).advanced(by: field.offset)
            .assumingMemoryBound(to: Value.self).pointee
        }
      }
      return _openExistential(field.type, do: load)
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
