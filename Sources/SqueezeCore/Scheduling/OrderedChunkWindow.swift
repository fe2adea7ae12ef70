import SqueezeSystem
import SqueezeTaskLog

// The window of chunks in flight, written once for every user: a big file compressed
// chunk-parallel, a big file restored chunk-parallel, and a stream (`-c`, standard input).
//
// Order. Chunk k's input comes from the producer in order, its work runs in a child task of
// a task group, and its output is handed to the consumer in order, whatever order the child
// tasks finish in: outputs that arrive early wait in a dictionary keyed by index until the
// ones before them have been consumed. A gzip member is written front to back, so the
// consumer is where a chunk's bytes are written (and its CRC-32 combined).
//
// Width and memory. At most `width` chunks are started and not yet consumed: running, or
// finished and waiting for their turn. A chunk's output is the only buffer the window holds,
// so memory is at most `width` outputs plus the one input the producer has ready, whatever
// the input's length. The width is `--jobs + 1`: one more than can run at once, so a core is
// never idle while the consumer writes.
//
// Overlap. The producer is asked for chunk k+1 as soon as chunk k has started, so reading or
// scanning the next chunk overlaps the work of the ones in flight.
//
// Slots. With ``WorkSlots`` each chunk takes a slot before it starts and gives it
// back when its work ends, so chunks share the run's width with whole files; waiting for a
// slot suspends the file's task (reason `slot`).
//
// Stopping. The window stops starting chunks at the first of: a chunk whose work failed
// (its error is thrown), a consumer that says it is done, a producer or consumer error, the
// run's stop flag or closed slots (the `interruption` error), the task's cancellation (the
// same). Chunks still running are then cancelled and awaited (the file's task is suspended,
// reason `chunks`, while it waits), and every output not consumed goes to `discard` (a
// restore gives its buffers back there): the group always drains, so no work outlives the
// window.

/// Runs the work of a sequence of chunks in parallel, at most ``width`` in flight, and hands
/// their outputs to a consumer in chunk order (the design notes are at the top of this
/// file).
///
/// Generic over what a chunk is: its `Input` (a range of a file, bytes read from a stream),
/// the output of its work (`Output`: compressed bytes, restored bytes), and the error that
/// ends the window (`Failure`).
struct OrderedChunkWindow<Input: Sendable, Output: Sendable, Failure: Error> {
  /// What the producer has next.
  enum Next {
    /// Chunk input `Input`; `isLast` when no chunk follows it.
    case chunk(Input, isLast: Bool)
    /// No more chunks (the producer stops early: what follows is not done in chunks).
    case end
  }

  /// What the consumer decides after a chunk.
  enum Verdict {
    /// Go on with the next chunk.
    case more
    /// Stop here: the chunks after this one are not needed.
    case done
  }

  /// The most chunks started and not yet consumed (at least 1).
  let width: Int
  /// Slots each chunk holds while its work runs, shared with the run's other work; nil to
  /// start chunks without one.
  let slots: WorkSlots?
  /// The run's stop flag: set, no chunk starts.
  let stop: AtomicFlag
  /// What the window throws when it stops because the run stops or the task is cancelled.
  let interruption: Failure
  /// The task the chunks belong to, for the task-state log, or nil.
  let task: TrackedTask?

  /// - Parameters:
  ///   - width: the most chunks in flight (at least 1).
  ///   - slots: slots each chunk takes while its work runs, or nil.
  ///   - stop: the run's stop flag.
  ///   - interruption: the error thrown when the run stops or the task is cancelled.
  ///   - task: the tracked task the chunks belong to, or nil.
  init(
    width: Int, slots: WorkSlots?, stop: AtomicFlag, interruption: Failure,
    task: TrackedTask?
  ) {
    self.width = max(1, width)
    self.slots = slots
    self.stop = stop
    self.interruption = interruption
    self.task = task
  }

  /// Runs every chunk the producer gives, until it has no more or the window stops.
  ///
  /// - Parameters:
  ///   - next: the producer: the next chunk's input, in order (called again right after
  ///     each chunk starts, never after a chunk marked last).
  ///   - lastStarted: called once the chunk marked last has started.
  ///   - work: a chunk's work, run in a child task on the cooperative pool: its index (from
  ///     0) and input give its output. Synchronous: it runs on one thread from start to end.
  ///   - consume: takes each output in index order, on the caller's task.
  ///   - discard: takes each output that will not be consumed (the window stopped first).
  /// - Throws: the first error of a chunk's work, of `next` or of `consume`;
  ///   ``interruption`` when the stop flag was set, the slots were closed or the task was
  ///   cancelled before every chunk had started.
  func run(
    next: () async throws(Failure) -> Next,
    lastStarted: () -> Void = {},
    work: @escaping @Sendable (_ index: Int, _ input: Input) throws(Failure) -> Output,
    consume: (_ index: Int, _ output: Output) throws(Failure) -> Verdict,
    discard: (Output) -> Void = { _ in }
  ) async throws(Failure) {
    var failure: Failure? = nil
    var pending: Next
    do throws(Failure) {
      pending = try await next()
    } catch {
      throw error
    }
    await withTaskGroup(of: (Int, Result<Output, Failure>).self) { group in
      var started = 0
      var consumed = 0
      var done = false
      /// Outputs that arrived before their turn, by index.
      var ready: [Int: Output] = [:]
      running: while true {
        // Fill the window: each chunk waits for a slot (suspended), then for a thread
        // (enqueued), and runs.
        while started - consumed < width, case .chunk(let input, let isLast) = pending {
          if Task.isCancelled {
            failure = interruption
            break running
          }
          let admitted = await slots?.acquire(for: task) ?? true
          guard admitted, !stop.isSet else {
            if admitted { slots?.release() }
            failure = interruption
            break running
          }
          let index = started
          let tracked = task?.chunk(index)
          let slots = self.slots
          group.addTask {
            tracked?.start()
            let result = Result { () throws(Failure) in try work(index, input) }
            if case .failure = result {
              tracked?.end(failed: true)
            } else {
              tracked?.end()
            }
            slots?.release()
            return (index, result)
          }
          started += 1
          if isLast {
            pending = .end
            lastStarted()
          } else {
            do throws(Failure) {
              pending = try await next()
            } catch {
              failure = error
              break running
            }
          }
        }
        if started == consumed { break }
        task?.suspend(.chunks)
        let completed = await group.next()
        task?.run()
        guard let (index, result) = completed else { break }
        switch result {
        case .failure(let error):
          failure = error
          break running
        case .success(let output):
          ready[index] = output
        }
        // Hand over whatever is now contiguous.
        while let output = ready.removeValue(forKey: consumed) {
          consumed += 1
          do throws(Failure) {
            if try consume(consumed - 1, output) == .done { done = true }
          } catch {
            failure = error
          }
          if done || failure != nil { break running }
        }
      }
      for output in ready.values { discard(output) }
      // Chunks still running past the point of decision are not needed: let them stop, and
      // wait for them (the group cannot end before they do).
      if !group.isEmpty {
        group.cancelAll()
        task?.suspend(.chunks)
        while let (_, result) = await group.next() {
          if case .success(let output) = result { discard(output) }
        }
        task?.run()
      }
    }
    if let failure { throw failure }
  }
}
