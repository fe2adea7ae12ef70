/// The states of a task in the task-state log (`--task-log`), counted as Instruments' Swift Tasks
/// track counts them (WWDC22 "Visualize and optimize Swift concurrency"): a task is
/// *running* while one of its jobs executes on a thread (also while that thread is blocked in
/// a system call), *enqueued* while a job of it sits on an executor's queue waiting for a
/// thread, the actor or the main actor, and *suspended* while it awaits something.
package enum TaskState: String, Sendable, CaseIterable, Codable {
  /// On an executor's queue, waiting for a thread of the cooperative pool, for
  /// `ParallelCompressor` or for the main actor (``TaskExecutor`` says which).
  case enqueued
  /// A job of the task executes on a thread right now (the log records which thread).
  case running
  /// Awaiting something (``SuspensionReason`` says what): a compression slot, its output's
  /// publication, its chunks, a continuation.
  case suspended
  /// Done: output published or up to date.
  case finished
  /// Done with an error.
  case failed

  /// The state's name in the task-state log.
  var jsonName: StaticString {
    switch self {
    case .enqueued: "enqueued"
    case .running: "running"
    case .suspended: "suspended"
    case .finished: "finished"
    case .failed: "failed"
    }
  }

  /// True for `finished` and `failed`, which end a task.
  package var isTerminal: Bool { self == .finished || self == .failed }

  /// Whether a task may move from `self` to `next`: any move between the live states,
  /// and from a live state to a terminal one; never out of a terminal state, never to
  /// the same state (an enqueued task may change executors: see ``TaskPhase``).
  func canMove(to next: TaskState) -> Bool {
    !isTerminal && next != self
  }
}

/// What a suspended task awaits: the `reason` of a `suspended` event (log schema 2).
package enum SuspensionReason: String, Sendable, CaseIterable {
  /// A compression slot (`--jobs`): resumed through its continuation by
  /// `WorkSlots/release()`.
  case slot
  /// Its output's publication (the sync and rename on the publisher's thread): ended by the
  /// publisher's completion handler, which runs exactly once on every path.
  case publication
  /// The chunks of its file, running as child tasks of a task group: resumed by the group
  /// when a chunk ends.
  case chunks
  /// Any other wait bridged with `withCheckedContinuation` (blocking work on a thread of its
  /// own, awaited).
  case continuation

  /// The reason's name in the task-state log.
  var jsonName: StaticString {
    switch self {
    case .slot: "slot"
    case .publication: "publication"
    case .chunks: "chunks"
    case .continuation: "continuation"
    }
  }

  /// True when the wait ends only through a continuation (or a completion handler with the
  /// same exactly-once contract): a task still waiting when the run ends is a leaked
  /// continuation (the `end` event's `leakedContinuations`). A `chunks` wait ends through
  /// the task group, which cannot leak.
  package var isContinuation: Bool { self != .chunks }
}

/// The executor an enqueued task waits for: the `on` of an `enqueued` event (log schema 2).
package enum TaskExecutor: String, Sendable, CaseIterable {
  /// A thread of Swift's cooperative pool (the global concurrent executor).
  case pool
  /// `ParallelCompressor`'s serial executor (its own thread): the task counts in
  /// `actorQueue` too.
  case actor
  /// The main actor.
  case mainActor = "main-actor"

  /// The executor's name in the task-state log.
  var jsonName: StaticString {
    switch self {
    case .pool: "pool"
    case .actor: "actor"
    case .mainActor: "main-actor"
    }
  }
}

/// A task's state with what qualifies it: the executor it is enqueued on, or the reason it
/// is suspended. Packed into 16 bits so a task keeps it in one atomic.
package struct TaskPhase: Sendable, Equatable, CustomStringConvertible {
  /// The state.
  package var state: TaskState
  /// The executor, when enqueued.
  package var executor: TaskExecutor?
  /// The reason, when suspended.
  package var reason: SuspensionReason?

  /// Enqueued on `executor`.
  package static func enqueued(on executor: TaskExecutor) -> TaskPhase {
    TaskPhase(state: .enqueued, executor: executor, reason: nil)
  }
  /// Running on a thread.
  package static let running = TaskPhase(state: .running, executor: nil, reason: nil)
  /// Suspended, awaiting `reason`.
  package static func suspended(_ reason: SuspensionReason) -> TaskPhase {
    TaskPhase(state: .suspended, executor: nil, reason: reason)
  }
  /// Finished.
  package static let finished = TaskPhase(state: .finished, executor: nil, reason: nil)
  /// Failed.
  package static let failed = TaskPhase(state: .failed, executor: nil, reason: nil)

  /// Whether a task may move from `self` to `next`: as ``TaskState/canMove(to:)``, and also
  /// from one executor's queue to another's (a task enqueued on the pool that hops onto the
  /// actor).
  func canMove(to next: TaskPhase) -> Bool {
    if state == .enqueued && next.state == .enqueued { return executor != next.executor }
    return state.canMove(to: next.state)
  }

  /// The phase in 16 bits: the state's index in the low byte, the executor's or reason's
  /// index plus one in the high byte.
  var packed: UInt16 {
    let stateIndex = UInt16(TaskState.allCases.firstIndex(of: state) ?? 0)
    var detail: UInt16 = 0
    if let executor { detail = UInt16(TaskExecutor.allCases.firstIndex(of: executor) ?? 0) + 1 }
    if let reason { detail = UInt16(SuspensionReason.allCases.firstIndex(of: reason) ?? 0) + 1 }
    return stateIndex | detail << 8
  }

  /// Unpacks `packed`.
  package init(packed: UInt16) {
    let states = TaskState.allCases
    state = states[min(Int(packed & 0xFF), states.count - 1)]
    let detail = Int(packed >> 8)
    executor = nil
    reason = nil
    if detail > 0 {
      if state == .enqueued, detail <= TaskExecutor.allCases.count {
        executor = TaskExecutor.allCases[detail - 1]
      } else if state == .suspended, detail <= SuspensionReason.allCases.count {
        reason = SuspensionReason.allCases[detail - 1]
      }
    }
  }

  /// A phase with every part given (`packed` values unpacked, tests).
  package init(state: TaskState, executor: TaskExecutor?, reason: SuspensionReason?) {
    self.state = state
    self.executor = executor
    self.reason = reason
  }

  /// The phase in words: `enqueued on pool`, `suspended for slot`, `running`.
  package var description: String {
    if let executor { return "enqueued on \(executor.rawValue)" }
    if let reason { return "suspended for \(reason.rawValue)" }
    return state.rawValue
  }
}
