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
struct ChromeTrace {
  /// What the log shows.
  let model: TimelineModel

  /// The trace's process holding the threads.
  static let threadsProcess = 1
  /// The trace's process holding one track per task.
  static let tasksProcess = 2
  /// Added to a thread id for the track of that thread's states.
  static let stateTrackOffset = 1 << 30

  private var data: TaskLogData { model.data }

  /// Integer microseconds (``TimelineModel/micros(_:)``: cannot trap).
  private static func micros(_ seconds: Double) -> Int64 { TimelineModel.micros(seconds) }

  /// The trace as JSON text.
  func json() -> String {
    var events: [(ts: Int64, line: [UInt8])] = []
    var metadata: [[UInt8]] = []
    func meta(pid: Int, tid: Int?, name: StaticString, value: String, sort: Int? = nil) {
      var line = JSONLine()
      line.field("ph", literal: "M")
      line.field("pid", pid)
      if let tid { line.field("tid", tid) }
      line.field("name", literal: name)
      metadata.append(
        line.bytes + Array(#","args":{"name":"#.utf8) + Self.quoted(value) + Array("}}".utf8))
      if let sort {
        var order = JSONLine()
        order.field("ph", literal: "M")
        order.field("pid", pid)
        if let tid { order.field("tid", tid) }
        order.field("name", literal: tid == nil ? "process_sort_index" : "thread_sort_index")
        metadata.append(
          order.bytes + Array(#","args":{"sort_index":"#.utf8) + Array(String(sort).utf8)
            + Array("}}".utf8))
      }
    }
    func slice(
      pid: Int, tid: Int, start: Double, end: Double, name: String, category: StaticString,
      args: [(StaticString, String)] = []
    ) {
      let ts = Self.micros(start)
      let duration = max(0, Self.micros(end) - ts)
      var line = JSONLine()
      line.field("ph", literal: "X")
      line.field("pid", pid)
      line.field("tid", tid)
      line.field("ts", ts)
      line.field("dur", duration)
      line.field("name", name)
      line.field("cat", literal: category)
      var bytes = line.bytes
      if !args.isEmpty {
        bytes += Array(#","args":{"#.utf8)
        for (position, (key, value)) in args.enumerated() {
          if position > 0 { bytes.append(UInt8(ascii: ",")) }
          bytes += Self.quoted(key.description) + [UInt8(ascii: ":")] + Self.quoted(value)
        }
        bytes.append(UInt8(ascii: "}"))
      }
      events.append((ts, bytes + [UInt8(ascii: "}")]))
    }

    meta(
      pid: Self.threadsProcess, tid: nil, name: "process_name", value: "squeeze threads", sort: 1)
    meta(pid: Self.tasksProcess, tid: nil, name: "process_name", value: "squeeze tasks", sort: 2)
    for thread in model.threads {
      var name = "\(thread.label) \(thread.name.isEmpty ? "tid \(thread.tid)" : thread.name)"
      if !thread.role.isEmpty { name += " · \(thread.role)" }
      meta(
        pid: Self.threadsProcess, tid: Int(thread.tid), name: "thread_name", value: name,
        sort: thread.number * 2)
      for ran in thread.slices {
        let task = data.tasks[ran.task]
        let isChunk = ran.chunk >= 0
        slice(
          pid: Self.threadsProcess, tid: Int(thread.tid), start: ran.start, end: ran.end,
          name: isChunk ? "\(task.file) · chunk \(task.chunks[ran.chunk].index)" : task.file,
          category: isChunk ? "chunk" : "task", args: [("task", String(task.id))])
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
        var line = JSONLine()
        line.field("ph", literal: "i")
        line.field("pid", Self.tasksProcess)
        line.field("tid", task.id)
        line.field("ts", Self.micros(last.time))
        line.field("s", literal: "t")
        line.field("name", "failed: \(task.error ?? task.file)")
        events.append((Self.micros(last.time), line.line.dropLast()))
      }
    }
    // Counters: one event per change (changes in the same microsecond keep the last).
    var lastCounter: (Int64, Int, Int, Int)? = nil
    func counter(_ ts: Int64, _ running: Int, _ enqueued: Int, _ actorQueue: Int) {
      var line = JSONLine()
      line.field("ph", literal: "C")
      line.field("pid", Self.threadsProcess)
      line.field("ts", ts)
      line.field("name", literal: "tasks")
      let args =
        #","args":{"running":\#(running),"enqueued":\#(enqueued),"actor queue":\#(actorQueue)}}"#
      events.append((ts, line.bytes + Array(args.utf8)))
    }
    for step in model.steps {
      let ts = Self.micros(step.time)
      if let last = lastCounter, last.0 != ts { counter(last.0, last.1, last.2, last.3) }
      lastCounter = (ts, step.running, step.enqueued, step.actorQueue)
    }
    if let last = lastCounter { counter(last.0, last.1, last.2, last.3) }
    for sample in data.samples {
      var line = JSONLine()
      line.field("ph", literal: "C")
      line.field("pid", Self.threadsProcess)
      line.field("ts", Self.micros(sample.time))
      line.field("name", literal: "main-actor lag (ms)")
      var bytes = line.bytes + Array(#","args":{"lag":"#.utf8)
      JSONLine.appendDecimal(sample.mainActorLagMilliseconds, decimals: 3, to: &bytes)
      events.append((Self.micros(sample.time), bytes + Array("}}".utf8)))
    }
    for hang in data.hangs {
      var line = JSONLine()
      line.field("ph", literal: "i")
      line.field("pid", Self.threadsProcess)
      line.field("ts", Self.micros(hang.time))
      line.field("s", literal: "p")
      line.field(
        "name",
        "\(hang.isHang ? "hang" : "microhang") \(ByteFormat.fixed(hang.durationMilliseconds, 0)) ms"
      )
      events.append((Self.micros(hang.time), line.line.dropLast()))
    }
    // In time order (stable: a track's slices keep their order).
    let ordered = events.enumerated().sorted {
      ($0.element.ts, $0.offset) < ($1.element.ts, $1.offset)
    }
    var out = Array(#"{"displayTimeUnit":"ms","otherData":{"#.utf8)
    out += Self.quoted("isolation") + [UInt8(ascii: ":")] + Self.quoted(data.start.isolation)
    out += Array(#","jobs":"#.utf8) + Array(String(data.start.jobs).utf8)
    out += Array(#","cpus":"#.utf8) + Array(String(data.start.cpus).utf8)
    out += Array(#","version":"#.utf8) + Self.quoted(data.start.version)
    out += Array("},\"traceEvents\":[\n".utf8)
    var first = true
    for line in metadata {
      if !first { out += Array(",\n".utf8) }
      first = false
      out += line
    }
    for (_, event) in ordered {
      if !first { out += Array(",\n".utf8) }
      first = false
      out += event.line
    }
    out += Array("\n]}\n".utf8)
    return String(decoding: out, as: UTF8.self)
  }

  /// A JSON string.
  private static func quoted(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    JSONLine.appendString(text, to: &bytes)
    return bytes
  }
}
