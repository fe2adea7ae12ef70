import Dispatch
import SqueezeSystem
import SqueezeTaskLog
import Synchronization

/// Finds the content-defined chunk boundaries of one file (`--rsyncable`) on a thread of its
/// own, running ahead of the tasks that compress its chunks in parallel.
///
/// Content-defined boundaries are sequential: where a chunk ends decides where the next one's
/// search starts. The scan is cheap next to deflate (the gear hash runs at about 1 GB/s on
/// this machine against libdeflate -6's 80 MB/s a core, and the first quarter of each chunk is
/// not even read), so one scanner keeps every core compressing. It runs on a `Thread`, not on
/// Swift's cooperative pool: on the pool it would take a thread from a compression each time
/// it ran (the session's "thread pool exhaustion"); here the kernel shares the cores.
///
/// Memory is bounded: the scanner reads 256 KiB at a time with `pread` into a buffer of its
/// own and stays at most ``lead`` boundaries ahead of the compression (then it waits), so the
/// file is read twice only within the page cache. It reads through a `dup` of the file's
/// descriptor, which it closes when it ends, so the job may close its own at any time.
///
/// Every boundary is handed over once, in order; ``next(for:)`` suspends until one is found,
/// bridged with a continuation resumed exactly once (by the scanner, by a failure, or by
/// ``cancel()``).
final class BoundaryScan: Sendable {
  /// The most boundaries found ahead of the compression: 16 (about 12 MiB of source at the
  /// fast engine's 0.75 MiB average).
  static let lead = 16
  /// Bytes read at a time: 256 KiB.
  static let readSize = 256 << 10

  /// The consumer waiting in ``next(for:)``.
  private struct Waiter {
    var continuation: CheckedContinuation<Result<Int64, FileFailure>, Never>
    var task: TrackedTask?

    /// Resumes the consumer, whose task moves to `enqueued` first (it waits for a thread
    /// next).
    func resume(returning result: Result<Int64, FileFailure>) {
      task?.resume(from: .continuation)
      continuation.resume(returning: result)
    }
  }

  private struct State {
    /// Boundaries found and not yet taken, from `head` on.
    var ends: [Int64] = []
    var head = 0
    /// Why the scan stopped early.
    var failure: FileFailure? = nil
    /// The consumer waiting in ``next(for:)``.
    var waiter: Waiter? = nil
    /// The scanner is waiting for room in `ends`.
    var scannerWaiting = false
    /// ``cancel()`` was called: the scanner stops at its next step.
    var cancelled = false

    /// What ``next(for:)`` can have without waiting (nil: it must wait), and whether the
    /// scanner waits for the room this makes.
    mutating func take() -> (Result<Int64, FileFailure>?, wakeScanner: Bool) {
      if cancelled { return (.failure(.interrupted), false) }
      if head < ends.count {
        let end = ends[head]
        head += 1
        if head == ends.count {
          ends.removeAll(keepingCapacity: true)
          head = 0
        }
        let wake = scannerWaiting
        scannerWaiting = false
        return (.success(end), wake)
      }
      if let failure { return (.failure(failure), false) }
      return (nil, false)
    }
  }
  private let state = Lock(State())
  /// Wakes the scanner when there is room again, or when it is cancelled.
  private let room = DispatchSemaphore(value: 0)

  /// Starts scanning the `length` bytes of the file open as `descriptor`.
  ///
  /// - Throws: ``FileFailure/cannotRead(_:)`` when the descriptor cannot be duplicated.
  init(descriptor: Int32, length: Int64, chunking: RsyncableChunking) throws(FileFailure) {
    let copy: Int32
    do throws(SystemError) {
      copy = try Descriptor.duplicate(descriptor)
    } catch {
      throw .cannotRead(error)
    }
    // Named in full in the task log's `thread` events; the kernel keeps "squeeze-boundar".
    SystemThread.start(name: "squeeze-boundaries") { [self] in
      self.scan(copy, length: length, chunking: chunking)
      Descriptor.close(copy)
    }
  }

  /// The end offset of the next chunk (the file's length for the last one).
  ///
  /// - Parameter task: the task that waits, when it is tracked: `suspended` (reason
  ///   `continuation`) while the scanner has not found the boundary yet, `enqueued` once
  ///   resumed, `running` again when this returns. A boundary found already changes nothing.
  /// - Returns: the offset, or the failure that stopped the scan (`.interrupted` once
  ///   cancelled).
  func next(for task: TrackedTask? = nil) async -> Result<Int64, FileFailure> {
    let (ready, wakeScanner) = state.withLock { $0.take() }
    if wakeScanner { room.signal() }
    if let ready { return ready }
    task?.suspend(.continuation)
    let result = await withCheckedContinuation {
      (continuation: CheckedContinuation<Result<Int64, FileFailure>, Never>) in
      let waiter = Waiter(continuation: continuation, task: task)
      let (ready, wakeScanner) = state.withLock { state in
        let taken = state.take()
        if taken.0 == nil { state.waiter = waiter }
        return taken
      }
      if wakeScanner { room.signal() }
      if let ready { waiter.resume(returning: ready) }
    }
    task?.run()
    return result
  }

  /// Stops the scan (the job is done with it, or failed); ``next(for:)`` returns
  /// `.interrupted` from then on, a waiting one included.
  func cancel() {
    let (waiter, wake) = state.withLock { state -> (Waiter?, Bool) in
      state.cancelled = true
      let waiter = state.waiter
      state.waiter = nil
      let wake = state.scannerWaiting
      state.scannerWaiting = false
      return (waiter, wake)
    }
    if wake { room.signal() }
    waiter?.resume(returning: .failure(.interrupted))
  }

  /// The scanner thread's work: feed the finder, skipping what it does not need, and hand
  /// over each boundary.
  private func scan(_ descriptor: Int32, length: Int64, chunking: RsyncableChunking) {
    var finder = ChunkBoundaryFinder(.contentDefined(chunking))
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readSize, alignment: 64)
    defer { buffer.deallocate() }
    var position: Int64 = 0
    var lastEnd: Int64 = -1
    // The bytes in `buffer`: file offsets windowStart ..< windowStart + windowCount.
    var windowStart: Int64 = 0
    var windowCount = 0
    while position < length {
      let skipped = Int(min(Int64(finder.skippableBytes), length - position))
      finder.skip(skipped)
      position += Int64(skipped)
      if position == length { break }
      if position >= windowStart + Int64(windowCount) {
        let wanted = Int(min(Int64(Self.readSize), length - position))
        var got = 0
        while got < wanted {
          let count: Int
          do throws(SystemError) {
            count = try Descriptor.read(
              descriptor, into: UnsafeMutableRawBufferPointer(rebasing: buffer[got..<wanted]),
              at: position + Int64(got))
          } catch {
            return fail(.cannotRead(error))
          }
          if count == 0 { return fail(.changedWhileReading("it shrank while being read")) }
          got += count
        }
        windowStart = position
        windowCount = got
      }
      let unread = UnsafeRawBufferPointer(
        rebasing: buffer[Int(position - windowStart)..<windowCount])
      if let cut = finder.cut(in: unread) {
        // The next chunk starts inside the window: its first bytes are skipped, the rest
        // is fed from the window without reading it again.
        position += Int64(cut)
        lastEnd = position
        guard hand(position) else { return }
      } else {
        position += Int64(unread.count)
      }
    }
    if lastEnd != length { _ = hand(length) }
  }

  /// Hands `end` to the waiting consumer or queues it, waiting while ``lead`` are queued.
  ///
  /// - Returns: false once cancelled.
  private func hand(_ end: Int64) -> Bool {
    enum Step {
      case resume(Waiter)
      case queued, wait, stop
    }
    while true {
      let step = state.withLock { state -> Step in
        if state.cancelled { return .stop }
        if let waiter = state.waiter {
          state.waiter = nil
          return .resume(waiter)
        }
        if state.ends.count - state.head < Self.lead {
          state.ends.append(end)
          return .queued
        }
        state.scannerWaiting = true
        return .wait
      }
      switch step {
      case .resume(let waiter):
        waiter.resume(returning: .success(end))
        return true
      case .queued: return true
      case .stop: return false
      case .wait: room.wait()
      }
    }
  }

  private func fail(_ failure: FileFailure) {
    let waiter = state.withLock { state -> Waiter? in
      state.failure = failure
      let waiter = state.waiter
      state.waiter = nil
      return waiter
    }
    waiter?.resume(returning: .failure(failure))
  }
}
