import Synchronization

/// The task-state counters of the task-state log (`--task-log`), kept by the code paths
/// themselves (through ``TaskTracker``) as atomics, so a sampler thread can read them without
/// entering any actor and disturbing what it measures. An increment is one atomic
/// operation, a small share of compressing even a small file.
package final class TaskCounters: Sendable {
  /// Jobs executing on a thread right now: tasks and chunks of big files.
  package let running = Atomic<Int>(0)
  /// Tasks and chunks on an executor's queue: waiting for a thread, the actor or the main
  /// actor.
  package let enqueued = Atomic<Int>(0)
  /// Tasks awaiting something (a slot, their publication, their chunks, a continuation).
  package let suspended = Atomic<Int>(0)
  /// Tasks created and not yet finished.
  package let alive = Atomic<Int>(0)
  /// Tasks created so far (one per file, also for files that failed before starting).
  package let total = Atomic<Int>(0)
  /// Tasks that finished or failed.
  package let completed = Atomic<Int>(0)
  /// Tasks enqueued on `ParallelCompressor`'s executor, waiting to enter the actor.
  package let actorQueue = Atomic<Int>(0)
  /// Tasks suspended on a continuation (reasons `slot`, `publication`, `continuation`):
  /// what is left when the run ends is the `end` event's `leakedContinuations`.
  package let continuationWaits = Atomic<Int>(0)
  /// The most `running` has been.
  package let maxRunning = Atomic<Int>(0)
  /// The most `enqueued` has been.
  package let maxEnqueued = Atomic<Int>(0)

  /// Every counter at zero.
  package init() {}

  /// One reading of every counter.
  package struct Snapshot: Sendable, Equatable {
    /// ``TaskCounters/running``.
    package var running = 0
    /// ``TaskCounters/enqueued``.
    package var enqueued = 0
    /// ``TaskCounters/suspended``.
    package var suspended = 0
    /// ``TaskCounters/alive``.
    package var alive = 0
    /// ``TaskCounters/total``.
    package var total = 0
    /// ``TaskCounters/completed``.
    package var completed = 0
    /// ``TaskCounters/actorQueue``.
    package var actorQueue = 0
  }

  /// Reads every counter (each atomically; with a log the sampler reads them under the log's
  /// lock, where every change is made, so the set is one instant).
  package func snapshot() -> Snapshot {
    Snapshot(
      running: running.load(ordering: .relaxed), enqueued: enqueued.load(ordering: .relaxed),
      suspended: suspended.load(ordering: .relaxed), alive: alive.load(ordering: .relaxed),
      total: total.load(ordering: .relaxed), completed: completed.load(ordering: .relaxed),
      actorQueue: actorQueue.load(ordering: .relaxed))
  }

  /// Accounts a task's move from `from` (nil: the task is new) to `to`.
  package func apply(from: TaskPhase?, to: TaskPhase) {
    if let from {
      leave(from)
    } else {
      total.add(1, ordering: .relaxed)
      if !to.state.isTerminal { alive.add(1, ordering: .relaxed) }
    }
    enter(to)
    if to.state.isTerminal {
      if from != nil { alive.subtract(1, ordering: .relaxed) }
      completed.add(1, ordering: .relaxed)
    }
  }

  /// Accounts a chunk's move from `from` to `to` (nil: not yet created, or done).
  func adjustChunk(from: TaskState?, to: TaskState?) {
    if let from { adjust(from, by: -1) }
    if let to { adjust(to, by: 1) }
  }

  private func enter(_ phase: TaskPhase) {
    adjust(phase.state, by: 1)
    if phase.executor == .actor { actorQueue.add(1, ordering: .relaxed) }
    if phase.reason?.isContinuation == true { continuationWaits.add(1, ordering: .relaxed) }
  }

  private func leave(_ phase: TaskPhase) {
    adjust(phase.state, by: -1)
    if phase.executor == .actor { actorQueue.subtract(1, ordering: .relaxed) }
    if phase.reason?.isContinuation == true { continuationWaits.subtract(1, ordering: .relaxed) }
  }

  /// Adds `delta` to the counter for `state` (none for terminal states), tracking the
  /// maxima of `running` and `enqueued`.
  private func adjust(_ state: TaskState, by delta: Int) {
    switch state {
    case .running:
      let value = running.wrappingAdd(delta, ordering: .relaxed).newValue
      if delta > 0 { raise(maxRunning, to: value) }
    case .enqueued:
      let value = enqueued.wrappingAdd(delta, ordering: .relaxed).newValue
      if delta > 0 { raise(maxEnqueued, to: value) }
    case .suspended:
      suspended.wrappingAdd(delta, ordering: .relaxed)
    case .finished, .failed:
      break
    }
  }

  private func raise(_ maximum: borrowing Atomic<Int>, to value: Int) {
    var current = maximum.load(ordering: .relaxed)
    while value > current {
      let (exchanged, original) = maximum.compareExchange(
        expected: current, desired: value, ordering: .relaxed)
      if exchanged { return }
      current = original
    }
  }
}
