import Dispatch
import Glibc
import TestSupport
import Testing

@testable import SqueezeCore
@testable import SqueezeSystem

/// How long a batch gathers: up to the gathering time for more requests, no longer once it
/// holds its target, and not at all once the publisher shuts down.
@Suite struct PublisherGatheringTests {
  /// A folder to publish into, and what the publisher's batches did.
  final class Bench: Sendable {
    let place: PublishingFolder
    let batches = DispatchSemaphore(value: 0)
    let published = Lock(0)
    /// When the last batch ended, read on the publisher's thread: a test's own clock
    /// reading after an `await` also counts the wait for a thread of the cooperative pool,
    /// which a full test run keeps busy for minutes.
    let lastBatchEnded = Lock<ContinuousClock.Instant?>(nil)

    init(_ name: String) throws { place = try PublishingFolder(name) }

    func publisher(capacity: Int, gatherWait: Int) -> Publisher {
      Publisher(
        discardRequested: AtomicFlag(), capacity: capacity,
        afterEachBatch: {
          self.lastBatchEnded.withLock { $0 = ContinuousClock.now }
          self.batches.signal()
        }, gatherWait: gatherWait)
    }

    /// Hands in a request for the file `name`.
    func submit(_ name: String, to publisher: Publisher) throws {
      publisher.submit(try place.request(name, for: publisher)) { outcome in
        #expect(outcome == .published)
        self.published.withLock { $0 += 1 }
      }
    }

    /// Waits up to `seconds` for the next batch to end; false when none did.
    func nextBatch(within seconds: Double) -> Bool {
      batches.wait(timeout: .now() + .milliseconds(Int(seconds * 1000))) == .success
    }
  }

  @Test func aBatchWaitsForMoreRequestsUpToItsGatheringTime() async throws {
    let bench = try Bench("publisher-gathers")
    // 5 s to gather, a target of 32: the second request, 0.2 s after the first, joins its
    // batch.
    let publisher = bench.publisher(capacity: 64, gatherWait: 5_000_000)
    try bench.submit("a", to: publisher)
    usleep(200_000)
    try bench.submit("b", to: publisher)
    #expect(bench.nextBatch(within: 30), "the batch was published after its gathering time")
    #expect(bench.published.withLock { $0 } == 2, "both requests in the first batch")
    let syncs = publisher.syncsPerformed
    #expect(syncs == 1, "one commit for the batch, found \(syncs)")
    await publisher.shutdown()
    #expect(bench.place.files.sorted() == ["a", "b"])
  }

  @Test func aBatchAtItsTargetIsPublishedWithoutWaitingOutTheGatheringTime() async throws {
    let bench = try Bench("publisher-full-batch")
    // A capacity of 8 makes a target of 4; the gathering time, 60 s, does not run out first.
    let publisher = bench.publisher(capacity: 8, gatherWait: 60_000_000)
    #expect(publisher.gatherTarget == 4)
    for name in ["a", "b", "c", "d"] { try bench.submit(name, to: publisher) }
    #expect(bench.nextBatch(within: 30), "the full batch was not published")
    #expect(bench.published.withLock { $0 } == 4)
    await publisher.shutdown()
    #expect(bench.place.files.count == 4)
  }

  @Test func aShutdownEndsTheGatheringAtOnce() async throws {
    let bench = try Bench("publisher-gathering-shutdown")
    let publisher = bench.publisher(capacity: 64, gatherWait: 60_000_000)
    try bench.submit("only", to: publisher)
    let clock = ContinuousClock()
    // The shutdown is to find the thread gathering, not about to start.
    let deadline = clock.now + .seconds(30)
    while !publisher.isGathering && clock.now < deadline { usleep(1_000) }
    #expect(publisher.isGathering)
    let start = clock.now
    await publisher.shutdown()
    // The gathering would run for 60 s; 30 s is room for any loaded machine.
    let ended = try #require(bench.lastBatchEnded.withLock { $0 })
    #expect(ended - start < .seconds(30))
    #expect(bench.published.withLock { $0 } == 1)
    #expect(bench.place.files == ["only"])
  }

  @Test func manyThreadsHandingInWithShortGatheringsLoseNoRequest() async throws {
    let bench = try Bench("publisher-gathering-threads")
    // A target of 2 and a 100 µs gathering: gatherings end by count, by time, and by both
    // at once, over and over.
    let publisher = bench.publisher(capacity: 4, gatherWait: 100)
    let perThread = 150
    // Four threads of their own (handing in blocks while 4 requests wait).
    DispatchQueue.concurrentPerform(iterations: 4) { thread in
      for index in 0..<perThread {
        #expect(throws: Never.self) { try bench.submit("t\(thread)-\(index)", to: publisher) }
      }
    }
    await publisher.shutdown()
    #expect(bench.published.withLock { $0 } == 4 * perThread)
    #expect(bench.place.files.count == 4 * perThread)
  }
}
