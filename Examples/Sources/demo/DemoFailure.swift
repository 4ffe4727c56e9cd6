/// A step of the tour did not do what it should: the demo reports it and exits non-zero.
struct DemoFailure: Error, CustomStringConvertible {
  let description: String

  init(_ description: String) {
    self.description = description
  }
}

/// Throws a ``DemoFailure`` with `message` unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
  if !condition { throw DemoFailure(message()) }
}
