import SqueezeSystem
import Synchronization

/// Writes the task-state log (`--task-log FILE`): JSON Lines, one event per line,
/// times `t` in seconds since the run started (monotonic clock, microsecond resolution).
///
/// Events come from many threads (task and chunk changes from compression code paths, samples
/// and thread states from the sampler thread, hangs from the heartbeat); each is appended to
/// a buffer under a mutex (well under a microsecond). Task and chunk events and samples take
/// their time, and apply their change to the counters, inside that mutex: the log's order is
/// the order of the changes and its times never go back, so replaying it gives the counters'
/// values at every instant (the sampler reads them there too). The sampler thread writes the
/// buffer out whenever it passes 64 KiB, at least once a second, and at the end, so
/// compression threads never wait on the disk for the log, and a killed run leaves all but
/// its last second.
///
/// Schema 2 (``schema``) adds to schema 1: `schema` and `arch` in `start`; `thread` events;
/// `thread` on running task events, `reason` on suspended ones and `on` on enqueued ones;
/// `chunk` events; `threads` in samples; `file` and `error` on every `failed` task event;
/// `leakedContinuations` in `end`. Schema 3 adds to `thread` events the name squeeze gave
/// its own threads in full (`given`) and, when a thread first runs a task's job from a
/// Dispatch queue, that queue's label and QoS class (`queue`, `qos`): the pool a thread
/// belongs to, or the main queue where the main actor's jobs run.
package final class TaskLog: Sendable {
  /// The log file.
  private let descriptor: Int32
  /// The log's path, for messages.
  package let path: RawPath
  /// The run's start on `MonotonicClock`: `t` is measured from here.
  package let startTime: Double
  /// This log's number in ``ThreadRoster``, which tells each thread's queue once per log.
  private let rosterNumber: UInt
  /// Events formatted but not yet written.
  private let pending = Lock(Pending())
  /// The first write error, reported once at the end.
  private let writeError = Lock<SystemError?>(nil)
  /// Called with the first write error, on the thread that met it (``whenAWriteFails(_:)``).
  private let writeFailureHandler = Lock<(@Sendable (SystemError) -> Void)?>(nil)

  /// The log's schema version, written in `start`. Schema 1 (no `schema` key) had no
  /// threads, reasons or chunks; schema 2 named threads only by the kernel's 15 bytes;
  /// readers accept all three.
  package static let schema = 3

  /// Buffered bytes that trigger a write.
  static let flushThreshold = 64 * 1024
  /// Seconds after which the buffer is written out whatever its size.
  static let flushInterval = 1.0

  /// Opens the log at `path` as an output like squeeze's others (what sits at an output
  /// path decides):
  ///
  /// - nothing there: a new file (mode 0644);
  /// - an earlier task log, an empty file, or with `force` any regular file: replaced by a
  ///   new file (a temporary beside it renamed over it), so a run still writing the old one
  ///   keeps its own;
  /// - `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`: the descriptor already open, with its
  ///   offset and `O_APPEND` (`>>`);
  /// - a named pipe or character device (also through a link): written as it is; a pipe that
  ///   no process reads is an error at once rather than a wait;
  /// - a symbolic link to anything else: not followed; with `force` the link is replaced.
  ///
  /// - Parameters:
  ///   - path: where the log goes.
  ///   - startTime: the run's start on `MonotonicClock`.
  ///   - force: replace a regular file that is not a task log, or a symbolic link (`-f`).
  /// - Throws: ``TaskLogOpenError`` naming why the log cannot go there.
  package init(path: RawPath, startTime: Double, force: Bool = false) throws(TaskLogOpenError) {
    self.path = path
    self.startTime = startTime
    descriptor = try Self.openLog(path, force: force)
    rosterNumber = ThreadRoster.beginLog()
  }

  private static func openLog(_ path: RawPath, force: Bool) throws(TaskLogOpenError) -> Int32 {
    if let standard = standardDescriptor(named: path) {
      do throws(SystemError) {
        return try Descriptor.duplicate(standard)
      } catch {
        throw .system(error)
      }
    }
    let here: FileStatus
    do {
      here = try FileStatus.of(path, in: Descriptor.currentDirectory, followingSymlinks: false)
    } catch  where error == .noSuchFile {
      return try create(path)
    } catch {
      throw .system(error)
    }
    var target = here
    if here.kind == .symbolicLink,
      let followed = try? FileStatus.of(
        path, in: Descriptor.currentDirectory, followingSymlinks: true)
    {
      target = followed
    }
    switch target.kind {
    case .fifo, .characterDevice:
      do throws(SystemError) {
        let descriptor = try FileDescriptor.open(
          path, flags: [.writeOnly, .nonBlocking, .noControllingTerminal], symlinks: .always
        ).release()
        Descriptor.clearStatusFlags(descriptor)
        return descriptor
      } catch  where error == .noSuchDevice {
        throw .noReader
      } catch {
        throw .system(error)
      }
    case .directory:
      throw .system(.isADirectory)
    case .regular where here.kind == .regular:
      guard force || here.size == 0 || isTaskLog(path) else { throw .notATaskLog }
      return try replace(path)
    default:
      guard here.kind == .symbolicLink else { throw .system(.fileExists) }
      guard force else { throw .symbolicLink }
      return try replace(path)
    }
  }

  /// Descriptors named by path that must be used as they are: reopening them would start a
  /// second file offset at 0 over whatever they hold.
  private static func standardDescriptor(named path: RawPath) -> Int32? {
    switch path.displayString {
    case "/dev/stdout": return 1
    case "/dev/stderr": return 2
    default: break
    }
    for prefix in ["/dev/fd/", "/proc/self/fd/"] where path.displayString.hasPrefix(prefix) {
      if let number = Int32(path.displayString.dropFirst(prefix.count)), number > 0 {
        return number
      }
    }
    return nil
  }

  /// Creates a new file at `path`; never follows a link there.
  private static func create(_ path: RawPath) throws(TaskLogOpenError) -> Int32 {
    do throws(SystemError) {
      return try FileDescriptor.open(
        path, flags: [.writeOnly, .create, .exclusive], permissions: 0o644, symlinks: .never
      ).release()
    } catch {
      throw .system(error)
    }
  }

  /// Creates a new file beside `path` and renames it over `path` (a file or a link).
  private static func replace(_ path: RawPath) throws(TaskLogOpenError) -> Int32 {
    let temporary = path.parent.appending(TemporaryNamer().next())
    let descriptor = try create(temporary)
    do throws(SystemError) {
      try temporary.rename(to: path)
    } catch {
      try? temporary.removeFile()
      Descriptor.close(descriptor)
      throw .system(error)
    }
    return descriptor
  }

  /// The first bytes of every task log.
  private static let signature = Array(#"{"event":"start""#.utf8)

  /// True when the file at `path` begins like a squeeze task log.
  private static func isTaskLog(_ path: RawPath) -> Bool {
    guard let file = try? FileDescriptor.open(path, flags: .readOnly, symlinks: .always) else {
      return false
    }
    var head = [UInt8](repeating: 0, count: signature.count)
    guard let count = try? file.readFully(into: &head, at: 0) else { return false }
    return count == signature.count && head == signature
  }

  deinit {
    Descriptor.close(descriptor)
  }

  /// The log file's identity when it is a regular file, so discovery can leave it out.
  package var fileIdentity: FileIdentity? {
    guard let status = try? Descriptor.status(descriptor) else { return nil }
    return status.kind == .regular ? FileIdentity(status) : nil
  }

  /// Seconds since the run started.
  package func elapsed(at time: Double = MonotonicClock.now()) -> Double { time - startTime }

  /// The buffer of events not yet written, and whether the `start` event is in it.
  private struct Pending {
    /// The events, in the log's order.
    var bytes: [UInt8] = []
    /// The `start` event is at the front of ``bytes`` (or already written): nothing is
    /// written before it.
    var hasStart = false
  }

  /// Appends one event (a JSON Lines record, ``JSONWriter/line(_:)``).
  private func append(_ bytes: [UInt8]) {
    pending.withLock { $0.bytes.append(contentsOf: bytes) }
  }

  /// `{"event":"start",...}`: what the run is.
  package func start(
    version: String, isolation: String, jobs: Int, level: Int, engine: String,
    cpus: Int,
    files: Int, bytes: Int64, chunkSize: Int
  ) {
    let line = JSONWriter.line { line in
      line.field("event", literal: "start")
      line.field("t", elapsed(), decimals: 6)
      line.field("schema", Self.schema)
      line.field("version", version)
      line.field("arch", ThreadStates.architecture)
      line.field("isolation", isolation)
      line.field("jobs", jobs)
      line.field("level", level)
      line.field("engine", engine)
      line.field("cpus", cpus)
      line.field("files", files)
      line.field("bytes", bytes)
      line.field("blockSize", chunkSize)
    }
    pending.withLock { pending in
      // The heartbeat runs from the moment the log opens, so a main-actor hang during
      // discovery (a loaded machine) can be recorded before this: the start event goes in
      // front of whatever came first, and flush writes nothing until it is there, so every
      // log begins with it (and a later run recognizes the file as a task log).
      pending.bytes.insert(contentsOf: line, at: 0)
      pending.hasStart = true
    }
  }

  /// The kinds of event whose time is taken under the log's lock, with the change they record.
  enum TimedEvent {
    case task
    case chunk

    /// The value of `event`.
    var name: StaticString {
      switch self {
      case .task: "task"
      case .chunk: "chunk"
      }
    }
  }

  /// The part of a task or chunk event after its time, formatted before the lock is taken.
  ///
  /// The hot path of the log (several events per file): without a file name or an error
  /// the bytes live in a fixed inline buffer, so recording a change allocates nothing.
  struct Suffix {
    /// Up to 120 bytes inline (ids, states, thread ids: never more than ~90).
    fileprivate var inline = InlineArray<120, UInt8>(repeating: 0)
    fileprivate var count = 0
    /// The whole suffix when it holds a file name or an error (any length).
    fileprivate var heap: [UInt8]? = nil

    /// Calls `body` with the bytes.
    fileprivate func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
      if let heap { return heap.withUnsafeBytes(body) }
      return withUnsafeBytes(of: inline) { body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// Formats the members `write` writes, then the object's end and a line break, into the
    /// inline buffer.
    fileprivate init(inline write: (inout JSONWriter<ByteWriter>) -> Void) {
      let written = withUnsafeMutableBytes(of: &inline) { raw in
        var json = JSONWriter(continuingObjectIn: ByteWriter(raw.bindMemory(to: UInt8.self)))
        write(&json)
        json.endObject()
        json.lineBreak()
        return json.output.count
      }
      count = written
    }

    /// The members `write` writes, the object's end and a line break, in a new array (any
    /// length).
    fileprivate init(growing write: (inout JSONWriter<[UInt8]>) -> Void) {
      var json = JSONWriter(continuingObjectIn: [UInt8]())
      write(&json)
      json.endObject()
      json.lineBreak()
      heap = json.output
    }
  }

  /// The suffix of a task event: `,"id":…,"state":…` and what qualifies the state (`on`,
  /// `thread`, `reason`), with `file` and `error` when given.
  static func taskSuffix(
    id: Int, phase: TaskPhase, thread: Int32, file: String?, error: String?
  ) -> Suffix {
    func members<Output>(_ json: inout JSONWriter<Output>) {
      json.field("id", id)
      if let file { json.field("file", file) }
      json.field("state", literal: phase.state.jsonName)
      if let executor = phase.executor { json.field("on", literal: executor.jsonName) }
      if let reason = phase.reason { json.field("reason", literal: reason.jsonName) }
      if phase.state == .running && thread != 0 { json.field("thread", thread) }
      if let error { json.field("error", error) }
    }
    // Without a name or an error, nothing here has a length the buffer cannot hold.
    guard file != nil || error != nil else { return Suffix(inline: { members(&$0) }) }
    return Suffix(growing: { members(&$0) })
  }

  /// The suffix of a chunk event: `,"id":…,"chunk":…,"state":…` and the thread when running.
  static func chunkSuffix(id: Int, chunk: Int, state: TaskState, thread: Int32) -> Suffix {
    Suffix(inline: { json in
      json.field("id", id)
      json.field("chunk", chunk)
      json.field("state", literal: state.jsonName)
      if thread != 0 { json.field("thread", thread) }
    })
  }

  /// Appends one task or chunk event whose time is taken, and whose `change` is applied,
  /// under the log's lock; nothing is written when `change` returns false (the change did
  /// not happen).
  func appendTimed(kind: TimedEvent, suffix: Suffix, change: () -> Bool) {
    pending.withLock { pending in
      guard change() else { return }
      withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { raw in
        // `{"event":"task","t":1.234567`: the suffix continues the object.
        var json = JSONWriter(ByteWriter(raw))
        json.beginObject()
        json.field("event", literal: kind.name)
        json.field("t", elapsed(), decimals: 6)
        pending.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: raw[..<json.output.count]))
      }
      suffix.withBytes { pending.bytes.append(contentsOf: $0) }
    }
  }

  /// `{"event":"sample",...}`: one reading of the counters, taken under the log's lock so it
  /// agrees with the events around it, the main-actor lag, and the threads' states.
  package func sample(
    _ counters: TaskCounters, mainActorLagMilliseconds: Double, threads: [ThreadStates.Reading]
  ) {
    // `,"threads":[…],"mainActorLagMs":…}` is formatted before the lock is taken.
    var tail = JSONWriter(continuingObjectIn: [UInt8]())
    if !threads.isEmpty {
      tail.key("threads")
      tail.beginArray()
      for thread in threads {
        tail.beginObject()
        tail.field("tid", thread.tid)
        tail.field("state", thread.state.rawValue)
        if let call = thread.systemCall { tail.field("syscall", call) }
        tail.endObject()
      }
      tail.endArray()
    }
    tail.field("mainActorLagMs", mainActorLagMilliseconds, decimals: 3)
    tail.endObject()
    tail.lineBreak()
    let after = tail.output
    pending.withLock { pending in
      let snapshot = counters.snapshot()
      var line = JSONWriter(pending.bytes)
      pending.bytes = []
      line.beginObject()
      line.field("event", literal: "sample")
      line.field("t", elapsed(), decimals: 6)
      line.field("running", snapshot.running)
      line.field("enqueued", snapshot.enqueued)
      line.field("suspended", snapshot.suspended)
      line.field("alive", snapshot.alive)
      line.field("total", snapshot.total)
      line.field("completed", snapshot.completed)
      line.field("actorQueue", snapshot.actorQueue)
      pending.bytes = line.output
      pending.bytes.append(contentsOf: after)
    }
  }

  /// `{"event":"thread",...}`: a thread of squeeze's process, first seen (or renamed) at
  /// `time`, with its name (`/proc/self/task/TID/comm`, at most 15 bytes) and, for a
  /// thread squeeze started, the name it gave it in full (`given`, schema 3).
  package func thread(tid: Int32, name: String, given: String? = nil, at time: Double) {
    append(
      JSONWriter.line { line in
        line.field("event", literal: "thread")
        line.field("t", elapsed(at: time), decimals: 6)
        line.field("tid", tid)
        line.field("name", name)
        if let given { line.field("given", given) }
      })
  }

  /// `{"event":"thread",...,"queue":...}` (schema 3): the calling thread runs a job from
  /// Dispatch queue `queue` for the first time in this log (`ThreadRoster.queueIfNew()`):
  /// which pool a thread serves, or that it runs the main actor's jobs (the main queue).
  package func threadRunsJobs(from queue: ThreadRoster.Queue) {
    let tid = ThreadName.currentID
    append(
      JSONWriter.line { line in
        line.field("event", literal: "thread")
        line.field("t", elapsed(), decimals: 6)
        line.field("tid", tid)
        line.field("queue", queue.label)
        if let qos = queue.qos { line.field("qos", qos) }
      })
  }

  /// Notes the Dispatch queue the calling thread runs a job from, when it is new for this
  /// log (a `thread` event with `queue`); nothing otherwise.
  package func noteQueue() {
    if let queue = ThreadRoster.queueIfNew(forLog: rosterNumber) { threadRunsJobs(from: queue) }
  }

  /// `{"event":"hang",...}`: the main actor was late by `duration` seconds from `start`.
  package func hang(startingAt start: Double, duration: Double, severity: HangSeverity) {
    append(
      JSONWriter.line { line in
        line.field("event", literal: "hang")
        line.field("t", elapsed(at: start), decimals: 6)
        line.field("durationMs", duration * 1000, decimals: 3)
        line.field("severity", severity.rawValue)
      })
  }

  /// `{"event":"warning",...}`: a diagnostics problem (never a file's).
  package func warning(_ message: String) {
    append(
      JSONWriter.line { line in
        line.field("event", literal: "warning")
        line.field("t", elapsed(), decimals: 6)
        line.field("message", message)
      })
  }

  /// `{"event":"end",...}`: the totals.
  package func end(
    files: Int, failed: Int, bytesIn: Int64, bytesOut: Int64, maxRunning: Int, maxEnqueued: Int,
    hangs: HangReport, leakedContinuations: Int, samplerCPUSeconds: Double = 0
  ) {
    append(
      JSONWriter.line { line in
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
        line.field("leakedContinuations", leakedContinuations)
        line.field("samplerCPUSeconds", samplerCPUSeconds, decimals: 6)
      })
  }

  /// Writes the buffer out when it holds at least `threshold` bytes, once the `start`
  /// event is in it (before that, nothing is written).
  package func flush(threshold: Int = 0) {
    let bytes = pending.withLock { pending -> [UInt8] in
      guard pending.hasStart, pending.bytes.count >= max(threshold, 1) else { return [] }
      defer { pending.bytes = [] }
      return pending.bytes
    }
    guard !bytes.isEmpty else { return }
    do {
      try writeAll(bytes, to: descriptor)
    } catch {
      let first = writeError.withLock { written -> Bool in
        guard written == nil else { return false }
        written = error
        return true
      }
      if first, let handler = writeFailureHandler.withLock({ $0 }) { handler(error) }
    }
  }

  /// Calls `handler` with the first error writing the log meets, on the thread that met it
  /// (the sampler's, or the caller of ``flush(threshold:)``), once: a run stops there when
  /// its log's file system is full, as it does for an output.
  ///
  /// - Parameter handler: takes the error (`ENOSPC`, `EIO`, `EPIPE`…); it must not block.
  package func whenAWriteFails(_ handler: @escaping @Sendable (SystemError) -> Void) {
    writeFailureHandler.withLock { $0 = handler }
  }

  /// The first error writing the log hit, if any.
  package var firstWriteError: SystemError? { writeError.withLock { $0 } }
}

/// Why the task log could not be opened.
package enum TaskLogOpenError: Error, Sendable, CustomStringConvertible {
  /// A regular file that is not a squeeze task log is at the path, and `-f` was not given.
  case notATaskLog
  /// A symbolic link to something other than a pipe or device is at the path, and `-f` was
  /// not given.
  case symbolicLink
  /// The path is a named pipe that no process has open for reading.
  case noReader
  /// Creating, opening or replacing the file failed.
  case system(SystemError)

  /// Why, in words for the message `cannot create task log '…': …` or `task log '…' …`.
  package var description: String {
    switch self {
    case .notATaskLog: "exists and is not a squeeze task log; not replaced (use -f to replace it)"
    case .symbolicLink: "is a symbolic link; not followed (use -f to replace the link)"
    case .noReader: "is a named pipe that no process is reading; nothing written"
    case .system(let error): error.description
    }
  }
}
