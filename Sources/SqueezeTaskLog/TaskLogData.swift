import SqueezeSystem

/// A task-state log (spec §5) read back: what `squeeze timeline` draws. Unknown keys and
/// unknown events are ignored, as the spec asks of readers; a `start` without `schema` is
/// schema 1 (no threads, reasons or chunks), which still draws.
package struct TaskLogData: Sendable {
  /// The `start` event.
  package struct Start: Sendable {
    /// 1 when the log has no `schema` key.
    package var schema = 1
    /// The squeeze version that wrote the log.
    package var version = ""
    /// The architecture whose system-call numbers `syscall` values use.
    package var architecture = ""
    /// `--isolation`: where compression ran.
    package var isolation = ""
    /// `--jobs`, resolved.
    package var jobs = 0
    /// The compression level.
    package var level = 0
    /// The CPUs the process could use.
    package var cpus = 0
    /// Files the run had to do.
    package var files = 0
    /// Their size in bytes.
    package var bytes: Int64 = 0
    /// Bytes per chunk (`blockSize`).
    package var chunkSize = 0
  }

  /// One thread's state in a sample.
  package struct ThreadReading: Sendable, Equatable {
    /// The thread id.
    package var tid: Int32
    /// What it was doing.
    package var state: ThreadState
    /// The system call a blocked thread is in, when known.
    package var systemCall: Int?
  }

  /// One `sample` event.
  package struct Sample: Sendable {
    /// When, in seconds since the run started.
    package var time: Double
    /// Tasks and chunks running.
    package var running: Int
    /// Tasks and chunks enqueued.
    package var enqueued: Int
    /// Tasks suspended.
    package var suspended: Int
    /// Tasks created and not yet done.
    package var alive: Int
    /// Tasks created so far.
    package var total: Int
    /// Tasks done.
    package var completed: Int
    /// Tasks enqueued on the actor.
    package var actorQueue: Int
    /// How late the main actor ran, in milliseconds.
    package var mainActorLagMilliseconds: Double
    /// Every thread's state (schema 2; empty in schema 1).
    package var threads: [ThreadReading] = []
    /// How many task and chunk events came before it in the log: schema 2 takes samples
    /// under the log's lock, so its counts equal a replay of exactly those events.
    package var changesBefore = 0
  }

  /// One `thread` event: a thread first seen, or renamed.
  package struct ThreadName: Sendable, Equatable {
    /// When, in seconds since the run started.
    package var time: Double
    /// The thread id.
    package var tid: Int32
    /// Its name (at most 15 bytes).
    package var name: String
  }

  /// One `hang` event.
  package struct Hang: Sendable {
    /// When the late beat was sent, in seconds since the run started.
    package var time: Double
    /// How late it ran, in milliseconds.
    package var durationMilliseconds: Double
    /// True for a hang (500 ms or more), false for a microhang.
    package var isHang: Bool
  }

  /// One state a task entered.
  package struct Transition: Sendable, Equatable {
    /// When, in seconds since the run started.
    package var time: Double
    /// The state entered.
    package var state: TaskState
    /// The executor, for `enqueued` (schema 2).
    package var executor: TaskExecutor? = nil
    /// The reason, for `suspended` (schema 2).
    package var reason: SuspensionReason? = nil
    /// The thread, for `running` (schema 2); 0 when not recorded.
    package var thread: Int32 = 0
  }

  /// One chunk of a big file: enqueued, then running on a thread, then done.
  package struct Chunk: Sendable, Equatable {
    /// The chunk's index in its file, from 0.
    package var index: Int
    /// When it was created (enqueued), in seconds since the run started.
    package var enqueued: Double
    /// When it started running, or nil.
    package var started: Double? = nil
    /// When it ended, or nil.
    package var ended: Double? = nil
    /// The thread it ran on; 0 when not recorded.
    package var thread: Int32 = 0
    /// True when it failed.
    package var failed = false
  }

  /// One task's life: its file, each state it entered in order, its chunks.
  package struct TaskTrack: Sendable {
    /// The task's id: its file's number in the run, from 1.
    package var id: Int
    /// Its file, as displayed.
    package var file: String
    /// Every state it entered, in order.
    package var transitions: [Transition]
    /// Its file's chunks, in the order they were created.
    package var chunks: [Chunk] = []
    /// The error of a failed task.
    package var error: String? = nil

    /// When the task was created.
    package var created: Double { transitions.first?.time ?? 0 }
    /// When it ended, or nil if it had not when the log stopped.
    package var ended: Double? {
      guard let last = transitions.last, last.state.isTerminal else { return nil }
      return last.time
    }
  }

  /// One task or chunk change, in the log's order (the order the changes happened in).
  package struct Change: Sendable {
    /// When, in seconds since the run started.
    package var time: Double
    /// The task's index in ``tasks``.
    package var task: Int
    /// The chunk's index in the task's ``TaskTrack/chunks``, or -1 for the task itself.
    package var chunk: Int
    /// The state the chunk entered (chunk changes only).
    package var chunkState: TaskState = .enqueued
  }

  /// The `end` event.
  package struct End: Sendable {
    /// When the run ended, in seconds since it started.
    package var time: Double = 0
    /// Files the run had to do.
    package var files = 0
    /// Files that failed.
    package var failed = 0
    /// The most tasks and chunks running at once.
    package var maxRunning = 0
    /// The most tasks and chunks enqueued at once.
    package var maxEnqueued = 0
    /// Main-actor lags of 500 ms or more.
    package var hangs = 0
    /// Main-actor lags from 250 ms up to 500 ms.
    package var microhangs = 0
    /// The longest main-actor lag, in milliseconds.
    package var worstLagMilliseconds: Double = 0
    /// Tasks still suspended on a continuation when the run ended (schema 2), or nil.
    package var leakedContinuations: Int? = nil
    /// CPU seconds the sampler thread used (schema 2), or nil.
    package var samplerCPUSeconds: Double? = nil
  }

  /// The `start` event.
  package var start = Start()
  /// The `sample` events, in order.
  package var samples: [Sample] = []
  /// The `thread` events, in order.
  package var threadNames: [ThreadName] = []
  /// The `hang` events, in order.
  package var hangs: [Hang] = []
  /// Every task, by order of creation.
  package var tasks: [TaskTrack] = []
  /// Every task and chunk event, in the log's order.
  package var changes: [Change] = []
  /// The `end` event, or nil when the run did not get there.
  package var end: End? = nil
  /// The log's last line was cut off (the run was killed while writing it).
  package var endsMidLine = false
  /// `warning` events (bookkeeping problems in squeeze).
  package var warnings: [String] = []

  /// The last time anything happened, in seconds.
  package var duration: Double {
    max(
      end?.time ?? 0, samples.last?.time ?? 0, changes.last?.time ?? 0,
      tasks.map { $0.transitions.last?.time ?? 0 }.max() ?? 0)
  }

  /// Why a log could not be read.
  package struct ReadError: Error, CustomStringConvertible {
    /// The line, from 1.
    package var line: Int
    /// What is wrong with it.
    package var reason: String
    /// `line N: reason`.
    package var description: String { "line \(line): \(reason)" }
  }

  /// Parses the JSON Lines of a task-state log.
  ///
  /// A log without an `end` event (a killed run's) is read as far as it goes, and a last
  /// line cut off in the middle is left out.
  ///
  /// - Complexity: O(n) in the log's size (a 100,000-file log, ~600,000 lines, in about a
  ///   second here).
  /// - Throws: ``ReadError`` for a line that is not a JSON object (other than a cut-off last
  ///   line), or a log without a `start` event.
  package static func parse(_ bytes: [UInt8]) throws(ReadError) -> TaskLogData {
    var data = TaskLogData()
    var sawStart = false
    var taskIndex: [Int: Int] = [:]
    var lineNumber = 0
    var lineStart = 0
    let newline = UInt8(ascii: "\n")
    try bytes.withUnsafeBufferPointer { (buffer) throws(ReadError) in
      while lineStart < buffer.count {
        var lineEnd = lineStart
        while lineEnd < buffer.count && buffer[lineEnd] != newline { lineEnd += 1 }
        let line = UnsafeBufferPointer(rebasing: buffer[lineStart..<lineEnd])
        let isLast = lineEnd >= buffer.count
        lineStart = lineEnd + 1
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
        lineNumber += 1
        guard let value = try? JSONValue.parse(line), case .object = value else {
          // A killed run's log can end in the middle of a line: draw what came before it.
          if isLast {
            data.endsMidLine = true
            break
          }
          throw ReadError(line: lineNumber, reason: "not a JSON object")
        }
        if value["event"]?.string == "start" { sawStart = true }
        data.read(value, taskIndex: &taskIndex)
      }
    }
    guard sawStart else {
      throw ReadError(line: 1, reason: "no \"start\" event: not a squeeze task-state log")
    }
    return data
  }

  /// Adds one event to the data.
  private mutating func read(_ object: JSONValue, taskIndex: inout [Int: Int]) {
    func number(_ key: String) -> Double { object[key]?.number ?? 0 }
    func integer(_ key: String) -> Int { object[key]?.integer ?? 0 }
    let time = number("t")
    switch object["event"]?.string {
    case "start":
      start = Start(
        schema: object["schema"]?.integer ?? 1, version: object["version"]?.string ?? "",
        architecture: object["arch"]?.string ?? "", isolation: object["isolation"]?.string ?? "",
        jobs: integer("jobs"), level: integer("level"), cpus: integer("cpus"),
        files: integer("files"), bytes: Int64(number("bytes")), chunkSize: integer("blockSize"))
    case "sample":
      var sample = Sample(
        time: time, running: integer("running"), enqueued: integer("enqueued"),
        suspended: integer("suspended"), alive: integer("alive"), total: integer("total"),
        completed: integer("completed"), actorQueue: integer("actorQueue"),
        mainActorLagMilliseconds: number("mainActorLagMs"), changesBefore: changes.count)
      for thread in object["threads"]?.array ?? [] {
        guard let tid = thread["tid"]?.integer,
          let state = thread["state"]?.string.flatMap(ThreadState.init(rawValue:))
        else { continue }
        sample.threads.append(
          ThreadReading(
            tid: Int32(truncatingIfNeeded: tid), state: state,
            systemCall: thread["syscall"]?.integer))
      }
      samples.append(sample)
    case "thread":
      guard let tid = object["tid"]?.integer else { return }
      threadNames.append(
        ThreadName(
          time: time, tid: Int32(truncatingIfNeeded: tid), name: object["name"]?.string ?? ""))
    case "task":
      guard let state = object["state"]?.string.flatMap(TaskState.init(rawValue:)) else {
        return
      }
      let id = integer("id")
      let transition = Transition(
        time: time, state: state,
        executor: state == .enqueued
          ? object["on"]?.string.flatMap(TaskExecutor.init(rawValue:)) : nil,
        reason: state == .suspended
          ? object["reason"]?.string.flatMap(SuspensionReason.init(rawValue:)) : nil,
        thread: Int32(truncatingIfNeeded: object["thread"]?.integer ?? 0))
      let index: Int
      if let known = taskIndex[id] {
        index = known
        tasks[index].transitions.append(transition)
        if tasks[index].file.hasPrefix("task "), let file = object["file"]?.string {
          tasks[index].file = file
        }
      } else {
        index = tasks.count
        taskIndex[id] = index
        tasks.append(
          TaskTrack(id: id, file: object["file"]?.string ?? "task \(id)", transitions: [transition])
        )
      }
      if state == .failed, let error = object["error"]?.string { tasks[index].error = error }
      changes.append(Change(time: time, task: index, chunk: -1))
    case "chunk":
      guard let state = object["state"]?.string.flatMap(TaskState.init(rawValue:)),
        let index = taskIndex[integer("id")]
      else { return }
      let number = integer("chunk")
      let thread = Int32(truncatingIfNeeded: object["thread"]?.integer ?? 0)
      let at = Self.recordChunk(
        number, state: state, time: time, thread: thread, in: &tasks[index].chunks)
      if let at { changes.append(Change(time: time, task: index, chunk: at, chunkState: state)) }
    case "hang":
      hangs.append(
        Hang(
          time: time, durationMilliseconds: number("durationMs"),
          isHang: object["severity"]?.string == "hang"))
    case "warning":
      warnings.append(object["message"]?.string ?? "")
    case "end":
      end = End(
        time: time, files: integer("files"), failed: integer("failed"),
        maxRunning: integer("maxRunning"), maxEnqueued: integer("maxEnqueued"),
        hangs: integer("hangs"), microhangs: integer("microhangs"),
        worstLagMilliseconds: number("worstLagMs"),
        leakedContinuations: object["leakedContinuations"]?.integer,
        samplerCPUSeconds: object["samplerCPUSeconds"]?.number)
    default:
      return
    }
  }

  /// Records a chunk's change in `chunks` (in place: a big file has thousands).
  ///
  /// - Returns: the chunk's position in `chunks`, or nil when the change matches no chunk.
  private static func recordChunk(
    _ number: Int, state: TaskState, time: Double, thread: Int32, in chunks: inout [Chunk]
  ) -> Int? {
    if state == .enqueued || state == .suspended {
      chunks.append(Chunk(index: number, enqueued: time))
      return chunks.count - 1
    }
    // A chunk's events come in order: the latest unfinished chunk of that number changes.
    var position: Int? = nil
    for candidate in chunks.indices.reversed()
    where chunks[candidate].index == number && chunks[candidate].ended == nil {
      position = candidate
      break
    }
    switch state {
    case .running:
      let at = position ?? chunks.count
      if position == nil { chunks.append(Chunk(index: number, enqueued: time)) }
      chunks[at].started = time
      chunks[at].thread = thread
      return at
    default:
      guard let at = position else { return nil }
      chunks[at].ended = time
      chunks[at].failed = state == .failed
      return at
    }
  }

  /// Summary figures, as `scripts/demo-contention` prints them.
  package struct Statistics: Sendable, Equatable {
    /// Mean of `running` over the time tasks were alive.
    package var meanRunning: Double
    /// The most tasks and chunks running in a sample.
    package var maxRunning: Int
    /// The most tasks and chunks enqueued in a sample.
    package var maxEnqueued: Int
    /// Mean of `enqueued` over the time tasks were alive.
    var meanEnqueued: Double
    /// The most tasks enqueued on the actor in a sample.
    package var maxActorQueue: Int
  }

  /// Statistics of the samples taken while work remained (some task alive or work running).
  /// (The timeline's own figures come from the exact counts: ``TimelineModel``.)
  package var statistics: Statistics {
    let busy = samples.filter { $0.alive > 0 || $0.running > 0 }
    let count = Double(max(busy.count, 1))
    return Statistics(
      meanRunning: Double(busy.reduce(0) { $0 + $1.running }) / count,
      maxRunning: max(samples.map(\.running).max() ?? 0, end?.maxRunning ?? 0),
      maxEnqueued: max(samples.map(\.enqueued).max() ?? 0, end?.maxEnqueued ?? 0),
      meanEnqueued: Double(busy.reduce(0) { $0 + $1.enqueued }) / count,
      maxActorQueue: samples.map(\.actorQueue).max() ?? 0)
  }
}
