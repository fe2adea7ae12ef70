import SqueezeSystem
import SqueezeTaskLog
import Synchronization

/// An asynchronous counting semaphore: at most `width` holders at once, others suspended in
/// first-come order. It bounds how much work (files or chunks, compressed, restored or
/// tested) is started at once: `--jobs`. Waiting suspends the task; it never blocks a thread
/// of the cooperative pool.
///
/// A tracked task that has to wait is `suspended` (reason `slot`) in the task-state log, and
/// moves to `enqueued` when ``release()`` hands it a slot: from then on it waits for a thread,
/// not for a slot.
final class WorkSlots: Sendable {
  /// A task waiting for a slot.
  private struct Waiter {
    var continuation: CheckedContinuation<Bool, Never>
    var task: TrackedTask?

    /// Resumes the task, which moves to `enqueued` first (it waits for a thread next).
    func resume(returning granted: Bool) {
      task?.resume(from: .slot)
      continuation.resume(returning: granted)
    }
  }

  private struct State {
    var available: Int
    var waiters: [Waiter] = []
    var head = 0
    var closed = false
  }
  private let state: Lock<State>

  /// - Parameter width: how many holders at once (≥ 1).
  init(width: Int) {
    state = Lock(State(available: max(1, width)))
  }

  /// Takes a slot, suspending until one is free.
  ///
  /// - Parameter task: the task that waits, when it is tracked: `suspended` (reason `slot`)
  ///   while it waits, `enqueued` once resumed, `running` again when this returns. A slot
  ///   free at once changes nothing.
  /// - Returns: false when the slots were closed (the run is stopping): no slot was taken.
  func acquire(for task: TrackedTask? = nil) async -> Bool {
    enum Immediate { case granted, refused, wait }
    let immediate = state.withLock { state -> Immediate in
      if state.closed { return .refused }
      if state.available > 0 {
        state.available -= 1
        return .granted
      }
      return .wait
    }
    switch immediate {
    case .granted: return true
    case .refused: return false
    case .wait:
      task?.suspend(.slot)
      let granted = await withCheckedContinuation {
        (continuation: CheckedContinuation<Bool, Never>) in
        let waiter = Waiter(continuation: continuation, task: task)
        let resumeNow = state.withLock { state -> Bool? in
          if state.closed { return false }
          if state.available > 0 {
            state.available -= 1
            return true
          }
          state.waiters.append(waiter)
          return nil
        }
        if let resumeNow { waiter.resume(returning: resumeNow) }
      }
      task?.run()
      return granted
    }
  }

  /// Takes a slot only if one is free now, without waiting.
  ///
  /// - Returns: true when a slot was taken; false when none is free or the slots were
  ///   closed.
  func tryAcquire() -> Bool {
    state.withLock { state in
      guard !state.closed, state.available > 0 else { return false }
      state.available -= 1
      return true
    }
  }

  /// Returns a slot, handing it straight to the longest waiter if there is one.
  func release() {
    let next = state.withLock { state -> Waiter? in
      if state.head < state.waiters.count {
        let waiter = state.waiters[state.head]
        state.head += 1
        if state.head > 64 && state.head * 2 > state.waiters.count {
          state.waiters.removeFirst(state.head)
          state.head = 0
        }
        return waiter
      }
      state.available += 1
      return nil
    }
    next?.resume(returning: true)
  }

  /// Refuses all further acquisitions and wakes every waiter with `false`.
  func close() {
    let waiters = state.withLock { state -> [Waiter] in
      state.closed = true
      let waiting = Array(state.waiters[state.head...])
      state.waiters = []
      state.head = 0
      return waiting
    }
    for waiter in waiters { waiter.resume(returning: false) }
  }
}
