/// The states of a task in the task-state log (spec §5), after the Swift Tasks track of
/// Instruments (WWDC22 "Visualize and optimize Swift concurrency").
enum TaskState: String, Sendable, CaseIterable, Codable {
  /// Ready to run but waiting: for the actor, the main actor, a free slot or a thread.
  case enqueued
  /// Its compression is executing right now.
  case running
  /// Waiting on something else: its output's publication, its chunks, the disk.
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
  var isTerminal: Bool { self == .finished || self == .failed }

  /// Whether a task may move from `self` to `next`: any move between the live states,
  /// and from a live state to a terminal one; never out of a terminal state, never to
  /// the same state.
  func canMove(to next: TaskState) -> Bool {
    !isTerminal && next != self
  }
}

/// A task's position in its life, moved only through legal transitions.
///
/// An illegal transition is a bug in squeeze's bookkeeping, never in the user's data: debug
/// builds stop at an `assertionFailure` naming both states; release builds log a warning
/// through ``TaskTracker`` and go on, because a diagnostics bug must never abort an
/// unattended backup.
struct TrackedTask: Sendable {
  /// The task's id: its file's index in the run, starting at 1.
  let id: Int
  /// Where it is now.
  private(set) var state: TaskState
  let tracker: TaskTracker

  /// Moves to `next`, updating the counters and logging the transition.
  mutating func move(to next: TaskState) {
    guard state.canMove(to: next) else {
      tracker.illegalTransition(id: id, from: state, to: next)
      return
    }
    tracker.transition(id: id, from: state, to: next)
    state = next
  }
}
