import SqueezeSystem
import Synchronization

/// Keeps the task-state counters and, when a task-state log is written, logs every change
/// (`--task-log`). Code paths call it at each step of a file's life: created (enqueued), running
/// on a thread, suspended for a reason, enqueued again when resumed, done; and for each
/// chunk of a big file: enqueued, running on a thread, done.
///
/// The hook API, for compression and decoding alike (a parallel restore calls the same
/// hooks):
///
/// ```swift
/// let task = tracker.create(id: index + 1, file: path)       // enqueued on the pool
/// task.run()                                                 // on the thread that runs it
/// guard await slots.acquire(for: task) else { … }            // suspended(slot) while waiting
/// let chunk = task.chunk(k)                                   // chunk k enqueued
/// group.addTask {
///   chunk.start()                                             // chunk running on this thread
///   defer { chunk.end(failed: …) }                            // and resumes a task waiting
///   …                                                         //   for its chunks
/// }
/// task.suspend(.chunks); _ = await group.next(); task.run()
/// task.suspend(.publication)                                  // handed to the publisher
/// task.finish() / task.fail(error, file: path)                // from any thread
/// ```
///
/// With a log, each change is applied to the counters and written to the log under the log's
/// lock, with its time taken there: the log's order is the order of the changes, so a reader
/// replaying it gets the same counts as the counters at every instant (`maxRunning` in
/// `end` is the replay's maximum), and a thread's running spans never overlap in it. Without
/// a log a change is a few relaxed atomic operations, and
/// nothing is formatted.
///
/// A tracker made with `keepsCounters: false` and no log does nothing at all: a run without
/// `--task-log` has no reader for the counters (only the log's sampler and its `end` event
/// read them), so there each hook returns at once, and every file shares one inert task
/// instead of an object of its own.
///
/// Building with `-Xswiftc -DSQUEEZE_NO_TASK_HOOKS` compiles every hook out (no counters, no
/// per-task object), so `scripts/log-overhead` can measure what the hooks cost against the
/// same commit without them.
package final class TaskTracker: Sendable {
  /// The live counters (left at zero by an inert tracker: ``isInert``).
  package let counters = TaskCounters()
  /// Where events go; nil when no log is written (then nothing is formatted).
  package let log: TaskLog?
  /// The one task every `create` returns when the hooks do nothing (``isInert``, or a build
  /// without hooks): its methods do nothing. Nil when the hooks count.
  private let inert: TrackedTask?

  /// - Parameters:
  ///   - log: receives one event per change, or nil.
  ///   - keepsCounters: keep ``counters`` without a log (the default, for readers such as
  ///     tests); false makes a tracker without a log inert (``isInert``). A log always has
  ///     its counters kept: its samples and `end` event read them.
  package init(log: TaskLog? = nil, keepsCounters: Bool = true) {
    self.log = log
    #if SQUEEZE_NO_TASK_HOOKS
      inert = TrackedTask(id: 0, phase: .finished, tracker: nil)
    #else
      inert =
        log == nil && !keepsCounters ? TrackedTask(id: 0, phase: .finished, tracker: nil) : nil
    #endif
  }

  /// True when the hooks do nothing: no log and no counters kept, or a build without hooks.
  package var isInert: Bool { inert != nil }

  /// Records a new task for file `id` (1-based), born enqueued on `executor`: it counts in
  /// `total`, `alive` and `enqueued`. `file` (the path, for the log) is evaluated only when a
  /// log is written.
  package func create(
    id: Int, file: @autoclosure () -> RawPath, on executor: TaskExecutor = .pool
  ) -> TrackedTask {
    if let inert { return inert }
    #if !SQUEEZE_NO_TASK_HOOKS
      let phase = TaskPhase.enqueued(on: executor)
      let task = TrackedTask(id: id, phase: phase, tracker: self)
      guard let log else {
        counters.apply(from: nil, to: phase)
        return task
      }
      let suffix = TaskLog.taskSuffix(
        id: id, phase: phase, thread: 0, file: file().displayString, error: nil)
      log.appendTimed(kind: .task, suffix: suffix) {
        counters.apply(from: nil, to: phase)
        return true
      }
      return task
    #else
      // Not reached: a build without hooks always sets `inert` (init). Were it ever unset,
      // an inert task is still the right answer there, not a crash.
      return TrackedTask(id: id, phase: .finished, tracker: nil)
    #endif
  }

  /// Records a file that failed before a task could start for it (an output collision, a
  /// file another argument already names): one `failed` task event with its file and
  /// error, so the timeline shows it. Counts in `total` and `completed`.
  package func failedBeforeStart(id: Int, file: @autoclosure () -> RawPath, error: String) {
    #if !SQUEEZE_NO_TASK_HOOKS
      if inert != nil { return }
      guard let log else {
        counters.apply(from: nil, to: .failed)
        return
      }
      let suffix = TaskLog.taskSuffix(
        id: id, phase: .failed, thread: 0, file: file().displayString, error: error)
      log.appendTimed(kind: .task, suffix: suffix) {
        counters.apply(from: nil, to: .failed)
        return true
      }
    #endif
  }

  /// Moves `task` to `next` if `condition` accepts its current phase (and the move is
  /// legal), updating the counters and logging the change in one step.
  ///
  /// - Returns: true when the task moved.
  @discardableResult
  fileprivate func move(
    _ task: TrackedTask, to next: TaskPhase, thread: Int32 = 0,
    file: (() -> RawPath)? = nil, error: String? = nil,
    when condition: (TaskPhase) -> Bool = { _ in true }
  ) -> Bool {
    var result = TrackedTask.Exchange.skipped
    if let log {
      let suffix = TaskLog.taskSuffix(
        id: task.id, phase: next, thread: thread, file: file.map { $0().displayString },
        error: error)
      log.appendTimed(kind: .task, suffix: suffix) {
        result = task.exchange(to: next, when: condition)
        guard case .moved(let from) = result else { return false }
        counters.apply(from: from, to: next)
        return true
      }
    } else {
      result = task.exchange(to: next, when: condition)
      if case .moved(let from) = result { counters.apply(from: from, to: next) }
    }
    switch result {
    case .moved: return true
    case .skipped: return false
    case .illegal(let from):
      // Outside the log's lock: the warning is an event of its own.
      illegalMove(id: task.id, from: from, to: next)
      return false
    }
  }

  /// A chunk of task `id` changed state (see ``TrackedChunk``).
  fileprivate func chunk(
    id: Int, index: Int, state: TaskState, thread: Int32, adjust: () -> Void
  ) {
    guard let log else {
      adjust()
      return
    }
    let suffix = TaskLog.chunkSuffix(id: id, chunk: index, state: state, thread: thread)
    log.appendTimed(kind: .chunk, suffix: suffix) {
      adjust()
      return true
    }
  }

  /// A move the state machine forbids: a bug in squeeze's bookkeeping, never in the user's
  /// data. Debug builds stop here naming both phases; release builds log a warning and go
  /// on, because a diagnostics bug must never abort an unattended backup.
  fileprivate func illegalMove(id: Int, from: TaskPhase, to: TaskPhase) {
    assertionFailure("task \(id): illegal transition from \(from) to \(to)")
    log?.warning("task \(id): illegal transition from \(from) to \(to) ignored")
  }
}

/// One file's task as the task-state log sees it (its id is the file's number in the run,
/// from 1). Every thread that touches the task moves it: its own code (running, suspended,
/// enqueued on an actor), whoever resumes it (a slot released, a chunk ended: enqueued on the
/// pool), and whoever ends it (the publisher's thread). The phase is one atomic, changed
/// only through legal moves (`TaskPhase/canMove(to:)`).
package final class TrackedTask: Sendable {
  /// The task's id: its file's index in the run, starting at 1.
  package let id: Int
  /// The phase, packed (``TaskPhase/packed``).
  private let phase: Atomic<UInt16>
  /// Nil only for the inert task of a build without hooks.
  private let tracker: TaskTracker?

  fileprivate init(id: Int, phase: TaskPhase, tracker: TaskTracker?) {
    self.id = id
    self.phase = Atomic(phase.packed)
    self.tracker = tracker
  }

  /// Where the task is now.
  package var current: TaskPhase { TaskPhase(packed: phase.load(ordering: .acquiring)) }
  /// Its state now.
  package var state: TaskState { current.state }

  /// What ``exchange(to:when:)`` did.
  fileprivate enum Exchange {
    /// Moved, from this phase.
    case moved(from: TaskPhase)
    /// Not moved: the condition declined the current phase.
    case skipped
    /// Not moved: the state machine forbids leaving this phase for the next.
    case illegal(from: TaskPhase)
  }

  /// Sets the phase to `next` if `condition` accepts the current one and the move is legal.
  fileprivate func exchange(to next: TaskPhase, when condition: (TaskPhase) -> Bool)
    -> Exchange
  {
    var packed = phase.load(ordering: .acquiring)
    while true {
      let from = TaskPhase(packed: packed)
      guard condition(from) else { return .skipped }
      guard from.canMove(to: next) else { return .illegal(from: from) }
      let (exchanged, original) = phase.compareExchange(
        expected: packed, desired: next.packed, ordering: .acquiringAndReleasing)
      if exchanged { return .moved(from: from) }
      packed = original
    }
  }

  /// The task's code runs on the calling thread from now on: it moves to `running` and the
  /// log records the thread (`gettid`).
  package func run() {
    #if !SQUEEZE_NO_TASK_HOOKS
      guard let tracker else { return }
      guard let log = tracker.log else {
        tracker.move(self, to: .running)
        return
      }
      log.noteQueue()
      tracker.move(self, to: .running, thread: ThreadName.currentID)
    #endif
  }

  /// The task's next job waits on `executor`'s queue: it hops onto the actor or the main
  /// actor (from running, or from the pool's queue where it was created).
  package func enqueue(on executor: TaskExecutor) {
    #if !SQUEEZE_NO_TASK_HOOKS
      tracker?.move(self, to: .enqueued(on: executor))
    #endif
  }

  /// The task awaits `reason`.
  package func suspend(_ reason: SuspensionReason) {
    #if !SQUEEZE_NO_TASK_HOOKS
      tracker?.move(self, to: .suspended(reason))
    #endif
  }

  /// Called by whoever resumes the task, on its own thread, just before it does: a task
  /// suspended for `reason` moves to `enqueued` on the pool, where it waits for a thread.
  /// Does nothing when the task is not waiting for `reason` (a chunk ended while its task
  /// was busy writing).
  package func resume(from reason: SuspensionReason) {
    #if !SQUEEZE_NO_TASK_HOOKS
      tracker?.move(
        self, to: .enqueued(on: .pool),
        when: { $0.state == .suspended && $0.reason == reason })
    #endif
  }

  /// The task is done: its output is published or up to date.
  package func finish() {
    #if !SQUEEZE_NO_TASK_HOOKS
      tracker?.move(self, to: .finished)
    #endif
  }

  /// The task is done with an error. The `failed` event names the file and the error, so a
  /// reader needs no earlier event to tell what failed.
  ///
  /// - Parameters:
  ///   - error: the failure's message (`FileFailure`'s description); evaluated only when a
  ///     log is written.
  ///   - file: the file, as displayed; evaluated only when a log is written.
  package func fail(
    _ error: @autoclosure () -> String, file: @escaping @autoclosure () -> RawPath
  ) {
    #if !SQUEEZE_NO_TASK_HOOKS
      guard let tracker else { return }
      if tracker.log == nil {
        tracker.move(self, to: .failed)
      } else {
        tracker.move(self, to: .failed, file: file, error: error())
      }
    #endif
  }

  /// Chunk `index` (from 0) of this task's file is ready to run: it counts in `enqueued`
  /// until ``TrackedChunk/start()``.
  package func chunk(_ index: Int) -> TrackedChunk {
    let chunk = TrackedChunk(task: self, index: index)
    #if !SQUEEZE_NO_TASK_HOOKS
      guard let tracker else { return chunk }
      tracker.chunk(id: id, index: index, state: .enqueued, thread: 0) {
        tracker.counters.adjustChunk(from: nil, to: .enqueued)
      }
    #endif
    return chunk
  }
}

/// One chunk of a big file (`ChunkLayout`), compressed or decoded as a child task of its
/// file's task: enqueued when created (``TrackedTask/chunk(_:)``), running on a thread from
/// ``start()`` to ``end(failed:)``. Chunks count in `running` and `enqueued`, not in
/// `alive` or `total` (they are not files); the log has a `chunk` event for each change.
package struct TrackedChunk: Sendable {
  /// The file's task.
  package let task: TrackedTask
  /// The chunk's index in its file, from 0.
  package let index: Int

  /// The chunk starts running on the calling thread.
  package func start() {
    #if !SQUEEZE_NO_TASK_HOOKS
      guard let tracker = task.trackerForChunks else { return }
      tracker.log?.noteQueue()
      tracker.chunk(
        id: task.id, index: index, state: .running,
        thread: tracker.log == nil ? 0 : ThreadName.currentID
      ) {
        tracker.counters.adjustChunk(from: .enqueued, to: .running)
      }
    #endif
  }

  /// The chunk is done (with an error when `failed`); a task waiting for its chunks is
  /// resumed (enqueued on the pool).
  package func end(failed: Bool = false) {
    #if !SQUEEZE_NO_TASK_HOOKS
      guard let tracker = task.trackerForChunks else { return }
      tracker.chunk(
        id: task.id, index: index, state: failed ? .failed : .finished, thread: 0
      ) {
        tracker.counters.adjustChunk(from: .running, to: nil)
      }
      task.resume(from: .chunks)
    #endif
  }
}

extension TrackedTask {
  /// The tracker, for the chunks' hooks.
  fileprivate var trackerForChunks: TaskTracker? { tracker }
}
