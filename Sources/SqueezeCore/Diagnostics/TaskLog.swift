import Glibc
import Synchronization

/// Writes the task-state log of spec §5 (`--task-log FILE`): JSON Lines, one event per line,
/// times `t` in seconds since the run started (monotonic clock, microsecond resolution).
///
/// Events come from many threads (task transitions from compression code paths, samples
/// from the sampler thread, hangs from the heartbeat); each is formatted by its caller into
/// bytes and appended to a buffer under a mutex (well under a microsecond). The sampler
/// thread writes the buffer out whenever it passes 64 KiB and at the end, so compression
/// threads never wait on the disk for the log.
final class TaskLog: TaskEventSink, Sendable {
  /// The log file.
  private let descriptor: Int32
  /// The log's path, for messages.
  let path: RawPath
  /// The run's start on ``MonotonicClock``: `t` is measured from here.
  let startTime: Double
  private let pending = Mutex<[UInt8]>([])
  /// The first write error, reported once at the end.
  private let writeError = Mutex<SystemError?>(nil)

  /// Buffered bytes that trigger a write.
  static let flushThreshold = 64 * 1024

  /// Creates (or truncates) the log file.
  ///
  /// - Throws: ``SystemError`` when it cannot be created.
  init(path: RawPath, startTime: Double) throws(SystemError) {
    self.path = path
    self.startTime = startTime
    descriptor = try FileDescriptor.open(
      path, flags: O_WRONLY | O_CREAT | O_TRUNC, permissions: 0o644, symlinks: .always
    ).release()
  }

  deinit {
    close(descriptor)
  }

  /// Seconds since the run started.
  func elapsed(at time: Double = MonotonicClock.now()) -> Double { time - startTime }

  private func append(_ line: JSONLine) {
    let bytes = line.line
    pending.withLock { $0.append(contentsOf: bytes) }
  }

  /// `{"event":"start",...}`: what the run is.
  func start(
    version: String, isolation: Isolation, jobs: Int, level: CompressionLevel, cpus: Int,
    files: Int, bytes: Int64, blockSize: Int
  ) {
    var line = JSONLine()
    line.field("event", literal: "start")
    line.field("t", elapsed(), decimals: 6)
    line.field("version", version)
    line.field("isolation", isolation.rawValue)
    line.field("jobs", jobs)
    line.field("level", Int(level.value))
    line.field("cpus", cpus)
    line.field("files", files)
    line.field("bytes", bytes)
    line.field("blockSize", blockSize)
    append(line)
  }

  /// `{"event":"sample",...}`: one reading of the counters and the main-actor lag.
  func sample(_ counters: TaskCounters.Snapshot, mainActorLagMilliseconds: Double, at time: Double)
  {
    var line = JSONLine()
    line.field("event", literal: "sample")
    line.field("t", elapsed(at: time), decimals: 6)
    line.field("running", counters.running)
    line.field("enqueued", counters.enqueued)
    line.field("suspended", counters.suspended)
    line.field("alive", counters.alive)
    line.field("total", counters.total)
    line.field("completed", counters.completed)
    line.field("actorQueue", counters.actorQueue)
    line.field("mainActorLagMs", mainActorLagMilliseconds, decimals: 3)
    append(line)
  }

  /// `{"event":"task",...}`: task `id` entered `state` (the file on its first event).
  ///
  /// The hot path of the log (several events per file): without a file name the line is
  /// formatted in a stack buffer and copied into the log's buffer under the lock, with no
  /// allocation (~150 ns here).
  func taskEvent(id: Int, file: RawPath?, state: TaskState) {
    let time = elapsed()
    guard file == nil else {
      var line = JSONLine()
      line.field("event", literal: "task")
      line.field("t", time, decimals: 6)
      line.field("id", id)
      if let file { line.field("file", file.displayString) }
      line.field("state", state.rawValue)
      append(line)
      return
    }
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 96) { buffer in
      var writer = ByteWriter(buffer)
      writer.append("{\"event\":\"task\",\"t\":")
      writer.appendDecimal(time, decimals: 6)
      writer.append(",\"id\":")
      writer.appendInteger(Int64(id))
      writer.append(",\"state\":\"")
      writer.append(state.jsonName)
      writer.append("\"}\n")
      let line = UnsafeBufferPointer(rebasing: buffer[..<writer.count])
      pending.withLock { $0.append(contentsOf: line) }
    }
  }

  /// `{"event":"hang",...}`: the main actor was late by `duration` seconds from `start`.
  func hang(startingAt start: Double, duration: Double, severity: HangSeverity) {
    var line = JSONLine()
    line.field("event", literal: "hang")
    line.field("t", elapsed(at: start), decimals: 6)
    line.field("durationMs", duration * 1000, decimals: 3)
    line.field("severity", severity.rawValue)
    append(line)
  }

  /// `{"event":"warning",...}`: a diagnostics problem (never a file's).
  func warning(_ message: String) {
    var line = JSONLine()
    line.field("event", literal: "warning")
    line.field("t", elapsed(), decimals: 6)
    line.field("message", message)
    append(line)
  }

  /// `{"event":"end",...}`: the totals.
  func end(
    files: Int, failed: Int, bytesIn: Int64, bytesOut: Int64, maxRunning: Int, maxEnqueued: Int,
    hangs: HangReport
  ) {
    var line = JSONLine()
    line.field("event", literal: "end")
    line.field("t", elapsed(), decimals: 6)
    line.field("files", files)
    line.field("failed", failed)
    line.field("bytesIn", bytesIn)
    line.field("bytesOut", bytesOut)
    line.field("maxRunning", maxRunning)
    line.field("maxEnqueued", maxEnqueued)
    line.field("hangs", hangs.hangs)
    line.field("microhangs", hangs.microhangs)
    line.field("worstLagMs", hangs.worstLag * 1000, decimals: 3)
    append(line)
  }

  /// Writes the buffer out when it holds at least `threshold` bytes.
  func flush(threshold: Int = 0) {
    let bytes = pending.withLock { buffer -> [UInt8] in
      guard buffer.count >= max(threshold, 1) else { return [] }
      defer { buffer = [] }
      return buffer
    }
    guard !bytes.isEmpty else { return }
    do {
      try writeAll(bytes, to: descriptor)
    } catch {
      writeError.withLock { if $0 == nil { $0 = error } }
    }
  }

  /// The first error writing the log hit, if any.
  var firstWriteError: SystemError? { writeError.withLock { $0 } }
}
