import FetcherTesting
import Foundation
import Testing

@Suite("WeakReference")
struct WeakReferenceTests {
  final class Box: Sendable {}

  @Test("Sees its object while something keeps it, and nil once it is freed")
  func followsTheObjectsLife() {
    let reference = WeakReference<Box>()
    #expect(reference.object == nil)
    do {
      let box = Box()
      reference.object = box
      #expect(reference.object === box)
    }
    #expect(reference.object == nil)
  }

  @Test("Made with an object, keeps it no longer than its owner does")
  func doesNotKeepItsObject() {
    var box: Box? = Box()
    let reference = WeakReference(box)
    #expect(reference.object === box)
    box = nil
    #expect(reference.object == nil)
  }

  @Test("Set and read from many threads at once")
  func setAndReadConcurrently() {
    let reference = WeakReference<Box>()
    let kept = (0..<8).map { _ in Box() }
    DispatchQueue.concurrentPerform(iterations: 1_000) { index in
      if index % 2 == 0 {
        reference.object = kept[index % kept.count]
      } else if let object = reference.object {
        #expect(kept.contains { $0 === object })
      }
    }
    #expect(reference.object != nil)
  }
}
