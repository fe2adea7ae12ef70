import SqueezeSystem
import SqueezeTaskLog

/// A task-state log in the Chrome Trace Event Format ("Trace Event Format", Google's
/// document that Perfetto's UI and chrome://tracing read): one JSON object whose
/// `traceEvents` array holds
///
/// - process 1, "squeeze threads": a track per thread (its `tid`) with a complete slice
///   (`"ph":"X"`) for each stretch a task or chunk ran on it, a track per thread with its
///   sampled states ("T3 state": on CPU, blocked in fsync, idle), counters (`"ph":"C"`) for
///   running, enqueued, actor queue and main-actor lag, and an instant event (`"ph":"i"`) for
///   each microhang and hang;
/// - process 2, "squeeze tasks": a track per task (its id) with a slice for each state it
///   was in (enqueued, running, suspended with its reason), and an instant for a failure;
/// - metadata events (`"ph":"M"`) naming both processes and every track.
///
/// Times (`ts`, `dur`) are integer microseconds since the run started; `pid` and `tid` are
/// integers. Each track's slices are in time order and never overlap, as the format's
/// viewers expect.
///
/// Every event carries the fields the format lists for its kind, and the common ones
/// besides (`ph`, `name`, `pid`, `tid`, `ts`, `args`), so a strict reader needs no default:
/// metadata events have `ts` 0 (they describe the whole trace); counters and
/// process-scoped instants, which viewers draw on the process's own track, have
/// `runTrack` (0) as their `tid`; complete slices have `dur` and `cat`; instants have their
/// scope `s` (`t` on a task's track, `p` for the whole process) and `cat`.
package struct ChromeTrace {
  /// What the log shows.
  package let model: TimelineModel

  /// The trace of what `model` shows.
  package init(model: TimelineModel) {
    self.model = model
  }

  /// The trace's process holding the threads.
  static let threadsProcess = 1
  /// The trace's process holding one track per task.
  static let tasksProcess = 2
  /// The `tid` of the events that belong to the run as a whole, not to one thread: the
  /// counters and the hang markers. No thread of squeeze has it (Linux gives no thread the
  /// id 0), and nothing names it: viewers draw these events on the process's own track.
  static let runTrack = 0
  /// Added to a thread id for the track of that thread's states.
  static let stateTrackOffset = 1 << 30

  private var data: TaskLogData { model.data }

  /// Integer microseconds (``TimelineModel/micros(_:)``: cannot trap).
  private static func micros(_ seconds: Double) -> Int64 { TimelineModel.micros(seconds) }

  /// The trace as JSON text.
  ///
  /// - Complexity: O(n log n) in the number of events (they are sorted by time), linear in
  ///   the log's bytes otherwise.
  package func json() -> String {
    var events: [(ts: Int64, line: [UInt8])] = []
    var metadata: [[UInt8]] = []
    func meta(pid: Int, tid: Int?, name: StaticString, value: String, sort: Int? = nil) {
      var line = JSONWriter()
      line.beginObject()
      line.field("ph", literal: "M")
      line.field("pid", pid)
      line.field("tid", tid ?? Self.runTrack)
      line.field("ts", 0)
      line.field("name", literal: name)
      line.key("args")
      line.beginObject()
      line.field("name", value)
      line.endObject()
      line.endObject()
      metadata.append(line.bytes)
      if let sort {
        var order = JSONWriter()
        order.beginObject()
        order.field("ph", literal: "M")
        order.field("pid", pid)
        order.field("tid", tid ?? Self.runTrack)
        order.field("ts", 0)
        order.field("name", literal: tid == nil ? "process_sort_index" : "thread_sort_index")
        order.key("args")
        order.beginObject()
        order.field("sort_index", sort)
        order.endObject()
        order.endObject()
        metadata.append(order.bytes)
      }
    }
    func slice(
      pid: Int, tid: Int, start: Double, end: Double, name: String, category: StaticString,
      task: Int? = nil
    ) {
      let ts = Self.micros(start)
      let duration = max(0, Self.micros(end) - ts)
      var line = JSONWriter()
      line.beginObject()
      line.field("ph", literal: "X")
      line.field("pid", pid)
      line.field("tid", tid)
      line.field("ts", ts)
      line.field("dur", duration)
      line.field("name", name)
      line.field("cat", literal: category)
      line.key("args")
      line.beginObject()
      if let task { line.field("task", String(task)) }
      line.endObject()
      line.endObject()
      events.append((ts, line.bytes))
    }
    func instant(
      pid: Int, tid: Int, ts: Int64, scope: StaticString, name: String, category: StaticString,
      args: (inout JSONWriter<[UInt8]>) -> Void
    ) {
      var line = JSONWriter()
      line.beginObject()
      line.field("ph", literal: "i")
      line.field("pid", pid)
      line.field("tid", tid)
      line.field("ts", ts)
      line.field("s", literal: scope)
      line.field("name", name)
      line.field("cat", literal: category)
      line.key("args")
      line.beginObject()
      args(&line)
      line.endObject()
      line.endObject()
      events.append((ts, line.bytes))
    }

    meta(
      pid: Self.threadsProcess, tid: nil, name: "process_name", value: "squeeze threads", sort: 1)
    meta(pid: Self.tasksProcess, tid: nil, name: "process_name", value: "squeeze tasks", sort: 2)
    // Each task's name as its slices repeat it (``TimelineModel/shortenedName(_:)``), worked
    // out once per task.
    var shortNames: [String?] = Array(repeating: nil, count: data.tasks.count)
    func shortName(_ task: Int) -> String {
      if let known = shortNames[task] { return known }
      let name = TimelineModel.shortenedName(data.tasks[task].file)
      shortNames[task] = name
      return name
    }
    for thread in model.threads {
      // The name the page draws (squeeze's own name, "pool (user-initiated) 2"), not the
      // kernel's 15 bytes.
      var name = "\(thread.label) \(thread.displayName)"
      if !thread.role.isEmpty { name += " · \(thread.role)" }
      meta(
        pid: Self.threadsProcess, tid: Int(thread.tid), name: "thread_name", value: name,
        sort: thread.number * 2)
      for ran in thread.slices {
        let task = data.tasks[ran.task]
        let isChunk = ran.chunk >= 0
        slice(
          pid: Self.threadsProcess, tid: Int(thread.tid), start: ran.start, end: ran.end,
          name: isChunk
            ? "\(shortName(ran.task)) · chunk \(task.chunks[ran.chunk].index)"
            : shortName(ran.task),
          category: isChunk ? "chunk" : "task", task: task.id)
      }
      if !thread.states.isEmpty {
        let track = Int(thread.tid) + Self.stateTrackOffset
        meta(
          pid: Self.threadsProcess, tid: track, name: "thread_name",
          value: "\(thread.label) state", sort: thread.number * 2 + 1)
        for run in thread.states {
          var name = run.state == .running ? "on CPU" : run.state.rawValue
          if run.state == .blocked, let call = run.systemCall {
            name += " in \(model.systemCallName(call))"
          }
          slice(
            pid: Self.threadsProcess, tid: track, start: run.start, end: run.end, name: name,
            category: "thread-state")
        }
      }
    }
    for task in data.tasks {
      // A task's track is named after its file (its slices need not repeat it); tracks sort
      // by id, which is the order files were listed in.
      meta(
        pid: Self.tasksProcess, tid: task.id, name: "thread_name", value: "#\(task.id) \(task.file)"
      )
      for (index, transition) in task.transitions.enumerated() where !transition.state.isTerminal {
        let until =
          index + 1 < task.transitions.count ? task.transitions[index + 1].time : model.duration
        var name = transition.state.rawValue
        if let executor = transition.executor { name += " (\(executor.rawValue))" }
        if let reason = transition.reason { name += " (\(reason.rawValue))" }
        if transition.state == .running && transition.thread != 0 {
          name += " on \(model.label(ofThread: transition.thread))"
        }
        slice(
          pid: Self.tasksProcess, tid: task.id, start: transition.time, end: until, name: name,
          category: "task-state")
      }
      if let last = task.transitions.last, last.state == .failed {
        instant(
          pid: Self.tasksProcess, tid: task.id, ts: Self.micros(last.time), scope: "t",
          name: "failed: \(task.error ?? task.file)", category: "failure"
        ) { $0.field("file", task.file) }
      }
    }
    // Counters: one event per change (changes in the same microsecond keep the last).
    var lastCounter: (Int64, Int, Int, Int)? = nil
    func counter(_ ts: Int64, _ running: Int, _ enqueued: Int, _ actorQueue: Int) {
      var line = JSONWriter()
      line.beginObject()
      line.field("ph", literal: "C")
      line.field("pid", Self.threadsProcess)
      line.field("tid", Self.runTrack)
      line.field("ts", ts)
      line.field("name", literal: "tasks")
      line.field("cat", literal: "counter")
      line.key("args")
      line.beginObject()
      line.field("running", running)
      line.field("enqueued", enqueued)
      line.field("actor queue", actorQueue)
      line.endObject()
      line.endObject()
      events.append((ts, line.bytes))
    }
    for step in model.steps {
      let ts = Self.micros(step.time)
      if let last = lastCounter, last.0 != ts { counter(last.0, last.1, last.2, last.3) }
      lastCounter = (ts, step.running, step.enqueued, step.actorQueue)
    }
    if let last = lastCounter { counter(last.0, last.1, last.2, last.3) }
    for sample in data.samples {
      var line = JSONWriter()
      line.beginObject()
      line.field("ph", literal: "C")
      line.field("pid", Self.threadsProcess)
      line.field("tid", Self.runTrack)
      line.field("ts", Self.micros(sample.time))
      line.field("name", literal: "main-actor lag (ms)")
      line.field("cat", literal: "counter")
      line.key("args")
      line.beginObject()
      line.field("lag", sample.mainActorLagMilliseconds, decimals: 3)
      line.endObject()
      line.endObject()
      events.append((Self.micros(sample.time), line.bytes))
    }
    for hang in data.hangs {
      instant(
        pid: Self.threadsProcess, tid: Self.runTrack, ts: Self.micros(hang.time), scope: "p",
        name:
          "\(hang.isHang ? "hang" : "microhang") \(ByteFormat.fixed(hang.durationMilliseconds, 0)) ms",
        category: "hang"
      ) {
        $0.field("lag_ms", hang.durationMilliseconds, decimals: 3)
      }
    }
    // In time order (stable: a track's slices keep their order).
    let ordered = events.enumerated().sorted {
      ($0.element.ts, $0.offset) < ($1.element.ts, $1.offset)
    }
    var out = JSONWriter(capacity: events.reduce(4096) { $0 + $1.line.count + 2 })
    out.beginObject()
    out.field("displayTimeUnit", literal: "ms")
    out.key("otherData")
    out.beginObject()
    out.field("isolation", data.start.isolation)
    out.field("jobs", data.start.jobs)
    out.field("cpus", data.start.cpus)
    out.field("version", data.start.version)
    out.endObject()
    out.key("traceEvents")
    out.beginArray()
    for line in metadata {
      out.nextLine()
      out.encoded(line)
    }
    for (_, event) in ordered {
      out.nextLine()
      out.encoded(event.line)
    }
    out.lineBreak()
    out.endArray()
    out.endObject()
    out.lineBreak()
    return String(decoding: out.bytes, as: UTF8.self)
  }
}
