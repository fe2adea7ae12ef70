import Dispatch
import Foundation
import Synchronization
import Testing

@testable import SqueezeSystem

/// The project's lock, in whichever form the build chose: `Synchronization.Mutex` in an
/// ordinary build, a `pthread_mutex_t` in `scripts/sanitize thread`'s (which runs this suite
/// too, so both forms are held to the same contract).
@Suite struct LockTests {
  /// Counts its destructions in a shared counter.
  final class Witness: Sendable {
    let counter: Counter
    init(_ counter: Counter) { self.counter = counter }
    deinit { counter.value.add(1, ordering: .relaxed) }
  }

  /// A counter shared between threads without the lock under test.
  final class Counter: Sendable {
    let value = Atomic<Int>(0)
  }

  /// A value that cannot be copied, as a file descriptor or a zlib stream is.
  struct Unique: ~Copyable {
    var count: Int
  }

  /// An error a critical section throws.
  struct Refusal: Error, Equatable {
    let code: Int
  }

  @Test(arguments: [(threads: 2, rounds: 200_000), (threads: 4, rounds: 100_000)])
  func everyIncrementMadeUnderTheLockIsKept(threads: Int, rounds: Int) {
    // A plain read-modify-write from threads that start together: without mutual exclusion,
    // they overwrite each other's increments and the total comes out short.
    let total = Lock(0)
    let overlaps = Counter()
    let inside = Counter()
    let ready = Counter()
    let done = DispatchSemaphore(value: 0)
    for _ in 0..<threads {
      Thread {
        ready.value.add(1, ordering: .relaxed)
        while ready.value.load(ordering: .relaxed) < threads {}
        for _ in 0..<rounds {
          total.withLock { value in
            if inside.value.add(1, ordering: .relaxed).newValue != 1 {
              overlaps.value.add(1, ordering: .relaxed)
            }
            let seen = value
            value = seen + 1
            inside.value.subtract(1, ordering: .relaxed)
          }
        }
        done.signal()
      }.start()
    }
    for _ in 0..<threads { done.wait() }
    #expect(total.withLock { $0 } == threads * rounds)
    #expect(overlaps.value.load(ordering: .relaxed) == 0, "two threads were inside at once")
  }

  @Test func anErrorThrownInsideIsPassedOnAndTheLockIsReleased() {
    let state = Lock([Int]())
    #expect(throws: Refusal(code: 7)) {
      try state.withLock { (values: inout [Int]) throws(Refusal) -> Void in
        values.append(1)
        throw Refusal(code: 7)
      }
    }
    // The change made before the throw stays, and the lock can be taken again (a lock left
    // held would block here).
    let values = state.withLock { values in
      values.append(2)
      return values
    }
    #expect(values == [1, 2])
  }

  @Test func aValueThatCannotBeCopiedIsChangedInPlace() {
    let state = Lock(Unique(count: 1))
    state.withLock { $0.count += 41 }
    #expect(state.withLock { $0.count } == 42)
  }

  @Test func theValueIsDestroyedWithTheLock() {
    let counter = Counter()
    do {
      let state = Lock(Witness(counter))
      #expect(state.withLock { $0.counter.value.load(ordering: .relaxed) } == 0)
    }
    #expect(counter.value.load(ordering: .relaxed) == 1)
  }
}
