import Synchronization

/// An asynchronous counting semaphore: at most `width` holders at once, others suspended in
/// first-come order. It bounds how many compressions (files or chunks) are started at once:
/// `--jobs`. Waiting suspends the task; it never chunks a thread of the cooperative pool.
final class CompressionSlots: Sendable {
  private struct State {
    var available: Int
    var waiters: [CheckedContinuation<Bool, Never>] = []
    var head = 0
    var closed = false
  }
  private let state: Mutex<State>

  /// - Parameter width: how many holders at once (≥ 1).
  init(width: Int) {
    state = Mutex(State(available: max(1, width)))
  }

  /// Takes a slot, suspending until one is free.
  ///
  /// - Returns: false when the slots were closed (the run is stopping): no slot was taken.
  func acquire() async -> Bool {
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
      return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let resumeNow = state.withLock { state -> Bool? in
          if state.closed { return false }
          if state.available > 0 {
            state.available -= 1
            return true
          }
          state.waiters.append(continuation)
          return nil
        }
        if let resumeNow { continuation.resume(returning: resumeNow) }
      }
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
    let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
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
    let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
      state.closed = true
      let waiting = Array(state.waiters[state.head...])
      state.waiters = []
      state.head = 0
      return waiting
    }
    for waiter in waiters { waiter.resume(returning: false) }
  }
}
