/// What a task-state log shows, worked out once for the three ways of drawing it (SVG, HTML,
/// Chrome trace): the exact counts over time, a lane per thread with the slices that ran on
/// it and its states, each task's chunks and its story.
///
/// The counts come from replaying the task and chunk events in the log's order (schema 2):
/// each change is a step, at the microsecond it happened, so nothing is held from one sample
/// to the next. A schema-1 log has no chunk events and counted chunks only in its samples,
/// so its counts are drawn from the samples, as they were.
struct TimelineModel: Sendable {
  /// The log.
  let data: TaskLogData
  /// The time span drawn, in seconds (at least 1 ms).
  let duration: Double

  /// The counts right after one change.
  struct CountStep: Sendable, Equatable {
    var time: Double
    var running: Int
    var enqueued: Int
    var suspended: Int
    var actorQueue: Int
  }

  /// Every change of the counts, in order.
  private(set) var steps: [CountStep] = []
  /// True when ``steps`` come from the events (schema 2); false when from samples.
  private(set) var exactCounts = false

  /// A stretch of time one task (or one of its chunks) ran on a thread.
  struct Slice: Sendable, Equatable {
    var start: Double
    var end: Double
    /// The task's index in the log's tasks.
    var task: Int
    /// The chunk's position in the task's chunks, or -1 for the task's own code.
    var chunk: Int
  }

  /// A stretch of time a thread was in one state (from the samples: each reading holds
  /// until the next).
  struct StateRun: Sendable, Equatable {
    var start: Double
    var end: Double
    var state: ThreadState
    /// The system call, when blocked.
    var systemCall: Int?
  }

  /// One thread of the process.
  struct Thread: Sendable {
    /// `gettid`.
    var tid: Int32
    /// Its number in the drawing (T1 is the lowest thread id, the main thread).
    var number: Int
    /// Its name (`/proc/self/task/TID/comm`, at most 15 bytes), or "" when never sampled.
    var name: String
    /// What it is in squeeze: "main thread", "cooperative pool (user-initiated)", "main
    /// actor", "ParallelCompressor", "publisher", "sampler", "heartbeat", …
    var role: String
    /// What ran on it, in time order.
    var slices: [Slice]
    /// Its states, in time order.
    var states: [StateRun]

    /// "T3", as the narratives name it.
    var label: String { "T\(number)" }
  }

  /// The threads, by thread id.
  private(set) var threads: [Thread] = []
  /// Thread id → position in ``threads``.
  private(set) var threadIndex: [Int32: Int] = [:]

  /// Exact figures of the counts (time-weighted over the time tasks were alive).
  struct Figures: Sendable, Equatable {
    var maxRunning = 0
    var meanRunning = 0.0
    var maxEnqueued = 0
    var maxActorQueue = 0
    /// The most threads that ran slices at the same moment.
    var maxThreadsAtOnce = 0
  }

  private(set) var figures = Figures()

  /// Works everything out.
  ///
  /// - Complexity: O(n log n) in the number of events.
  init(data: TaskLogData) {
    self.data = data
    duration = max(data.duration, 0.001)
    if data.start.schema >= 2 && !data.changes.isEmpty {
      replayChanges()
      exactCounts = true
    } else {
      steps = data.samples.map {
        CountStep(
          time: $0.time, running: $0.running, enqueued: $0.enqueued, suspended: $0.suspended,
          actorQueue: $0.actorQueue)
      }
      replaySlicesOnly()
    }
    buildThreadStates()
    assignRoles()
    figures = Self.figures(of: steps, tasks: data.tasks, end: duration, threads: threads)
  }

  // MARK: - Replay

  /// Replays the task and chunk events in the log's order: the counts after each, and the
  /// slices each thread ran.
  private mutating func replayChanges() {
    var cursor = [Int](repeating: 0, count: data.tasks.count)
    // A chunk's progress: 1 enqueued, 2 running (absent: not created yet, or done).
    var chunkStatus: [Int64: UInt8] = [:]
    var open: [Int: (thread: Int32, start: Double)] = [:]
    var openChunks: [Int64: (thread: Int32, start: Double)] = [:]
    var current = CountStep(time: 0, running: 0, enqueued: 0, suspended: 0, actorQueue: 0)
    var slices: [Int32: [Slice]] = [:]
    steps.reserveCapacity(data.changes.count)
    func account(_ transition: TaskLogData.Transition?, sign: Int) {
      guard let transition else { return }
      switch transition.state {
      case .running: current.running += sign
      case .enqueued:
        current.enqueued += sign
        if transition.executor == .actor { current.actorQueue += sign }
      case .suspended: current.suspended += sign
      case .finished, .failed: break
      }
    }
    for change in data.changes {
      let task = data.tasks[change.task]
      current.time = change.time
      if change.chunk < 0 {
        let position = cursor[change.task]
        guard position < task.transitions.count else { continue }
        cursor[change.task] = position + 1
        let transition = task.transitions[position]
        let previous = position > 0 ? task.transitions[position - 1] : nil
        account(previous, sign: -1)
        account(transition, sign: 1)
        if previous?.state == .running, let running = open.removeValue(forKey: change.task) {
          slices[running.thread, default: []].append(
            Slice(start: running.start, end: change.time, task: change.task, chunk: -1))
        }
        if transition.state == .running && transition.thread != 0 {
          open[change.task] = (transition.thread, change.time)
        }
      } else {
        let chunk = task.chunks[change.chunk]
        let key = Int64(change.task) << 32 | Int64(change.chunk)
        let status = chunkStatus[key] ?? 0
        switch change.chunkState {
        case .enqueued, .suspended:
          current.enqueued += 1
          chunkStatus[key] = 1
        case .running:
          if status == 1 { current.enqueued -= 1 }
          current.running += 1
          chunkStatus[key] = 2
          if chunk.thread != 0 { openChunks[key] = (chunk.thread, change.time) }
        case .finished, .failed:
          if status == 2 { current.running -= 1 }
          if status == 1 { current.enqueued -= 1 }
          chunkStatus[key] = nil
          if let running = openChunks.removeValue(forKey: key) {
            slices[running.thread, default: []].append(
              Slice(start: running.start, end: change.time, task: change.task, chunk: change.chunk))
          }
        }
      }
      steps.append(current)
    }
    // Slices still open when the log stops run to its end.
    for (task, running) in open {
      slices[running.thread, default: []].append(
        Slice(start: running.start, end: duration, task: task, chunk: -1))
    }
    for (key, running) in openChunks {
      slices[running.thread, default: []].append(
        Slice(
          start: running.start, end: duration, task: Int(key >> 32),
          chunk: Int(key & 0xFFFF_FFFF)))
    }
    makeThreads(slices)
  }

  /// Schema 1 has no threads: no slices, only the sampled counts.
  private mutating func replaySlicesOnly() {
    makeThreads([:])
  }

  private mutating func makeThreads(_ slices: [Int32: [Slice]]) {
    var tids = Set(slices.keys)
    for name in data.threadNames { tids.insert(name.tid) }
    for sample in data.samples { for reading in sample.threads { tids.insert(reading.tid) } }
    var names: [Int32: String] = [:]
    for name in data.threadNames { names[name.tid] = name.name }
    threads = tids.sorted().enumerated().map { offset, tid in
      Thread(
        tid: tid, number: offset + 1, name: names[tid] ?? "", role: "",
        slices: (slices[tid] ?? []).sorted { ($0.start, $0.end) < ($1.start, $1.end) }, states: [])
    }
    for (position, thread) in threads.enumerated() { threadIndex[thread.tid] = position }
  }

  /// Turns the samples' readings into runs of one state per thread.
  private mutating func buildThreadStates() {
    guard !data.samples.isEmpty else { return }
    var runs: [Int32: [StateRun]] = [:]
    let samples = data.samples
    // A reading holds until the next sample that read the threads (not every sample does).
    var nextWithThreads = [Double](repeating: duration, count: samples.count)
    var following = duration
    for position in samples.indices.reversed() {
      nextWithThreads[position] = following
      if !samples[position].threads.isEmpty { following = samples[position].time }
    }
    for (position, sample) in samples.enumerated() {
      let until = nextWithThreads[position]
      for reading in sample.threads {
        if var last = runs[reading.tid]?.last, last.state == reading.state,
          last.systemCall == reading.systemCall, abs(last.end - sample.time) < 1e-9
        {
          last.end = until
          runs[reading.tid]![runs[reading.tid]!.count - 1] = last
        } else {
          runs[reading.tid, default: []].append(
            StateRun(
              start: sample.time, end: until, state: reading.state,
              systemCall: reading.systemCall))
        }
      }
    }
    for (tid, list) in runs {
      if let position = threadIndex[tid] { threads[position].states = list }
    }
  }

  /// Says what each thread is, from its name and from what ran on it.
  private mutating func assignRoles() {
    var mainActorThreads: Set<Int32> = []
    var actorThreads: Set<Int32> = []
    for task in data.tasks {
      for (position, transition) in task.transitions.enumerated() where position > 0 {
        guard transition.state == .running, transition.thread != 0 else { continue }
        let before = task.transitions[position - 1]
        if before.executor == .mainActor { mainActorThreads.insert(transition.thread) }
        if before.executor == .actor { actorThreads.insert(transition.thread) }
      }
    }
    let lowest = threads.first?.tid
    for position in threads.indices {
      let thread = threads[position]
      var role: String
      switch thread.name {
      case "squeeze-actor": role = "actor executor"
      case "squeeze-publish": role = "publisher"
      case "squeeze-sampler": role = "sampler"
      case "squeeze-beat": role = "heartbeat"
      default:
        if thread.name.hasSuffix(".overcommit") || thread.name.hasSuffix("overcommit") {
          role = "dispatch worker"
        } else if thread.name.hasSuffix("default-qos") {
          role = "pool (default)"
        } else if thread.name.hasSuffix("initiated-qos") {
          role = "pool (user-initiated)"
        } else if thread.name.hasSuffix("-qos") {
          role = "pool"
        } else if thread.tid == lowest && !thread.name.isEmpty {
          role = "main thread"
        } else {
          role = thread.slices.isEmpty ? "" : "pool"
        }
      }
      if mainActorThreads.contains(thread.tid) { role = "main actor" }
      if actorThreads.contains(thread.tid) && thread.name != "squeeze-actor" {
        role = "ParallelCompressor"
      }
      threads[position].role = role
    }
  }

  private static func figures(
    of steps: [CountStep], tasks: [TaskLogData.TaskTrack], end: Double, threads: [Thread]
  ) -> Figures {
    var figures = Figures()
    let first = tasks.map(\.created).min() ?? 0
    let last = tasks.compactMap(\.ended).max() ?? end
    var weighted = 0.0
    for (position, step) in steps.enumerated() {
      figures.maxRunning = max(figures.maxRunning, step.running)
      figures.maxEnqueued = max(figures.maxEnqueued, step.enqueued)
      figures.maxActorQueue = max(figures.maxActorQueue, step.actorQueue)
      let until = position + 1 < steps.count ? steps[position + 1].time : last
      let from = max(step.time, first)
      let to = min(until, last)
      if to > from { weighted += Double(step.running) * (to - from) }
    }
    figures.meanRunning = last > first ? weighted / (last - first) : 0
    // The most slices running at once over all threads.
    var edges: [(Double, Int)] = []
    for thread in threads {
      for slice in thread.slices {
        edges.append((slice.start, 1))
        edges.append((slice.end, -1))
      }
    }
    edges.sort { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }
    var running = 0
    for edge in edges {
      running += edge.1
      figures.maxThreadsAtOnce = max(figures.maxThreadsAtOnce, running)
    }
    return figures
  }

  // MARK: - Narratives

  /// The longest file name a drawing repeats, in characters: a task's name is on each of
  /// its slices (a thread slice's title in the SVG, a slice's name in the trace), so a long
  /// name on many slices would make the drawing grow with their product. Where a name is
  /// repeated it is shortened from the left to this (``shortenedName(_:)``); the task's own
  /// lane, track and story name it in full, once.
  static let longestRepeatedName = 512

  /// `name` as the drawings repeat it: at most ``longestRepeatedName`` characters, shortened
  /// from the left with "…" (a file name's most telling part is its end).
  ///
  /// - Complexity: O(1) for names of up to 512 bytes; otherwise O(``longestRepeatedName``).
  static func shortenedName(_ name: String) -> String {
    guard name.utf8.count > longestRepeatedName else { return name }
    var kept = 0
    var start = name.endIndex
    while start > name.startIndex && kept < longestRepeatedName - 1 {
      start = name.index(before: start)
      kept += 1
    }
    return start == name.startIndex ? name : "…" + name[start...]
  }

  /// "T3", the drawing's name for thread `tid`.
  func label(ofThread tid: Int32) -> String {
    threadIndex[tid].map { threads[$0].label } ?? "thread \(tid)"
  }

  /// Task `index`'s story: where its time went, in the words of the session ("waited 3.1 ms
  /// for a compression slot, ran 40.2 ms on T2, its 3 chunks ran 120.4 ms on T2 and T3,
  /// waited 12.0 ms for its publication (sync and rename)"), and how it ended.
  ///
  /// Times are counted in whole microseconds, rounded half up.
  func narrative(of index: Int) -> String {
    let task = data.tasks[index]
    return task.file + ": " + story(of: index)
  }

  /// Task `index`'s story without its file name (``narrative(of:)`` is the file, a colon
  /// and this): what the SVG's titles show after the name, and what the HTML page shows on
  /// hover, worked out here once.
  ///
  /// - Complexity: O(n) in the task's transitions and chunks.
  func story(of index: Int) -> String {
    let task = data.tasks[index]
    let end = Self.micros(duration)
    var enqueued: [TaskExecutor?: Int64] = [:]
    var suspended: [SuspensionReason?: Int64] = [:]
    var running: Int64 = 0
    var runThreads = OrderedThreads()
    for (position, transition) in task.transitions.enumerated() where !transition.state.isTerminal {
      let until =
        position + 1 < task.transitions.count
        ? Self.micros(task.transitions[position + 1].time) : end
      let length = max(0, until - Self.micros(transition.time))
      switch transition.state {
      case .enqueued:
        enqueued[transition.executor] = Self.sum(enqueued[transition.executor] ?? 0, length)
      case .suspended:
        suspended[transition.reason] = Self.sum(suspended[transition.reason] ?? 0, length)
      case .running:
        running = Self.sum(running, length)
        runThreads.insert(transition.thread)
      case .finished, .failed: break
      }
    }
    var parts: [String] = []
    if let wait = enqueued[.pool] ?? enqueued[nil] {
      parts.append("waited \(Self.duration(micros: wait)) for a thread")
    }
    if let wait = enqueued[.actor] {
      parts.append("waited \(Self.duration(micros: wait)) for the actor")
    }
    if let wait = enqueued[.mainActor] {
      parts.append("waited \(Self.duration(micros: wait)) for the main actor")
    }
    if let wait = suspended[.slot] {
      parts.append("waited \(Self.duration(micros: wait)) for a compression slot")
    }
    if running > 0 || !runThreads.isEmpty {
      parts.append("ran \(Self.duration(micros: running))" + onThreads(runThreads.tids))
    }
    let chunks = task.chunks
    if !chunks.isEmpty {
      var ran: Int64 = 0
      var chunkThreads = OrderedThreads()
      for chunk in chunks {
        if let start = chunk.started {
          ran = Self.sum(ran, max(0, (chunk.ended.map(Self.micros) ?? end) - Self.micros(start)))
        }
        chunkThreads.insert(chunk.thread)
      }
      parts.append(
        "its \(ByteFormat.count(chunks.count)) chunk\(chunks.count == 1 ? "" : "s") ran \(Self.duration(micros: ran))"
          + onThreads(chunkThreads.tids))
    }
    if let wait = suspended[.chunks] {
      parts.append("waited \(Self.duration(micros: wait)) for its chunks")
    }
    if let wait = suspended[.publication] {
      parts.append("waited \(Self.duration(micros: wait)) for its publication (sync and rename)")
    }
    if let wait = suspended[.continuation] {
      parts.append("waited \(Self.duration(micros: wait)) on a continuation")
    }
    if let wait = suspended[nil] { parts.append("was suspended \(Self.duration(micros: wait))") }
    var story = parts.isEmpty ? "" : parts.joined(separator: ", ") + "; "
    let created = Self.micros(task.created)
    if let last = task.transitions.last, last.state.isTerminal {
      let outcome = last.state == .failed ? "failed" : "finished"
      let at = Self.micros(last.time)
      story +=
        "\(outcome) at \(Self.seconds(micros: at)), \(Self.duration(micros: at - created)) after it was created"
      if let error = task.error { story += ": \(error)" }
    } else if let last = task.transitions.last {
      story +=
        "still \(TaskPhase(state: last.state, executor: last.executor, reason: last.reason)) when the log ends"
      if data.end != nil, last.state == .suspended, last.reason?.isContinuation == true {
        story += " (a leaked continuation)"
      }
    }
    return story
  }

  /// Thread ids in the order first seen, each once (0, unknown, left out).
  private struct OrderedThreads {
    private(set) var tids: [Int32] = []
    private var seen: Set<Int32> = []
    var isEmpty: Bool { tids.isEmpty }

    mutating func insert(_ tid: Int32) {
      if tid != 0 && seen.insert(tid).inserted { tids.append(tid) }
    }
  }

  /// Seconds as whole microseconds, held within ±2^61 so that the difference of any two
  /// cannot overflow (the reader's limits, ``TaskLogData/Limits``, keep every time of a log
  /// below 10^15 µs; this only makes sure nothing traps whatever the data).
  static func micros(_ seconds: Double) -> Int64 {
    wholeNumber(min(max(seconds * 1e6, -0x1p61), 0x1p61))
  }

  /// `value` rounded to a whole number, saturating at the ends of `Int64` (NaN is 0): the
  /// renderers' one conversion from `Double`, which cannot trap.
  static func wholeNumber(_ value: Double) -> Int64 {
    let rounded = value.rounded()
    if rounded.isNaN { return 0 }
    if rounded >= 0x1p63 { return .max }
    if rounded < -0x1p63 { return .min }
    return Int64(rounded)
  }

  /// `a + b`, saturating at `Int64.max` (a hostile log's many long stretches cannot trap).
  static func sum(_ a: Int64, _ b: Int64) -> Int64 {
    let (total, overflow) = a.addingReportingOverflow(b)
    return overflow ? (b > 0 ? .max : .min) : total
  }

  /// `value` (in units of 10^-`decimals`) with its decimals, from integers only.
  private static func decimal(_ value: Int64, _ decimals: Int) -> String {
    var scale: Int64 = 1
    for _ in 0..<decimals { scale *= 10 }
    let fraction = String(value % scale)
    return "\(value / scale)." + String(repeating: "0", count: decimals - fraction.count) + fraction
  }

  /// The largest number of microseconds the texts below round (no addition can overflow).
  private static let largestMicros = Int64.max - 10_000

  /// A time since the start, `0.0123 s`, rounded half up from whole microseconds.
  static func seconds(micros: Int64) -> String {
    decimal((min(max(0, micros), largestMicros) + 50) / 100, 4) + " s"
  }

  /// A duration for people, from whole microseconds: µs below 0.1 ms, ms below 1 s (one
  /// decimal), else seconds (two), rounded half up.
  static func duration(micros: Int64) -> String {
    let value = min(max(0, micros), largestMicros)
    if value < 100 { return "\(value) µs" }
    if value < 1_000_000 { return decimal((value + 50) / 100, 1) + " ms" }
    return decimal((value + 5_000) / 10_000, 2) + " s"
  }

  private func onThreads(_ tids: [Int32]) -> String {
    guard !tids.isEmpty else { return "" }
    let labels = tids.prefix(6).map { label(ofThread: $0) }
    var text = " on " + labels.prefix(labels.count - 1).joined(separator: ", ")
    text += labels.count > 1 ? " and " + labels[labels.count - 1] : labels[0]
    if tids.count > 6 { text = " on \(tids.count) threads" }
    return text
  }

  /// A duration in seconds for people (see ``duration(micros:)``).
  static func duration(_ seconds: Double) -> String { duration(micros: micros(seconds)) }

  /// The name of system call `number` on the log's architecture, or "syscall N".
  func systemCallName(_ number: Int) -> String {
    Self.systemCallNames(architecture: data.start.architecture)[number] ?? "syscall \(number)"
  }

  /// The system calls squeeze's threads block in, by number (x86-64 `syscall_64.tbl`,
  /// aarch64's generic table).
  static func systemCallNames(architecture: String) -> [Int: String] {
    switch architecture {
    case "x86_64":
      [
        0: "read", 1: "write", 3: "close", 4: "stat", 5: "fstat", 6: "lstat", 7: "poll",
        8: "lseek", 9: "mmap", 11: "munmap", 16: "ioctl", 17: "pread64", 18: "pwrite64",
        23: "select", 35: "nanosleep", 72: "fcntl", 74: "fsync", 75: "fdatasync", 76: "truncate",
        82: "rename", 83: "mkdir", 87: "unlink", 90: "chmod", 91: "fchmod", 93: "fchown",
        202: "futex", 217: "getdents64", 221: "fadvise64", 230: "clock_nanosleep",
        232: "epoll_wait", 257: "openat", 258: "mkdirat", 262: "newfstatat", 263: "unlinkat",
        264: "renameat", 280: "utimensat", 281: "epoll_pwait", 306: "syncfs", 316: "renameat2",
        332: "statx", 437: "openat2",
      ]
    case "aarch64":
      [
        17: "getcwd", 25: "fcntl", 29: "ioctl", 34: "mkdirat", 35: "unlinkat", 38: "renameat",
        56: "openat", 57: "close", 61: "getdents64", 62: "lseek", 63: "read", 64: "write",
        67: "pread64", 68: "pwrite64", 79: "newfstatat", 80: "fstat", 82: "fsync",
        83: "fdatasync", 88: "utimensat", 98: "futex", 101: "nanosleep", 115: "clock_nanosleep",
        223: "fadvise64", 267: "syncfs", 276: "renameat2", 291: "statx", 437: "openat2",
      ]
    default: [:]
    }
  }
}
