import Synchronization

/// A Boolean that any thread may set and read without a lock (a sticky flag: once set it
/// stays set), for "stop now" requests and one-time discoveries.
package final class AtomicFlag: Sendable {
  private let value = Atomic<Bool>(false)

  /// A flag that is not set.
  package init() {}

  /// True once ``set()`` has been called.
  package var isSet: Bool { value.load(ordering: .acquiring) }

  /// Sets the flag.
  package func set() { value.store(true, ordering: .releasing) }
}
