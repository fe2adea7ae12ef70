import SqueezeSystem

/// A task-state log (`--task-log`) read back: what `squeeze timeline` draws. Unknown keys and
/// unknown events are ignored, so a newer squeeze's logs still draw; a `start` without `schema` is
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

  /// One `thread` event: a thread first seen or renamed, or (schema 3) first running a job
  /// from a Dispatch queue.
  package struct ThreadName: Sendable, Equatable {
    /// When, in seconds since the run started.
    package var time: Double
    /// The thread id.
    package var tid: Int32
    /// Its kernel name (at most 15 bytes); "" when the event does not say.
    package var name: String
    /// The name squeeze gave the thread, in full (schema 3), or nil.
    package var given: String? = nil
    /// The label of the Dispatch queue it ran a job from (schema 3), or nil.
    package var queue: String? = nil
    /// That queue's quality of service ("user-initiated", "default", …), or nil.
    package var qos: String? = nil
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

  /// Why a log could not be read: the line (counted from 1, as an editor counts them) and
  /// what is wrong there.
  package struct ReadError: Error, Equatable, CustomStringConvertible {
    /// The line, from 1.
    package var line: Int
    /// What is wrong with it.
    package var reason: Reason

    /// What is wrong with a line.
    package enum Reason: Equatable, Sendable, CustomStringConvertible {
      /// The line is not one JSON object.
      case notAnObject
      /// The log has no `start` event.
      case noStart
      /// The log holds nothing but blank lines: its run wrote nothing to it (it stopped
      /// before its work, or was killed, or is still running, before its first write).
      case empty
      /// A key the reader knows holds something other than a number.
      case notANumber(key: String)
      /// A key that counts or names something holds a fraction.
      case notWhole(key: String, value: Double)
      /// A number outside what the key can mean (`Limits`).
      case outOfRange(key: String, value: Double, range: ClosedRange<Double>)

      package var description: String {
        switch self {
        case .notAnObject: "not a JSON object"
        case .noStart: "no \"start\" event: not a squeeze task-state log"
        case .empty:
          "empty: its run wrote nothing to it (it stopped before its work, or was killed or is still running before its first write)"
        case .notANumber(let key): "\"\(key)\" is not a number"
        case .notWhole(let key, let value):
          "\"\(key)\" is not a whole number (\(Limits.text(value)))"
        case .outOfRange(let key, let value, let range):
          "\"\(key)\" is out of range (\(Limits.text(value)); expected \(Limits.text(range.lowerBound)) to \(Limits.text(range.upperBound)))"
        }
      }
    }

    package var description: String {
      reason == .empty ? "\(reason)" : "line \(line): \(reason)"
    }
  }

  /// The values each kind of number in a log may take. Every number is checked against one of
  /// these as it is read (``Fields``), so nothing the renderers work out from them can leave
  /// the range of `Int64` microseconds or of `Int` (their arithmetic then cannot trap); each
  /// bound is far beyond what a run writes.
  enum Limits {
    /// Times and durations in seconds (`t`, `samplerCPUSeconds`): up to 10^9 s, about 31
    /// years, which keeps every time in whole microseconds below 10^15.
    static let seconds: ClosedRange<Double> = 0...1e9
    /// Durations in milliseconds (`durationMs`, `mainActorLagMs`, `worstLagMs`): the same
    /// 10^9 s.
    static let milliseconds: ClosedRange<Double> = 0...1e12
    /// Counts of tasks, files, threads, CPUs, hangs, the level and the schema: up to
    /// `Int32.max`.
    static let count: ClosedRange<Double> = 0...Double(Int32.max)
    /// Task ids and chunk indices: up to 2^53 - 1, the largest integer a `Double` (and the
    /// page's JavaScript) holds exactly.
    static let identifier: ClosedRange<Double> = 0...9_007_199_254_740_991
    /// Thread ids (`gettid`, a positive `pid_t`) and system-call numbers: up to `Int32.max`.
    static let threadID: ClosedRange<Double> = 0...Double(Int32.max)
    /// Byte counts (`bytes`, `bytesIn`, `bytesOut`, `blockSize`): up to 2^62 (4 EiB).
    static let byteCount: ClosedRange<Double> = 0...0x1p62

    /// A number for a message: whole numbers in full (`1e+13` when they end in three or
    /// more zeros), others as Swift prints them (`2.5`, `1e+300`).
    static func text(_ value: Double) -> String {
      guard value.isFinite && value == value.rounded() && abs(value) < 1e16 else {
        return value.description
      }
      var digits = String(Int64(value))
      var zeros = 0
      while digits.count > 1 && digits.hasSuffix("0") {
        digits.removeLast()
        zeros += 1
      }
      guard zeros >= 3 else { return String(Int64(value)) }
      let sign = digits.hasPrefix("-") ? "-" : ""
      if !sign.isEmpty { digits.removeFirst() }
      let exponent = zeros + digits.count - 1
      let mantissa =
        digits.count == 1 ? digits : String(digits.prefix(1)) + "." + String(digits.dropFirst())
      return "\(sign)\(mantissa)e+\(exponent)"
    }
  }

  /// The numbers of one event, each checked against its ``Limits`` before it is used: the
  /// one place the reader turns a log's numbers into values.
  struct Fields {
    /// The event (or one element of its `threads`).
    let object: JSONValue
    /// Its line, for errors.
    let line: Int

    /// The number at `key` when it is in `range` (and whole, when `whole`); nil when the key
    /// is absent or null.
    ///
    /// - Throws: ``ReadError`` for a value that is not a number, not whole or out of range.
    func number(_ key: String, in range: ClosedRange<Double>, whole: Bool) throws(ReadError)
      -> Double?
    {
      guard let value = object[key] else { return nil }
      if case .null = value { return nil }
      guard case .number(let number) = value else {
        throw ReadError(line: line, reason: .notANumber(key: key))
      }
      // (`contains` is false for NaN, which the parser never makes anyway.)
      guard range.contains(number) else {
        throw ReadError(line: line, reason: .outOfRange(key: key, value: number, range: range))
      }
      guard !whole || number == number.rounded(.towardZero) else {
        throw ReadError(line: line, reason: .notWhole(key: key, value: number))
      }
      return number
    }

    /// A time or duration in seconds.
    func seconds(_ key: String) throws(ReadError) -> Double? {
      try number(key, in: Limits.seconds, whole: false)
    }

    /// A duration in milliseconds.
    func milliseconds(_ key: String) throws(ReadError) -> Double? {
      try number(key, in: Limits.milliseconds, whole: false)
    }

    /// A count.
    func count(_ key: String) throws(ReadError) -> Int? {
      try number(key, in: Limits.count, whole: true).map { Int($0) }
    }

    /// A task id or chunk index.
    func identifier(_ key: String) throws(ReadError) -> Int? {
      try number(key, in: Limits.identifier, whole: true).map { Int($0) }
    }

    /// A thread id or system-call number.
    func threadID(_ key: String) throws(ReadError) -> Int32? {
      try number(key, in: Limits.threadID, whole: true).map { Int32($0) }
    }

    /// A byte count.
    func byteCount(_ key: String) throws(ReadError) -> Int64? {
      try number(key, in: Limits.byteCount, whole: true).map { Int64($0) }
    }

    /// The string at `key`, or nil.
    func string(_ key: String) -> String? { object[key]?.string }
  }

  /// Parses the JSON Lines of a task-state log.
  ///
  /// A log without an `end` event (a killed run's) is read as far as it goes, and a last
  /// line cut off in the middle is left out.
  ///
  /// - Complexity: O(n) in the log's size (a 100,000-file log, ~600,000 lines, in about a
  ///   second here).
  /// - Throws: ``ReadError`` for a line that is not a JSON object (other than a cut-off last
  ///   line), a number out of its range (`Limits`), or a log without a `start` event
  ///   (``ReadError/Reason/empty`` when it holds no line at all: a run killed before its
  ///   first write leaves such a log).
  package static func parse(_ bytes: [UInt8]) throws(ReadError) -> TaskLogData {
    var data = TaskLogData()
    var reading = Reading()
    var lineNumber = 0
    var lineStart = 0
    var sawLine = false
    let newline = UInt8(ascii: "\n")
    try bytes.withUnsafeBufferPointer { (buffer) throws(ReadError) in
      while lineStart < buffer.count {
        var lineEnd = lineStart
        while lineEnd < buffer.count && buffer[lineEnd] != newline { lineEnd += 1 }
        let line = UnsafeBufferPointer(rebasing: buffer[lineStart..<lineEnd])
        let isLast = lineEnd >= buffer.count
        lineStart = lineEnd + 1
        lineNumber += 1
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
        sawLine = true
        guard let value = try? JSONValue.parse(line), case .object = value else {
          // A killed run's log can end in the middle of a line: draw what came before it.
          if isLast {
            data.endsMidLine = true
            break
          }
          throw ReadError(line: lineNumber, reason: .notAnObject)
        }
        try data.read(Fields(object: value, line: lineNumber), reading: &reading)
      }
    }
    guard sawLine else { throw ReadError(line: 1, reason: .empty) }
    guard reading.sawStart else { throw ReadError(line: 1, reason: .noStart) }
    return data
  }

  /// What the reader keeps between lines.
  private struct Reading {
    var sawStart = false
    /// Task id → index in ``tasks``.
    var taskIndex: [Int: Int] = [:]
    /// (Task index, chunk number) → positions in the task's chunks of the chunks of that
    /// number not yet ended, oldest first: the latest is the one a change applies to.
    var openChunks: [ChunkKey: [Int]] = [:]
  }

  /// A chunk number of one task.
  private struct ChunkKey: Hashable {
    var task: Int
    var chunk: Int
  }

  /// Adds one event to the data.
  private mutating func read(_ fields: Fields, reading: inout Reading) throws(ReadError) {
    let time = try fields.seconds("t") ?? 0
    switch fields.string("event") {
    case "start":
      reading.sawStart = true
      start = Start(
        schema: try fields.count("schema") ?? 1, version: fields.string("version") ?? "",
        architecture: fields.string("arch") ?? "", isolation: fields.string("isolation") ?? "",
        jobs: try fields.count("jobs") ?? 0, level: try fields.count("level") ?? 0,
        cpus: try fields.count("cpus") ?? 0, files: try fields.count("files") ?? 0,
        bytes: try fields.byteCount("bytes") ?? 0,
        chunkSize: Int(try fields.byteCount("blockSize") ?? 0))
    case "sample":
      var sample = Sample(
        time: time, running: try fields.count("running") ?? 0,
        enqueued: try fields.count("enqueued") ?? 0,
        suspended: try fields.count("suspended") ?? 0, alive: try fields.count("alive") ?? 0,
        total: try fields.count("total") ?? 0, completed: try fields.count("completed") ?? 0,
        actorQueue: try fields.count("actorQueue") ?? 0,
        mainActorLagMilliseconds: try fields.milliseconds("mainActorLagMs") ?? 0,
        changesBefore: changes.count)
      for element in fields.object["threads"]?.array ?? [] {
        let thread = Fields(object: element, line: fields.line)
        guard let tid = try thread.threadID("tid"),
          let state = thread.string("state").flatMap(ThreadState.init(rawValue:))
        else { continue }
        sample.threads.append(
          ThreadReading(
            tid: tid, state: state, systemCall: try thread.threadID("syscall").map { Int($0) }))
      }
      samples.append(sample)
    case "thread":
      guard let tid = try fields.threadID("tid") else { return }
      threadNames.append(
        ThreadName(
          time: time, tid: tid, name: fields.string("name") ?? "", given: fields.string("given"),
          queue: fields.string("queue"), qos: fields.string("qos")))
    case "task":
      guard let state = fields.string("state").flatMap(TaskState.init(rawValue:)) else {
        return
      }
      let id = try fields.identifier("id") ?? 0
      let transition = Transition(
        time: time, state: state,
        executor: state == .enqueued
          ? fields.string("on").flatMap(TaskExecutor.init(rawValue:)) : nil,
        reason: state == .suspended
          ? fields.string("reason").flatMap(SuspensionReason.init(rawValue:)) : nil,
        thread: try fields.threadID("thread") ?? 0)
      let index: Int
      if let known = reading.taskIndex[id] {
        index = known
        tasks[index].transitions.append(transition)
        if tasks[index].file.hasPrefix("task "), let file = fields.string("file") {
          tasks[index].file = file
        }
      } else {
        index = tasks.count
        reading.taskIndex[id] = index
        tasks.append(
          TaskTrack(id: id, file: fields.string("file") ?? "task \(id)", transitions: [transition]))
      }
      if state == .failed, let error = fields.string("error") { tasks[index].error = error }
      changes.append(Change(time: time, task: index, chunk: -1))
    case "chunk":
      guard let state = fields.string("state").flatMap(TaskState.init(rawValue:)),
        let index = reading.taskIndex[try fields.identifier("id") ?? 0]
      else { return }
      let number = try fields.identifier("chunk") ?? 0
      let thread = try fields.threadID("thread") ?? 0
      let at = Self.recordChunk(
        number, state: state, time: time, thread: thread, in: &tasks[index].chunks,
        open: &reading.openChunks[ChunkKey(task: index, chunk: number), default: []])
      if let at { changes.append(Change(time: time, task: index, chunk: at, chunkState: state)) }
    case "hang":
      hangs.append(
        Hang(
          time: time, durationMilliseconds: try fields.milliseconds("durationMs") ?? 0,
          isHang: fields.string("severity") == "hang"))
    case "warning":
      warnings.append(fields.string("message") ?? "")
    case "end":
      end = End(
        time: time, files: try fields.count("files") ?? 0, failed: try fields.count("failed") ?? 0,
        maxRunning: try fields.count("maxRunning") ?? 0,
        maxEnqueued: try fields.count("maxEnqueued") ?? 0, hangs: try fields.count("hangs") ?? 0,
        microhangs: try fields.count("microhangs") ?? 0,
        worstLagMilliseconds: try fields.milliseconds("worstLagMs") ?? 0,
        leakedContinuations: try fields.count("leakedContinuations"),
        samplerCPUSeconds: try fields.seconds("samplerCPUSeconds"))
      // The totals the log reports; the reader checks them but draws from the events.
      _ = try fields.byteCount("bytesIn")
      _ = try fields.byteCount("bytesOut")
    default:
      return
    }
  }

  /// Records a chunk's change in `chunks` (in place: a big file has thousands).
  ///
  /// - Parameter open: the positions of the chunks of this number not yet ended, oldest
  ///   first, kept up to date here, so finding the chunk a change applies to takes O(1)
  ///   however many chunks the file has.
  /// - Returns: the chunk's position in `chunks`, or nil when the change matches no chunk.
  private static func recordChunk(
    _ number: Int, state: TaskState, time: Double, thread: Int32, in chunks: inout [Chunk],
    open: inout [Int]
  ) -> Int? {
    if state == .enqueued || state == .suspended {
      chunks.append(Chunk(index: number, enqueued: time))
      open.append(chunks.count - 1)
      return chunks.count - 1
    }
    // A chunk's events come in order: the latest unfinished chunk of that number changes.
    switch state {
    case .running:
      let at: Int
      if let latest = open.last {
        at = latest
      } else {
        chunks.append(Chunk(index: number, enqueued: time))
        at = chunks.count - 1
        open.append(at)
      }
      chunks[at].started = time
      chunks[at].thread = thread
      return at
    default:
      guard let at = open.popLast() else { return nil }
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
  /// (The timeline's own figures come from the exact counts: `TimelineModel`.)
  package var statistics: Statistics {
    let busy = samples.filter { $0.alive > 0 || $0.running > 0 }
    let count = Double(max(busy.count, 1))
    return Statistics(
      meanRunning: busy.reduce(0.0) { $0 + Double($1.running) } / count,
      maxRunning: max(samples.map(\.running).max() ?? 0, end?.maxRunning ?? 0),
      maxEnqueued: max(samples.map(\.enqueued).max() ?? 0, end?.maxEnqueued ?? 0),
      meanEnqueued: busy.reduce(0.0) { $0 + Double($1.enqueued) } / count,
      maxActorQueue: samples.map(\.actorQueue).max() ?? 0)
  }
}
