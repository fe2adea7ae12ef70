import TestSupport
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

  /// Without a log nothing reads the counters, so a run's tracker keeps none: every file
  /// shares one inert task and no hook counts. With a log it counts as ever (the log's
  /// samples and `end` event read the counters), whatever `keepsCounters` says.
  @Test func aRunsTrackerIsInertWithoutALogAndCountsWithOne() throws {
    let quiet = TaskTracker(log: nil, keepsCounters: false)
    #expect(quiet.isInert)
    let first = quiet.create(id: 1, file: "a")
    let second = quiet.create(id: 2, file: "b")
    #expect(first === second, "one shared task, no object a file")
    first.run()
    first.suspend(.publication)
    first.chunk(0).start()
    first.finish()
    quiet.failedBeforeStart(id: 3, file: "c", error: "output collision")
    #expect(quiet.counters.snapshot() == .init())
    #expect(quiet.counters.maxRunning.load(ordering: .relaxed) == 0)

    let folder = TemporaryFolder("inert-tracker")
    let log = try TaskLog(path: RawPath(folder.url("run.jsonl")), startTime: MonotonicClock.now())
    let logged = TaskTracker(log: log, keepsCounters: false)
    #expect(!logged.isInert)
    let task = logged.create(id: 1, file: "a")
    task.run()
    #expect(logged.counters.snapshot().running == 1)
    task.finish()
    #expect(logged.counters.snapshot().completed == 1)

    let diagnostics = try RunDiagnostics(logPath: nil, sampleInterval: 0.01, startTime: 0)
    #expect(diagnostics.tracker.isInert, "a run without --task-log keeps no counters")
    _ = diagnostics.end(files: 0, results: RunResults())
    let withLog = try RunDiagnostics(
      logPath: RawPath(folder.url("run2.jsonl")), sampleInterval: 0.01, startTime: 0)
    #expect(!withLog.tracker.isInert, "a run with --task-log counts")
    _ = withLog.end(files: 0, results: RunResults())
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
