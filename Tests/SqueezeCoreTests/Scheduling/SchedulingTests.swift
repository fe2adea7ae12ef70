import Testing

@testable import SqueezeCore
@testable import SqueezeSystem
@testable import SqueezeTaskLog

/// Counts how many holders are inside at once and the most there ever were.
final class Occupancy: Sendable {
  private let state = Lock((inside: 0, most: 0))
  func enter() {
    state.withLock {
      $0.inside += 1
      $0.most = max($0.most, $0.inside)
    }
  }
  func leave() { state.withLock { $0.inside -= 1 } }
  var most: Int { state.withLock { $0.most } }
}

@Suite struct SchedulingTests {
  @Test(arguments: [1, 2, 3, 8])
  func slotsNeverLetMoreThanTheWidthIn(width: Int) async {
    let slots = WorkSlots(width: width)
    let occupancy = Occupancy()
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<64 {
        group.addTask {
          guard await slots.acquire() else { return }
          occupancy.enter()
          await Task.yield()
          occupancy.leave()
          slots.release()
        }
      }
    }
    #expect(occupancy.most <= width)
    #expect(occupancy.most >= 1)
  }

  @Test func closingSlotsWakesEveryWaiterWithFalse() async {
    let slots = WorkSlots(width: 1)
    #expect(await slots.acquire())
    async let second = slots.acquire()
    async let third = slots.acquire()
    try? await Task.sleep(for: .milliseconds(20))
    slots.close()
    #expect(await second == false)
    #expect(await third == false)
    #expect(await slots.acquire() == false)
  }

  @Test func taskStatesMoveOnlyForward() {
    #expect(TaskState.enqueued.canMove(to: .running))
    #expect(TaskState.running.canMove(to: .suspended))
    #expect(TaskState.suspended.canMove(to: .finished))
    #expect(!TaskState.finished.canMove(to: .running))
    #expect(!TaskState.failed.canMove(to: .finished))
    #expect(!TaskState.running.canMove(to: .running))
  }

  @Test func countersFollowATasksLife() {
    let tracker = TaskTracker()
    let task = tracker.create(id: 1, file: "a")
    #expect(
      tracker.counters.snapshot()
        == .init(
          running: 0, enqueued: 1, suspended: 0, alive: 1, total: 1, completed: 0, actorQueue: 0))
    task.run()
    #expect(tracker.counters.snapshot().running == 1)
    #expect(tracker.counters.snapshot().enqueued == 0)
    task.suspend(.publication)
    #expect(tracker.counters.continuationWaits.load(ordering: .relaxed) == 1)
    task.finish()
    #expect(tracker.counters.continuationWaits.load(ordering: .relaxed) == 0)
    #expect(
      tracker.counters.snapshot()
        == .init(
          running: 0, enqueued: 0, suspended: 0, alive: 0, total: 1, completed: 1, actorQueue: 0))
    #expect(tracker.counters.maxRunning.load(ordering: .relaxed) == 1)
    #expect(tracker.counters.maxEnqueued.load(ordering: .relaxed) == 1)
  }

  @Test(arguments: [
    (isolation: Isolation.mainActor, place: SchedulingStrategy.Place.mainActor, chunks: false),
    (isolation: .actor, place: .insideActor, chunks: false),
    (isolation: .nonisolated, place: .fileTask, chunks: true),
    (isolation: .detached, place: .fileTask, chunks: true),
    (isolation: .blocking, place: .fileTask, chunks: true),
  ])
  func eachIsolationModeIsOneStrategy(
    isolation: Isolation, place: SchedulingStrategy.Place, chunks: Bool
  ) {
    let strategy = isolation.strategy
    #expect(strategy.place == place)
    #expect(strategy.splitsBigFiles == chunks)
    #expect((strategy.start == .allAtOnce) == (isolation == .detached))
    #expect(strategy.batchesSmallFiles == (isolation == .nonisolated || isolation == .blocking))
    #expect(strategy.blocksPoolThreads == (isolation == .blocking))
  }
}
