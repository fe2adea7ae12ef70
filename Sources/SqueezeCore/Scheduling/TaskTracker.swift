import Glibc

/// Keeps the task-state counters and, when a task-state log is being written, logs each
/// task's transitions. Compression code paths call it at each step of a task's life (spec
/// §5): created (enqueued), started (running), waiting (suspended or enqueued), done.
final class TaskTracker: Sendable {
  /// The live counters.
  let counters = TaskCounters()
  /// Where `task` events go; nil when no log is written (then logging costs nothing).
  let log: TaskEventSink?

  /// - Parameter log: receives one event per task transition, or nil.
  init(log: TaskEventSink? = nil) {
    self.log = log
  }

  /// Records a new task for file `id` (1-based), born ready to run: it counts in `total`,
  /// `alive` and `enqueued`. `file` (the path, for the log) is evaluated only when a log is
  /// written.
  func create(id: Int, file: @autoclosure () -> RawPath) -> TrackedTask {
    counters.total.add(1, ordering: .relaxed)
    counters.alive.add(1, ordering: .relaxed)
    counters.adjust(.enqueued, by: 1)
    if let log { log.taskEvent(id: id, file: file(), state: .enqueued) }
    return TrackedTask(id: id, state: .enqueued, tracker: self)
  }

  func transition(id: Int, from: TaskState, to: TaskState) {
    counters.adjust(from, by: -1)
    counters.adjust(to, by: 1)
    if to.isTerminal {
      counters.alive.subtract(1, ordering: .relaxed)
      counters.completed.add(1, ordering: .relaxed)
    }
    log?.taskEvent(id: id, file: nil, state: to)
  }

  func illegalTransition(id: Int, from: TaskState, to: TaskState) {
    assertionFailure("task \(id): illegal transition from \(from) to \(to)")
    log?.warning("task \(id): illegal transition from \(from.rawValue) to \(to.rawValue) ignored")
  }

  /// A chunk of a big file is waiting for a slot: counts in `enqueued` (spec §5: chunks
  /// count in running and enqueued while events stay per file).
  func chunkEnqueued() { counters.adjust(.enqueued, by: 1) }
  /// A chunk's compression starts.
  func chunkStarted() {
    counters.adjust(.enqueued, by: -1)
    counters.adjust(.running, by: 1)
  }
  /// A chunk's compression ended.
  func chunkEnded() { counters.adjust(.running, by: -1) }
  /// A waiting chunk was abandoned (the run is stopping).
  func chunkAbandoned() { counters.adjust(.enqueued, by: -1) }

  /// A caller starts waiting to enter `ParallelCompressor`.
  func actorWaitBegan() { counters.actorQueue.add(1, ordering: .relaxed) }
  /// The caller is inside the actor.
  func actorWaitEnded() { counters.actorQueue.subtract(1, ordering: .relaxed) }
}

/// Receives task events for the task-state log.
protocol TaskEventSink: Sendable {
  /// Task `id` entered `state`; `file` is given on the first event of a task.
  func taskEvent(id: Int, file: RawPath?, state: TaskState)
  /// A diagnostics warning (an illegal transition in a release build).
  func warning(_ message: String)
}
