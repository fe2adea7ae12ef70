import SqueezeSystem
import SqueezeTaskLog

/// What a task-state log shows, worked out once for the three ways of drawing it (SVG, HTML,
/// Chrome trace): the exact counts over time, a lane per thread with the slices that ran on
/// it and its states, each task's chunks and its story.
///
/// The counts come from replaying the task and chunk events in the log's order (schema 2):
/// each change is a step, at the microsecond it happened, so nothing is held from one sample
/// to the next. A schema-1 log has no chunk events and counted chunks only in its samples,
/// so its counts are drawn from the samples, as they were.
package struct TimelineModel: Sendable {
  /// The log.
  package let data: TaskLogData
  /// The time span drawn, in seconds (at least 1 ms).
  package let duration: Double

  /// The counts right after one change.
  package struct CountStep: Sendable, Equatable {
    /// When, in seconds since the run started.
    package var time: Double
    /// Tasks and chunks running.
    package var running: Int
    /// Tasks and chunks enqueued.
    package var enqueued: Int
    /// Tasks suspended.
    package var suspended: Int
    /// Tasks enqueued on the actor.
    package var actorQueue: Int
  }

  /// Every change of the counts, in order.
  package private(set) var steps: [CountStep] = []
  /// True when ``steps`` come from the events (schema 2); false when from samples.
  private(set) var exactCounts = false

  /// A stretch of time one task (or one of its chunks) ran on a thread.
  package struct Slice: Sendable, Equatable {
    /// When it began, in seconds since the run started.
    package var start: Double
    /// When it ended, in seconds since the run started.
    package var end: Double
    /// The task's index in the log's tasks.
    package var task: Int
    /// The chunk's position in the task's chunks, or -1 for the task's own code.
    package var chunk: Int
  }

  /// A stretch of time a thread was in one state (from the samples: each reading holds
  /// until the next).
  package struct StateRun: Sendable, Equatable {
    /// When it began, in seconds since the run started.
    package var start: Double
    /// When it ended, in seconds since the run started.
    package var end: Double
    /// What the thread was doing.
    package var state: ThreadState
    /// The system call, when blocked.
    package var systemCall: Int?
  }

  /// How long a thread spent in each state, from the samples (each reading holds until the
  /// next sample that read the threads), counted while tasks were alive: from the first
  /// task's creation to the last one's end (the whole log when it has no tasks).
  package struct StateShares: Sendable, Equatable {
    /// Seconds on a CPU (or runnable).
    package var onCPU = 0.0
    /// Seconds blocked in the kernel.
    package var blocked = 0.0
    /// Seconds idle (waiting for work).
    package var idle = 0.0

    /// The seconds sampled.
    package var sampled: Double { onCPU + blocked + idle }

    /// `seconds` as a whole percentage of the time sampled (0 when nothing was).
    package func percent(_ seconds: Double) -> Int {
      sampled > 0 ? Int(TimelineModel.wholeNumber(seconds / sampled * 100)) : 0
    }

    /// "on CPU 76 %, blocked 21 %, idle 3 %".
    package var text: String {
      "on CPU \(percent(onCPU)) %, blocked \(percent(blocked)) %, idle \(percent(idle)) %"
    }

    mutating func add(_ state: ThreadState, _ seconds: Double) {
      switch state {
      case .running: onCPU += seconds
      case .blocked: blocked += seconds
      case .idle: idle += seconds
      }
    }

    static func + (left: StateShares, right: StateShares) -> StateShares {
      StateShares(
        onCPU: left.onCPU + right.onCPU, blocked: left.blocked + right.blocked,
        idle: left.idle + right.idle)
    }
  }

  /// What a thread is, from what squeeze recorded about it (schema 3: the name it gave its
  /// own threads, the Dispatch queue a thread ran jobs from) or, in older logs, from the
  /// kernel's 15-byte name.
  package enum Kind: Sendable, Equatable {
    /// The process's main thread.
    case mainThread
    /// A thread squeeze started, by the name it gave it.
    case own(String)
    /// A worker of the cooperative pool of this quality of service ("user-initiated",
    /// "default", …; nil when unknown), numbered from 1 by the order it first ran a job.
    case pool(qos: String?, number: Int)
    /// A Dispatch worker thread outside the pool (an overcommit one, which drains the main
    /// queue on Linux).
    case dispatchWorker
    /// Nothing is known.
    case unknown
  }

  /// One thread of the process.
  package struct Thread: Sendable {
    /// `gettid`.
    package var tid: Int32
    /// Its number in the drawing (T1 is the lowest thread id, the main thread).
    package var number: Int
    /// Its kernel name (`/proc/self/task/TID/comm`, at most 15 bytes), or "" when never
    /// sampled.
    package var name: String
    /// The name squeeze gave it in full (its own threads), or nil.
    package var given: String? = nil
    /// The Dispatch queues it ran jobs from (label and quality of service), in order.
    package var queues: [(label: String, qos: String?)] = []
    /// What it is.
    package var kind = Kind.unknown
    /// What it is in squeeze: "main actor", "actor executor", "ParallelCompressor",
    /// "publisher", "sampler", "heartbeat", … ("" when its name says it).
    var role: String
    /// What ran on it, in time order.
    package var slices: [Slice]
    /// Its states, in time order.
    package var states: [StateRun]
    /// Its time in each state while tasks were alive.
    package var shares = StateShares()

    /// "T3", as the narratives name it.
    package var label: String { "T\(number)" }

    /// Its name in the drawing: the name squeeze gave it, "pool (user-initiated) 2", "main
    /// thread", "dispatch worker", or the kernel's name when nothing better is known.
    package var displayName: String {
      switch kind {
      case .mainThread: "main thread"
      case .own(let name): name
      case .pool(let qos, let number): "pool\(qos.map { " (\($0))" } ?? "") \(number)"
      case .dispatchWorker: "dispatch worker"
      case .unknown: name.isEmpty ? "tid \(tid)" : name
      }
    }

    /// Whether it is a worker of the cooperative pool.
    package var isPool: Bool {
      if case .pool = kind { return true }
      return false
    }
  }

  /// The threads, by thread id.
  package private(set) var threads: [Thread] = []
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

  /// The pool threads' time in each state, all together, while tasks were alive.
  package private(set) var poolShares = StateShares()
  /// How many pool threads there were.
  package private(set) var poolThreadCount = 0
  /// The threads that ran the main actor's jobs (main-queue jobs, or tasks enqueued on the
  /// main actor), by position in ``threads``.
  package private(set) var mainActorThreads: [Int] = []
  /// The span shares are counted over, in seconds: from the first task's creation to the
  /// last one's end.
  package private(set) var taskSpan: ClosedRange<Double> = 0...0

  /// Works everything out.
  ///
  /// - Complexity: O(n log n) in the number of events.
  package init(data: TaskLogData) {
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
    let first = data.tasks.map(\.created).min() ?? 0
    let last = data.tasks.compactMap(\.ended).max() ?? duration
    taskSpan = first...max(first, data.tasks.isEmpty ? duration : last)
    buildThreadStates()
    assignRoles()
    countShares()
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
    var given: [Int32: String] = [:]
    var queues: [Int32: [(label: String, qos: String?)]] = [:]
    for name in data.threadNames {
      // A queue event says nothing of the name; a later name replaces an earlier one.
      if !name.name.isEmpty || names[name.tid] == nil { names[name.tid] = name.name }
      if let label = name.queue,
        !(queues[name.tid] ?? []).contains(where: { $0.label == label && $0.qos == name.qos })
      {
        queues[name.tid, default: []].append((label, name.qos))
      }
    }
    for name in data.threadNames { if let value = name.given { given[name.tid] = value } }
    threads = tids.sorted().enumerated().map { offset, tid in
      Thread(
        tid: tid, number: offset + 1, name: names[tid] ?? "", given: given[tid],
        queues: queues[tid] ?? [], role: "",
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

  /// The label of the main queue, where the main actor's jobs run.
  static let mainQueueLabel = "com.apple.main-thread"

  /// Says what each thread is, from what squeeze recorded (the names it gave, the queues
  /// threads ran jobs from), from what ran on it, and in older logs from the kernel's name.
  /// Pool threads are numbered per quality of service by the order they first ran a job.
  private mutating func assignRoles() {
    var mainActor: Set<Int32> = []
    var actorThreads: Set<Int32> = []
    for task in data.tasks {
      for (position, transition) in task.transitions.enumerated() where position > 0 {
        guard transition.state == .running, transition.thread != 0 else { continue }
        let before = task.transitions[position - 1]
        if before.executor == .mainActor { mainActor.insert(transition.thread) }
        if before.executor == .actor { actorThreads.insert(transition.thread) }
      }
    }
    let knowsGiven = data.threadNames.contains { $0.given != nil }
    let lowest = threads.first?.tid
    var pools: [(position: Int, qos: String?, first: Double)] = []
    for position in threads.indices {
      let thread = threads[position]
      var role = ""
      if thread.queues.contains(where: { $0.label == Self.mainQueueLabel }) {
        mainActor.insert(thread.tid)
      }
      let poolQueue = thread.queues.first { $0.label != Self.mainQueueLabel }
      if let given = thread.given {
        threads[position].kind = given == "main thread" ? .mainThread : .own(given)
      } else if let poolQueue {
        pools.append((position, poolQueue.qos, Self.firstJob(of: thread)))
      } else if thread.name.hasSuffix("overcommit") || !thread.queues.isEmpty {
        threads[position].kind = .dispatchWorker
      } else if let qos = Self.poolQoS(kernelName: thread.name) {
        pools.append((position, qos, Self.firstJob(of: thread)))
      } else if thread.name.hasSuffix("-qos") {
        pools.append((position, nil, Self.firstJob(of: thread)))
      } else if !knowsGiven, thread.tid == lowest, !thread.name.isEmpty {
        threads[position].kind = .mainThread
      } else if !knowsGiven, thread.name.hasPrefix("squeeze-") {
        threads[position].kind = .own(thread.name)
      } else if !thread.slices.isEmpty {
        pools.append((position, nil, Self.firstJob(of: thread)))
      }
      switch threads[position].kind {
      case .own("squeeze-actor"): role = "actor executor"
      case .own("squeeze-publish"): role = "publisher"
      case .own("squeeze-sampler"): role = "sampler"
      case .own("squeeze-beat"): role = "heartbeat"
      case .own("squeeze-list"): role = "listing"
      case .own("squeeze-boundaries"): role = "rsyncable boundaries"
      default: break
      }
      if mainActor.contains(thread.tid) { role = "main actor" }
      if actorThreads.contains(thread.tid) && threads[position].kind != .own("squeeze-actor") {
        role = "ParallelCompressor"
      }
      threads[position].role = role
    }
    // Numbered per pool, by the first job each ran (threads that ran none last, by tid).
    var counts: [String: Int] = [:]
    for pool in pools.sorted(by: { ($0.first, $0.position) < ($1.first, $1.position) }) {
      let key = pool.qos ?? ""
      let number = (counts[key] ?? 0) + 1
      counts[key] = number
      threads[pool.position].kind = .pool(qos: pool.qos, number: number)
    }
    mainActorThreads = threads.indices.filter { mainActor.contains(threads[$0].tid) }
  }

  /// When a thread first ran something (infinity when it never did).
  private static func firstJob(of thread: Thread) -> Double {
    thread.slices.first?.start ?? .infinity
  }

  /// The pool a kernel name says (older logs): the last 15 bytes of
  /// `com.apple.root.<qos>-qos`, which Dispatch names its workers by.
  static func poolQoS(kernelName name: String) -> String? {
    guard name.hasSuffix("-qos") else { return nil }
    for qos in ["user-interactive", "user-initiated", "default", "utility", "background"]
    where ("com.apple.root." + qos + "-qos").hasSuffix(name) {
      return qos
    }
    return nil
  }

  /// Each thread's time in each state while tasks were alive, and the pool's total.
  private mutating func countShares() {
    for position in threads.indices {
      var shares = StateShares()
      for run in threads[position].states {
        let from = max(run.start, taskSpan.lowerBound)
        let to = min(run.end, taskSpan.upperBound)
        if to > from { shares.add(run.state, to - from) }
      }
      threads[position].shares = shares
      if threads[position].isPool && shares.sampled > 0 {
        poolShares = poolShares + shares
        poolThreadCount += 1
      }
    }
  }

  /// The summary of the pool threads' states: "pool threads blocked 21 % of the time tasks
  /// were alive (on CPU 76 %, idle 3 %; 2 threads, user-initiated)", or nil when no pool
  /// thread was sampled.
  package var poolSummary: String? {
    guard poolThreadCount > 0 else { return nil }
    let shares = poolShares
    var pools: [String] = []
    for thread in threads where thread.isPool && thread.shares.sampled > 0 {
      if case .pool(let qos?, _) = thread.kind, !pools.contains(qos) { pools.append(qos) }
    }
    let which = pools.isEmpty ? "" : ", " + pools.joined(separator: " and ")
    return
      "pool threads blocked \(shares.percent(shares.blocked)) % of the time tasks were alive (on CPU \(shares.percent(shares.onCPU)) %, idle \(shares.percent(shares.idle)) %; \(poolThreadCount) thread\(poolThreadCount == 1 ? "" : "s")\(which))"
  }

  /// Where the main actor's jobs ran, as the log shows it, and why: on Linux, after
  /// `dispatchMain()`, the main thread waits for signals and a Dispatch worker thread drains
  /// the main queue. Nil when the log does not say (no main-actor job was recorded).
  package var mainActorNote: String? {
    guard !mainActorThreads.isEmpty else { return nil }
    let labels = mainActorThreads.map { threads[$0].label }
    let ran = "the main actor's jobs ran on " + labels.joined(separator: " and ")
    let main = threads.first { $0.kind == .mainThread }
    if let main, mainActorThreads.contains(where: { threads[$0].tid == main.tid }) {
      return ran + ", the main thread"
    }
    var note = ran + " (Dispatch's worker for the main queue)"
    if let main {
      note += ", not on \(main.label), the main thread"
      if main.shares.sampled > 0 {
        note += " (idle \(main.shares.percent(main.shares.idle)) % of the time tasks were alive)"
      }
      note += ": after dispatchMain() the main thread only waits for signals"
    }
    return note
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
  package func label(ofThread tid: Int32) -> String {
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
  package static func seconds(micros: Int64) -> String {
    decimal((min(max(0, micros), largestMicros) + 50) / 100, 4) + " s"
  }

  /// A duration for people, from whole microseconds: µs below 0.1 ms, ms below 1 s (one
  /// decimal), else seconds (two), rounded half up.
  package static func duration(micros: Int64) -> String {
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
  package static func duration(_ seconds: Double) -> String { duration(micros: micros(seconds)) }

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
