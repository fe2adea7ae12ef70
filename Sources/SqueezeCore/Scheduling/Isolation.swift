/// Where compression runs: the stages of the WWDC22 session "Visualize and optimize Swift
/// concurrency" (spec §1), selected with `--isolation`.
enum Isolation: String, Sendable, CaseIterable {
  /// Stage 1: on the main actor, inside the progress reporter's isolation. One file at a time
  /// and the main actor blocked while it compresses: hangs.
  case mainActor = "main-actor"
  /// Stage 2: inside `actor ParallelCompressor`'s isolation. One at a time; the rest wait
  /// enqueued on the actor.
  case actor
  /// Stage 3, the product's way (default): `nonisolated` compression in child tasks, at most
  /// `--jobs` at once; the actor is entered only briefly for bookkeeping.
  case nonisolated
  /// Stage 3 literally, as the session's final code: one `Task.detached` per file, all
  /// created at once, to show what unbounded task creation costs.
  case detached
}
