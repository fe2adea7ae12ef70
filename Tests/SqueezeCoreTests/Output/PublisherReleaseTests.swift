import Dispatch
import Foundation
import Glibc
import TestSupport
import Testing

@testable import SqueezeCore
@testable import SqueezeSystem

/// Notes the thread that lets go of it last.
final class Sentinel: Sendable {
  let released: @Sendable (Int32) -> Void
  init(released: @escaping @Sendable (Int32) -> Void) { self.released = released }
  deinit { released(ThreadName.currentID) }
}

/// Who lets go of a request once it is published: the thread that hands in the next one, so
/// its memory is freed where the same objects are allocated, never more than the limit
/// waiting, and none left once the publisher has shut down.
@Suite struct PublisherReleaseTests {
  /// What the sentinels saw: the threads that let go of them, and how many are alive.
  final class Tally: Sendable {
    let state = Lock((releasedOn: [Int32](), alive: 0, done: 0))
    func sentinel() -> Sentinel {
      state.withLock { $0.alive += 1 }
      return Sentinel { thread in
        self.state.withLock {
          $0.releasedOn.append(thread)
          $0.alive -= 1
        }
      }
    }
  }

  /// Submits `count` requests for files `first...` from the calling thread, each completion
  /// holding a sentinel, and returns once the batch hook has seen `count + already`
  /// completions (the batches are set aside by then).
  static func submit(
    _ count: Int, from first: Int, publisher: Publisher, batches: DispatchSemaphore,
    tally: Tally, place: PublishingFolder
  ) throws {
    for index in first..<(first + count) {
      let request = try place.request("f\(index)", for: publisher)
      let sentinel = tally.sentinel()
      publisher.submit(request) { outcome in
        withExtendedLifetime(sentinel) {
          #expect(outcome == .published)
          tally.state.withLock { $0.done += 1 }
        }
      }
    }
    while tally.state.withLock({ $0.done }) < first + count { batches.wait() }
  }

  @Test func aPublishedRequestIsLetGoOfByTheThreadThatHandsInTheNext() async throws {
    let place = try PublishingFolder("publisher-release")
    let batches = DispatchSemaphore(value: 0)
    let publisher = Publisher(
      discardRequested: AtomicFlag(), capacity: 8, afterEachBatch: { batches.signal() })
    let tally = Tally()
    // Both hand-ins on one thread (no suspension between them): the first request is done
    // and set aside before the second is handed in, which lets go of it.
    let (submitter, releasedOn) = try {
      try Self.submit(
        1, from: 0, publisher: publisher, batches: batches, tally: tally, place: place)
      try Self.submit(
        1, from: 1, publisher: publisher, batches: batches, tally: tally, place: place)
      return (ThreadName.currentID, tally.state.withLock { $0.releasedOn })
    }()
    #expect(releasedOn == [submitter], "let go of by the submitting thread")
    await publisher.shutdown()
    #expect(tally.state.withLock { $0.alive } == 0, "none left after the shutdown")
    #expect(place.files.count == 2)
  }

  @Test func atMostTheLimitOfPublishedRequestsWaitToBeLetGoOf() async throws {
    let place = try PublishingFolder("publisher-release-limit")
    let batches = DispatchSemaphore(value: 0)
    let publisher = Publisher(
      discardRequested: AtomicFlag(), capacity: 200, afterEachBatch: { batches.signal() })
    #expect(publisher.spentLimit == 64)
    let tally = Tally()
    let count = 150
    try Self.submit(
      count, from: 0, publisher: publisher, batches: batches, tally: tally, place: place)
    await publisher.drain()
    let alive = tally.state.withLock { $0.alive }
    #expect(alive <= publisher.spentLimit, "\(alive) requests done still held")
    await publisher.shutdown()
    #expect(tally.state.withLock { $0.alive } == 0, "none left after the shutdown")
    #expect(place.files.count == count)
  }
}
