import SqueezeSystem
import SqueezeTaskLog

/// Draws a task-state log as one self-contained SVG (no scripts, no external fonts, no
/// network), in the spirit of Instruments' Swift Tasks and Swift Actors tracks:
///
/// - the counts of running, enqueued and actor-queued tasks over time, a step at each change
///   (``TimelineModel``), with the cores marked;
/// - the main actor's lag, with the 250 ms and 500 ms thresholds and each microhang and hang
///   shaded;
/// - a lane per thread: which task (or chunk) ran on it when, and below that its state from
///   the samples (on a CPU, blocked in the kernel, idle);
/// - a lane per task: its states (enqueued, running, suspended, continuation waits marked),
///   its chunks while they run, a failure's mark, and its story in a `<title>` (a tooltip in
///   every browser).
///
/// Big logs stay small: up to `laneTaskLimit` tasks get a lane each; beyond, tasks share
/// lanes one pixel row tall (binned to the pixel columns, each showing the most active state
/// of its tasks), with a `<title>` per group of lanes; thread slices beyond `sliceLimit` are
/// binned the same way. A log of 100,000 tasks draws in under 5 MB.
///
/// Every label is in one monospace font (`TimelineFont`) and placed in a margin or between
/// tracks, never on a plot area (class `plot`), shortened with "…" where it would not fit.
package struct TimelineRenderer {
  /// What the log shows.
  package let model: TimelineModel

  /// The renderer of the log `data`.
  package init(data: TaskLogData) {
    model = TimelineModel(data: data)
  }

  /// The renderer of what `model` shows.
  package init(model: TimelineModel) {
    self.model = model
  }

  /// Most tasks drawn with a lane each.
  static let laneTaskLimit = 2000
  /// Most thread slices drawn one by one (with a `<title>` each).
  static let sliceLimit = 4000
  /// Rows of shared lanes beyond ``laneTaskLimit``.
  static let binnedRows = 600

  /// The picture's width in pixels.
  package static let width = 1400.0
  /// Where plots start: the labels' margin is left of it.
  package static let left = 250.0
  /// Space right of the plots: half a time label, and each thread's bar of states.
  static let right = 70.0
  /// The plots' width.
  static var plotWidth: Double { width - left - right }
  /// Labels start here.
  static let labelX = 12.0
  /// Labels in the margin end here.
  static var labelEnd: Double { left - 8 }

  private var data: TaskLogData { model.data }
  private var duration: Double { model.duration }

  /// The x of time `time` (seconds), clamped to the plot.
  package func x(_ time: Double) -> Double {
    Self.left + max(0, min(time, duration)) / duration * Self.plotWidth
  }

  /// The title line.
  package var title: String {
    var title = "squeeze timeline: --isolation \(data.start.isolation)"
    if data.end == nil { title += " (the log stops early: the run did not finish)" }
    return title
  }

  /// The SVG document.
  package func svg() -> String {
    var body = SVGBuilder()
    var y = header(into: &body)
    let plotTop = y
    let runningMaximum = max(model.figures.maxRunning, data.start.cpus, 1)
    y = countTrack(
      into: &body, top: y, height: 80, label: "Running", id: "running-track",
      value: { $0.running }, maximum: runningMaximum, color: Palette.running,
      mark: data.start.cpus > 0 ? (Double(data.start.cpus), "\(data.start.cpus) cores") : nil)
    y = countTrack(
      into: &body, top: y + 14, height: 60, label: "Enqueued", id: "enqueued-track",
      value: { $0.enqueued }, maximum: max(model.figures.maxEnqueued, 1),
      color: Palette.enqueued, mark: nil)
    y = countTrack(
      into: &body, top: y + 14, height: 40, label: "Actor queue", id: "actor-queue-track",
      value: { $0.actorQueue }, maximum: max(model.figures.maxActorQueue, 1),
      color: Palette.actorQueue, mark: nil)
    y = lagTrack(into: &body, top: y + 14, height: 80)
    y = threadLanes(into: &body, top: y + 22)
    let taskTop = y + 36
    y = taskLanes(into: &body, top: taskTop)
    let plotBottom = y
    axis(into: &body, top: plotTop, bottom: plotBottom, labelsAbove: [plotTop, taskTop])
    let height = (plotBottom + 44).rounded(.up)
    let width = Int(Self.width)
    return """
      <?xml version="1.0" encoding="UTF-8"?>
      <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(Int(height))" \
      viewBox="0 0 \(width) \(Int(height))" font-family="\(TimelineFont.family)">
      <title>\(SVGBuilder.escape(title))</title>
      <rect width="100%" height="100%" fill="#ffffff"/>
      \(body.content)</svg>

      """
  }

  // MARK: - Header

  /// The facts of the run, as one line.
  var factsLine: String {
    let start = data.start
    var facts = [
      "jobs \(start.jobs)", "\(start.cpus) CPUs", "level \(start.level)",
      "\(ByteFormat.count(start.files)) files", ByteFormat.format(start.bytes),
      "wall \(ByteFormat.seconds(duration))", "log schema \(start.schema)",
    ]
    if !model.exactCounts { facts.append("counts from samples") }
    return facts.joined(separator: " · ")
  }

  /// What was measured, as one line.
  var measuredLine: String {
    let figures = model.figures
    let end = data.end
    var parts = [
      "max running \(figures.maxRunning)",
      "mean running \(ByteFormat.fixed(figures.meanRunning, 2))",
      "max enqueued \(ByteFormat.count(figures.maxEnqueued))",
      "max actor queue \(ByteFormat.count(figures.maxActorQueue))",
      "hangs \(end?.hangs ?? data.hangs.filter(\.isHang).count)",
      "microhangs \(end?.microhangs ?? data.hangs.filter { !$0.isHang }.count)",
      "worst main-actor lag \(ByteFormat.fixed(end?.worstLagMilliseconds ?? (data.samples.map(\.mainActorLagMilliseconds).max() ?? 0), 1)) ms",
    ]
    if let leaked = end?.leakedContinuations { parts.append("leaked continuations \(leaked)") }
    return parts.joined(separator: " · ")
  }

  /// Title, facts, figures and legend; returns where the tracks start.
  private func header(into body: inout SVGBuilder) -> Double {
    let usable = Self.width - 2 * Self.labelX
    body.label(
      TimelineFont.fit(title, width: usable, size: 16), x: Self.labelX, y: 24, size: 16,
      weight: "bold")
    body.label(
      TimelineFont.fit(factsLine, width: usable, size: 12), x: Self.labelX, y: 44, size: 12)
    body.label(
      TimelineFont.fit(measuredLine, width: usable, size: 12), x: Self.labelX, y: 62, size: 12)
    var y = 62.0
    var problems: [String] = []
    if let leaked = data.end?.leakedContinuations, leaked > 0 {
      problems.append("\(leaked) task(s) still suspended on a continuation when the run ended")
    }
    if !data.warnings.isEmpty {
      problems.append("\(data.warnings.count) bookkeeping warning(s): \(data.warnings[0])")
    }
    for problem in problems {
      y += 18
      body.label(
        TimelineFont.fit(problem, width: usable, size: 12), x: Self.labelX, y: y, size: 12,
        fill: Palette.hang)
    }
    // The legend, wrapped.
    y += 12
    var x = Self.labelX
    body.raw("<g id=\"legend\">")
    for (name, color) in Palette.legend {
      let itemWidth = 14 + TimelineFont.width(name, size: 11) + 18
      if x + itemWidth > Self.width - Self.labelX {
        x = Self.labelX
        y += 18
      }
      body.raw(
        "<rect class=\"swatch\" x=\"\(SVGBuilder.number(x))\" y=\"\(SVGBuilder.number(y))\" width=\"10\" height=\"10\" fill=\"\(color)\" stroke=\"#868e96\" stroke-width=\"0.5\"/>"
      )
      body.label(name, x: x + 14, y: y + 9, size: 11)
      x += itemWidth
    }
    body.raw("</g>")
    // What the threads did, and where the main actor ran: a stage's signature in words.
    let notes = [model.poolSummary, model.mainActorNote.map { "Note: " + $0 }].compactMap { $0 }
    if !notes.isEmpty {
      // The pool's shares as numbers too, for scripts (scripts/demo-contention's table).
      let pool = model.poolShares
      body.raw(
        "<g id=\"thread-notes\" data-pool-on-cpu=\"\(pool.percent(pool.onCPU))\" data-pool-blocked=\"\(pool.percent(pool.blocked))\" data-pool-idle=\"\(pool.percent(pool.idle))\">"
      )
      for note in notes {
        for line in Self.wrap(note, width: usable, size: 11) {
          y += 16
          body.label(line, x: Self.labelX, y: y + 9, size: 11, fill: "#212529")
        }
      }
      body.raw("</g>")
    }
    // Room for the time axis's labels above the first track.
    return y + 44
  }

  /// `text` cut into lines of at most `width` pixels at spaces (a word too long for a line
  /// is shortened with "…").
  static func wrap(_ text: String, width: Double, size: Double) -> [String] {
    var lines: [String] = []
    var line = ""
    for word in text.split(separator: " ", omittingEmptySubsequences: false) {
      let candidate = line.isEmpty ? String(word) : line + " " + word
      if TimelineFont.width(candidate, size: size) <= width || line.isEmpty {
        line = candidate
      } else {
        lines.append(line)
        line = String(word)
      }
    }
    lines.append(line)
    return lines.map { TimelineFont.fit($0, width: width, size: size) }
  }

  // MARK: - Count tracks

  /// A step-area track of one count; returns the bottom.
  private func countTrack(
    into body: inout SVGBuilder, top: Double, height: Double, label: String, id: String,
    value: (TimelineModel.CountStep) -> Int, maximum: Int, color: String,
    mark: (value: Double, label: String)?
  ) -> Double {
    let bottom = top + height
    let scale = Double(max(maximum, 1))
    func yOf(_ count: Double) -> Double { bottom - min(count / scale, 1) * (height - 4) }
    body.raw("<g id=\"\(id)\">")
    body.plot(x: Self.left, y: top, width: Self.plotWidth, height: height)
    body.label(label, x: Self.labelX, y: top + 13, size: 12, weight: "bold")
    body.label(
      "0–\(ByteFormat.count(maximum))\(model.exactCounts ? "" : " (sampled)")", x: Self.labelX,
      y: top + 27, size: 10, fill: "#495057")
    var path = "M\(SVGBuilder.number(Self.left)),\(SVGBuilder.number(bottom))"
    for (columnStart, columnEnd, top) in columns(value) {
      path += "H\(SVGBuilder.number(columnStart))V\(SVGBuilder.number(yOf(Double(top))))"
      path += "H\(SVGBuilder.number(columnEnd))"
    }
    path += "H\(SVGBuilder.number(Self.left + Self.plotWidth))V\(SVGBuilder.number(bottom))Z"
    body.raw(
      "<path class=\"count\" d=\"\(path)\" fill=\"\(color)\" fill-opacity=\"0.6\" stroke=\"\(color)\" stroke-width=\"1\"><title>\(SVGBuilder.escape(label)): at most \(maximum)</title></path>"
    )
    if let mark {
      let markY = yOf(mark.value)
      body.raw(
        "<line x1=\"\(SVGBuilder.number(Self.left))\" x2=\"\(SVGBuilder.number(Self.left + Self.plotWidth))\" y1=\"\(SVGBuilder.number(markY))\" y2=\"\(SVGBuilder.number(markY))\" stroke=\"#212529\" stroke-dasharray=\"4 3\" stroke-width=\"1\"/>"
      )
      body.label(
        mark.label, x: Self.labelEnd, y: min(markY + 3.5, bottom - 1), size: 10, fill: "#212529",
        anchor: "end")
    }
    body.raw("</g>")
    return bottom
  }

  /// The count's steps as (x from, x to, value) runs: exact while they are few, otherwise
  /// the largest value in each pixel column.
  private func columns(_ value: (TimelineModel.CountStep) -> Int) -> [(Double, Double, Int)] {
    let steps = model.steps
    guard !steps.isEmpty else { return [] }
    var runs: [(Double, Double, Int)] = []
    if steps.count <= 3000 {
      for (position, step) in steps.enumerated() {
        let until = position + 1 < steps.count ? steps[position + 1].time : duration
        let count = value(step)
        if let last = runs.last, last.2 == count {
          runs[runs.count - 1].1 = x(until)
        } else {
          runs.append((x(step.time), x(until), count))
        }
      }
      return runs
    }
    let columnCount = Int(Self.plotWidth)
    var highest = [Int](repeating: -1, count: columnCount)
    for (position, step) in steps.enumerated() {
      let until = position + 1 < steps.count ? steps[position + 1].time : duration
      let first = column(of: step.time, count: columnCount)
      let last = column(of: max(step.time, until - 1e-9), count: columnCount)
      let count = value(step)
      for index in first...max(first, last) where count > highest[index] {
        highest[index] = count
      }
    }
    var previous = 0
    for index in 0..<columnCount {
      let count = highest[index] >= 0 ? highest[index] : previous
      previous = count
      let x0 = Self.left + Double(index)
      if let last = runs.last, last.2 == count {
        runs[runs.count - 1].1 = x0 + 1
      } else {
        runs.append((x0, x0 + 1, count))
      }
    }
    return runs
  }

  /// The pixel column (of `count`) of time `time`, clamped to the plot before it becomes
  /// an integer (so no time can trap).
  private func column(of time: Double, count: Int) -> Int {
    let position = time / duration * Double(count)
    guard position > 0 else { return 0 }
    return Int(min(position, Double(count - 1)))
  }

  // MARK: - Lag

  /// The main-actor lag track with the 250 ms and 500 ms thresholds and each hang shaded.
  private func lagTrack(into body: inout SVGBuilder, top: Double, height: Double) -> Double {
    let bottom = top + height
    let worst = max(
      data.samples.map(\.mainActorLagMilliseconds).max() ?? 0, data.end?.worstLagMilliseconds ?? 0)
    let scale = max(600, worst * 1.05)
    func yOf(_ milliseconds: Double) -> Double {
      bottom - min(milliseconds / scale, 1) * (height - 4)
    }
    body.raw("<g id=\"lag-track\">")
    body.plot(x: Self.left, y: top, width: Self.plotWidth, height: height)
    body.label("Main-actor lag", x: Self.labelX, y: top + 13, size: 12, weight: "bold")
    body.label(
      "0–\(TimelineModel.wholeNumber(scale)) ms", x: Self.labelX, y: top + 27, size: 10,
      fill: "#495057")
    for hang in data.hangs {
      let x0 = x(hang.time)
      let x1 = max(x(hang.time + hang.durationMilliseconds / 1000), x0 + 1.5)
      let name = hang.isHang ? "hang" : "microhang"
      body.raw(
        "<rect class=\"\(name)\" x=\"\(SVGBuilder.number(x0))\" y=\"\(SVGBuilder.number(top))\" width=\"\(SVGBuilder.number(x1 - x0))\" height=\"\(SVGBuilder.number(height))\" fill=\"\(hang.isHang ? Palette.hang : Palette.microhang)\" fill-opacity=\"0.35\"><title>\(name) of \(ByteFormat.fixed(hang.durationMilliseconds, 0)) ms at \(ByteFormat.fixed(hang.time, 3)) s</title></rect>"
      )
    }
    for (threshold, name, color) in [
      (250.0, "250 ms microhang", Palette.microhang), (500.0, "500 ms hang", Palette.hang),
    ] {
      let lineY = yOf(threshold)
      body.raw(
        "<line x1=\"\(SVGBuilder.number(Self.left))\" x2=\"\(SVGBuilder.number(Self.left + Self.plotWidth))\" y1=\"\(SVGBuilder.number(lineY))\" y2=\"\(SVGBuilder.number(lineY))\" stroke=\"\(color)\" stroke-dasharray=\"4 3\" stroke-width=\"1.2\"/>"
      )
      // In the margin, level with its line: never over the lag curve.
      body.label(name, x: Self.labelEnd, y: lineY + 3.5, size: 10, fill: "#212529", anchor: "end")
    }
    var path = ""
    let samples = data.samples
    if samples.count <= 3000 {
      for (index, sample) in samples.enumerated() {
        path +=
          (index == 0 ? "M" : "L")
          + "\(SVGBuilder.number(x(sample.time))),\(SVGBuilder.number(yOf(sample.mainActorLagMilliseconds)))"
      }
    } else {
      let columnCount = Int(Self.plotWidth)
      var highest = [Double](repeating: -1, count: columnCount)
      for sample in samples {
        let index = column(of: sample.time, count: columnCount)
        highest[index] = max(highest[index], sample.mainActorLagMilliseconds)
      }
      var first = true
      for (index, value) in highest.enumerated() where value >= 0 {
        path +=
          (first ? "M" : "L")
          + "\(SVGBuilder.number(Self.left + Double(index) + 0.5)),\(SVGBuilder.number(yOf(value)))"
        first = false
      }
    }
    if !path.isEmpty {
      body.raw(
        "<path class=\"lag\" d=\"\(path)\" fill=\"none\" stroke=\"#862e9c\" stroke-width=\"1.2\"/>")
    }
    body.raw("</g>")
    return bottom
  }

  // MARK: - Threads

  /// The thread lanes; returns the bottom.
  private func threadLanes(into body: inout SVGBuilder, top: Double) -> Double {
    let threads = model.threads
    body.raw("<g id=\"thread-lanes\">")
    body.label("Threads", x: Self.labelX, y: top - 6, size: 12, weight: "bold")
    body.label(
      "what ran on each, and its state (on CPU, blocked, idle); right: its shares while tasks were alive",
      x: Self.left, y: top - 6, size: 10, fill: "#495057")
    guard !threads.isEmpty else {
      body.label(
        "no thread data (a schema-1 log)", x: Self.labelX, y: top + 14, size: 10,
        fill: "#495057")
      body.raw("</g>")
      return top + 20
    }
    let laneHeight = 16.0
    let total = threads.reduce(0) { $0 + $1.slices.count }
    let binned = total > Self.sliceLimit
    body.plot(
      x: Self.left, y: top, width: Self.plotWidth, height: Double(threads.count) * laneHeight)
    for (position, thread) in threads.enumerated() {
      let laneY = top + Double(position) * laneHeight
      // "T3 " stays whole; the name and role are shortened from the left when too long.
      var label = thread.displayName
      if !thread.role.isEmpty { label += " · \(thread.role)" }
      let prefix = thread.label + " "
      let room = Self.labelEnd - Self.labelX - TimelineFont.width(prefix, size: 10)
      body.label(
        prefix + TimelineFont.fit(label, width: room, size: 10), x: Self.labelX, y: laneY + 11,
        size: 10)
      shareBar(thread, into: &body, y: laneY + 3)
      body.raw(
        "<g class=\"thread-lane\"><title>\(SVGBuilder.escape(threadSummary(thread)))</title>")
      var taskPath = ""
      var chunkPath = ""
      if binned {
        for (x0, x1, isChunk) in binnedSlices(thread.slices) {
          let rect = SVGBuilder.rectPath(x0, laneY + 1, x1 - x0, 9)
          if isChunk { chunkPath += rect } else { taskPath += rect }
        }
      } else {
        for slice in thread.slices {
          let x0 = x(slice.start)
          let width = max(x(slice.end) - x0, 0.4)
          let task = data.tasks[slice.task]
          // A name is shortened where every slice repeats it (the task's lane has it whole).
          let file = TimelineModel.shortenedName(task.file)
          let what = slice.chunk >= 0 ? "\(file), chunk \(task.chunks[slice.chunk].index)" : file
          body.raw(
            "<rect class=\"\(slice.chunk >= 0 ? "chunk" : "running")\" x=\"\(SVGBuilder.number(x0))\" y=\"\(SVGBuilder.number(laneY + 1))\" width=\"\(SVGBuilder.number(width))\" height=\"9\" fill=\"\(slice.chunk >= 0 ? Palette.chunk : Palette.running)\"><title>\(SVGBuilder.escape("\(what): ran \(TimelineModel.duration(slice.end - slice.start)) on \(thread.label), \(ByteFormat.fixed(slice.start, 4))–\(ByteFormat.fixed(slice.end, 4)) s"))</title></rect>"
          )
        }
      }
      if !taskPath.isEmpty {
        body.raw("<path class=\"running\" d=\"\(taskPath)\" fill=\"\(Palette.running)\"/>")
      }
      if !chunkPath.isEmpty {
        body.raw("<path class=\"chunk\" d=\"\(chunkPath)\" fill=\"\(Palette.chunk)\"/>")
      }
      var statePaths: [ThreadState: String] = [:]
      for run in thread.states {
        let x0 = x(run.start)
        let width = max(x(run.end) - x0, 0.3)
        statePaths[run.state, default: ""] += SVGBuilder.rectPath(x0, laneY + 11, width, 4)
      }
      for state in ThreadState.allCases {
        guard let path = statePaths[state] else { continue }
        let color: String
        switch state {
        case .running: color = Palette.threadRunning
        case .blocked: color = Palette.threadBlocked
        case .idle: color = Palette.threadIdle
        }
        body.raw("<path class=\"thread-\(state.rawValue)\" d=\"\(path)\" fill=\"\(color)\"/>")
      }
      body.raw("</g>")
    }
    body.raw("</g>")
    return top + Double(threads.count) * laneHeight
  }

  /// The width of a thread's bar of states, right of its lane.
  static let shareBarWidth = 48.0

  /// A thread's time on CPU, blocked and idle while tasks were alive, as a bar of three
  /// parts right of its lane (its own plot area), with the shares in its title: pool
  /// threads blocked in `blocking`, on CPU in `nonisolated`, at a glance.
  private func shareBar(_ thread: TimelineModel.Thread, into body: inout SVGBuilder, y: Double) {
    let shares = thread.shares
    guard shares.sampled > 0 else { return }
    let x0 = Self.left + Self.plotWidth + 10
    body.raw(
      "<g class=\"thread-shares\" data-tid=\"\(thread.tid)\" data-on-cpu=\"\(shares.percent(shares.onCPU))\" data-blocked=\"\(shares.percent(shares.blocked))\" data-idle=\"\(shares.percent(shares.idle))\"><title>\(SVGBuilder.escape("\(thread.label) \(thread.displayName): \(shares.text) of the time tasks were alive (sampled)"))</title>"
    )
    body.plot(x: x0, y: y, width: Self.shareBarWidth, height: 8)
    var x = x0
    for (state, seconds, color) in [
      (ThreadState.running, shares.onCPU, Palette.threadRunning),
      (.blocked, shares.blocked, Palette.threadBlocked), (.idle, shares.idle, Palette.threadIdle),
    ] where seconds > 0 {
      let width = seconds / shares.sampled * Self.shareBarWidth
      body.raw(
        "<rect class=\"share-\(state.rawValue)\" x=\"\(SVGBuilder.number(x))\" y=\"\(SVGBuilder.number(y))\" width=\"\(SVGBuilder.number(width))\" height=\"8\" fill=\"\(color)\"/>"
      )
      x += width
    }
    body.raw("</g>")
  }

  /// A thread's story: what ran on it, how busy it was, where it blocked.
  func threadSummary(_ thread: TimelineModel.Thread) -> String {
    var text = "\(thread.label) \(thread.displayName): tid \(thread.tid)"
    if !thread.name.isEmpty && thread.name != thread.displayName {
      text += ", kernel name \"\(thread.name)\""
    }
    if let queue = thread.queues.first { text += ", ran jobs from \"\(queue.label)\"" }
    if !thread.role.isEmpty { text += ", \(thread.role)" }
    let busy = thread.slices.reduce(0.0) { $0 + ($1.end - $1.start) }
    let tasks = Set(thread.slices.filter { $0.chunk < 0 }.map(\.task)).count
    let chunks = thread.slices.filter { $0.chunk >= 0 }.count
    text +=
      "; ran \(ByteFormat.count(tasks)) task\(tasks == 1 ? "" : "s") and \(ByteFormat.count(chunks)) chunk\(chunks == 1 ? "" : "s"), busy \(TimelineModel.duration(busy)) (\(ByteFormat.fixed(busy / duration * 100, 0)) % of the run)"
    var stateTime: [ThreadState: Double] = [:]
    var calls: [Int: Double] = [:]
    for run in thread.states {
      stateTime[run.state, default: 0] += run.end - run.start
      if run.state == .blocked, let call = run.systemCall {
        calls[call, default: 0] += run.end - run.start
      }
    }
    let sampled = stateTime.values.reduce(0, +)
    if sampled > 0 {
      let shares = ThreadState.allCases.compactMap { state -> String? in
        guard let time = stateTime[state] else { return nil }
        let name = state == .running ? "on CPU" : state.rawValue
        return "\(name) \(ByteFormat.fixed(time / sampled * 100, 0)) %"
      }
      text += "; sampled: " + shares.joined(separator: ", ")
      let top = calls.sorted { $0.value > $1.value }.prefix(3).map {
        "\(model.systemCallName($0.key)) \(TimelineModel.duration($0.value))"
      }
      if !top.isEmpty { text += " (blocked in " + top.joined(separator: ", ") + ")" }
    }
    return text
  }

  /// Slices binned to pixel columns: runs of columns where something ran, each marked as
  /// chunk work when chunks took most of the column.
  private func binnedSlices(_ slices: [TimelineModel.Slice]) -> [(Double, Double, Bool)] {
    let count = Int(Self.plotWidth)
    var taskTime = [Double](repeating: 0, count: count)
    var chunkTime = [Double](repeating: 0, count: count)
    let columnLength = duration / Double(count)
    for slice in slices {
      var index = column(of: slice.start, count: count)
      while index < count {
        let start = Double(index) * columnLength
        let end = start + columnLength
        let overlap = min(slice.end, end) - max(slice.start, start)
        if overlap > 0 {
          if slice.chunk >= 0 { chunkTime[index] += overlap } else { taskTime[index] += overlap }
        }
        if end >= slice.end { break }
        index += 1
      }
    }
    var runs: [(Double, Double, Bool)] = []
    for index in 0..<count where taskTime[index] + chunkTime[index] > 0 {
      let isChunk = chunkTime[index] > taskTime[index]
      let x0 = Self.left + Double(index)
      if let last = runs.last, last.2 == isChunk, abs(last.1 - x0) < 0.01 {
        runs[runs.count - 1].1 = x0 + 1
      } else {
        runs.append((x0, x0 + 1, isChunk))
      }
    }
    return runs
  }

  // MARK: - Tasks

  /// The task lanes; returns the bottom.
  private func taskLanes(into body: inout SVGBuilder, top: Double) -> Double {
    let order = data.tasks.indices.sorted {
      (data.tasks[$0].created, data.tasks[$0].id) < (data.tasks[$1].created, data.tasks[$1].id)
    }
    body.raw("<g id=\"task-lanes\">")
    body.label("Tasks", x: Self.labelX, y: top - 20, size: 12, weight: "bold")
    guard !order.isEmpty else {
      body.raw("</g>")
      return top
    }
    let bottom: Double
    if order.count <= Self.laneTaskLimit {
      body.label(
        "one lane per task, by creation time; hover for its story", x: Self.left, y: top - 20,
        size: 10, fill: "#495057")
      bottom = laneEach(order, into: &body, top: top)
    } else {
      let perRow = (order.count + Self.binnedRows - 1) / Self.binnedRows
      body.label(
        "\(ByteFormat.count(order.count)) tasks, \(perRow) to a 2-pixel row by creation time; each column shows the most active state; hover a group for its tasks",
        x: Self.left, y: top - 20, size: 10, fill: "#495057")
      bottom = lanesBinned(order, perRow: perRow, into: &body, top: top)
    }
    body.raw("</g>")
    return bottom
  }

  /// One lane per task.
  private func laneEach(_ order: [Int], into body: inout SVGBuilder, top: Double) -> Double {
    let laneHeight = max(3, min(12, (2400 / Double(order.count)).rounded(.down)))
    let gap = laneHeight >= 6 ? 1.0 : 0
    let pitch = laneHeight + gap
    body.plot(x: Self.left, y: top, width: Self.plotWidth, height: Double(order.count) * pitch)
    // Labels: every lane when lanes are tall enough, else every few lanes (at least 12 px
    // apart), naming the task's number and file.
    let labelSize = 9.0
    let every = laneHeight >= 10 ? 1 : Int((12 / pitch).rounded(.up))
    for (position, index) in order.enumerated() {
      let task = data.tasks[index]
      let laneY = top + Double(position) * pitch
      if position % every == 0 {
        let text = every == 1 ? task.file : "#\(ByteFormat.count(position + 1)) \(task.file)"
        let labelY = every == 1 ? laneY + laneHeight - 1.5 : laneY + min(laneHeight, 9) + 0.5
        body.label(
          TimelineFont.fit(text, width: Self.labelEnd - Self.labelX, size: labelSize),
          x: Self.labelX, y: labelY, size: labelSize, fill: "#212529")
      }
      body.raw(
        "<g class=\"task-lane\"><title>\(SVGBuilder.escape(model.narrative(of: index)))</title>")
      drawTask(task, into: &body, y: laneY, height: laneHeight)
      body.raw("</g>")
    }
    return top + Double(order.count) * pitch
  }

  /// A task's states, chunks, continuation marks and failure on its lane.
  private func drawTask(
    _ task: TaskLogData.TaskTrack, into body: inout SVGBuilder, y: Double, height: Double
  ) {
    var paths: [TaskState: String] = [:]
    var marks = ""
    for (position, transition) in task.transitions.enumerated() where !transition.state.isTerminal {
      let until =
        position + 1 < task.transitions.count ? task.transitions[position + 1].time : duration
      let x0 = x(transition.time)
      let width = max(x(until) - x0, 0.5)
      paths[transition.state, default: ""] += SVGBuilder.rectPath(x0, y, width, height)
      if transition.state == .suspended, transition.reason?.isContinuation == true {
        marks += SVGBuilder.rectPath(x0, y, width, max(1, height * 0.25))
      }
    }
    for state in [TaskState.suspended, .enqueued, .running] {
      if let path = paths[state] {
        body.raw("<path class=\"\(state.rawValue)\" d=\"\(path)\" fill=\"\(color(of: state))\"/>")
      }
    }
    if !marks.isEmpty {
      body.raw("<path class=\"continuation\" d=\"\(marks)\" fill=\"\(Palette.continuation)\"/>")
    }
    // The chunks: where any of them runs, in the lower part of the lane.
    var chunkPath = ""
    for (start, end) in Self.union(
      task.chunks.compactMap { chunk in
        chunk.started.map { ($0, chunk.ended ?? duration) }
      })
    {
      let x0 = x(start)
      chunkPath += SVGBuilder.rectPath(x0, y + height * 0.45, max(x(end) - x0, 0.5), height * 0.55)
    }
    if !chunkPath.isEmpty {
      body.raw("<path class=\"chunk\" d=\"\(chunkPath)\" fill=\"\(Palette.chunk)\"/>")
    }
    if let last = task.transitions.last, last.state == .failed {
      let at = x(last.time)
      body.raw(
        "<path class=\"failed\" d=\"\(SVGBuilder.rectPath(min(at, Self.left + Self.plotWidth - 2.5), y, 2.5, height))\" fill=\"\(Palette.failed)\"/>"
      )
    }
  }

  private func color(of state: TaskState) -> String {
    switch state {
    case .running: Palette.running
    case .enqueued: Palette.enqueued
    case .suspended: Palette.suspended
    case .failed: Palette.failed
    case .finished: Palette.threadRunning
    }
  }

  /// Merges overlapping intervals.
  package static func union(_ intervals: [(Double, Double)]) -> [(Double, Double)] {
    let sorted = intervals.sorted { $0.0 < $1.0 }
    var merged: [(Double, Double)] = []
    for interval in sorted {
      if let last = merged.last, interval.0 <= last.1 {
        merged[merged.count - 1].1 = max(last.1, interval.1)
      } else {
        merged.append(interval)
      }
    }
    return merged
  }

  /// Tasks sharing 2-pixel rows, binned to pixel columns, in groups of 8 rows with a label
  /// and a `<title>` each.
  private func lanesBinned(
    _ order: [Int], perRow: Int, into body: inout SVGBuilder, top: Double
  ) -> Double {
    let rowHeight = 2.0
    let rows = (order.count + perRow - 1) / perRow
    let rowsPerGroup = 8
    body.plot(x: Self.left, y: top, width: Self.plotWidth, height: Double(rows) * rowHeight)
    var row = 0
    while row < rows {
      let groupEnd = min(rows, row + rowsPerGroup)
      let members = Array(order[(row * perRow)..<min(order.count, groupEnd * perRow)])
      let groupY = top + Double(row) * rowHeight
      body.label(
        "#\(ByteFormat.count(row * perRow + 1))–\(ByteFormat.count(row * perRow + members.count))",
        x: Self.labelX, y: groupY + 10, size: 9, fill: "#212529")
      body.raw(
        "<g class=\"task-group\"><title>\(SVGBuilder.escape(groupSummary(members)))</title>")
      for groupRow in row..<groupEnd {
        let rowMembers = order[(groupRow * perRow)..<min(order.count, (groupRow + 1) * perRow)]
        drawBinnedRow(
          Array(rowMembers), into: &body, y: top + Double(groupRow) * rowHeight,
          height: rowHeight)
      }
      body.raw("</g>")
      row = groupEnd
    }
    return top + Double(rows) * rowHeight
  }

  /// One row of shared lanes: per pixel column, the most active state any of `members` was
  /// in (a failure's mark, then running, chunk running, enqueued, suspended).
  private func drawBinnedRow(
    _ members: [Int], into body: inout SVGBuilder, y: Double, height: Double
  ) {
    let columnCount = Int(Self.plotWidth)
    let classes = ["failed", "running", "chunk", "enqueued", "suspended"]
    let colors = [
      Palette.failed, Palette.running, Palette.chunk, Palette.enqueued, Palette.suspended,
    ]
    // Difference arrays over the columns, one per kind: O(1) per span.
    var difference = [[Int32]](
      repeating: [Int32](repeating: 0, count: columnCount + 1), count: classes.count)
    func add(_ kind: Int, _ start: Double, _ end: Double) {
      let first = column(of: start, count: columnCount)
      let last = max(first, column(of: max(start, end - 1e-9), count: columnCount))
      difference[kind][first] += 1
      difference[kind][last + 1] -= 1
    }
    for index in members {
      let task = data.tasks[index]
      for (position, transition) in task.transitions.enumerated() {
        let until =
          position + 1 < task.transitions.count ? task.transitions[position + 1].time : duration
        switch transition.state {
        case .failed: add(0, transition.time, transition.time)
        case .running: add(1, transition.time, until)
        case .enqueued: add(3, transition.time, until)
        case .suspended: add(4, transition.time, until)
        case .finished: break
        }
      }
      for chunk in task.chunks {
        if let start = chunk.started { add(2, start, chunk.ended ?? duration) }
      }
    }
    var paths = [String](repeating: "", count: classes.count)
    var active = [Int32](repeating: 0, count: classes.count)
    var runKind = -1
    var runStart = 0
    for index in 0...columnCount {
      var kind = -1
      if index < columnCount {
        for which in 0..<classes.count { active[which] += difference[which][index] }
        kind = active.firstIndex { $0 > 0 } ?? -1
      }
      if kind != runKind {
        if runKind >= 0 {
          paths[runKind] += SVGBuilder.rectPath(
            Self.left + Double(runStart), y, Double(index - runStart), height)
        }
        runKind = kind
        runStart = index
      }
    }
    for kind in [4, 3, 1, 2, 0] where !paths[kind].isEmpty {
      body.raw("<path class=\"\(classes[kind])\" d=\"\(paths[kind])\" fill=\"\(colors[kind])\"/>")
    }
  }

  /// A group of tasks' story: which, how many, where their time went.
  func groupSummary(_ members: [Int]) -> String {
    guard let first = members.first, let last = members.last else { return "" }
    var time: [TaskState: Double] = [:]
    var failed = 0
    var chunks = 0
    for index in members {
      let task = data.tasks[index]
      chunks += task.chunks.count
      for (position, transition) in task.transitions.enumerated() {
        let until =
          position + 1 < task.transitions.count ? task.transitions[position + 1].time : duration
        time[transition.state, default: 0] += max(0, until - transition.time)
        if transition.state == .failed { failed += 1 }
      }
    }
    var text =
      "\(ByteFormat.count(members.count)) tasks, \(data.tasks[first].file) … \(data.tasks[last].file): "
    text += [TaskState.enqueued, .running, .suspended].map {
      "\($0.rawValue) \(TimelineModel.duration(time[$0] ?? 0))"
    }.joined(separator: ", ")
    text += " in all"
    if chunks > 0 { text += "; \(ByteFormat.count(chunks)) chunks" }
    if failed > 0 { text += "; \(failed) failed" }
    return text
  }

  // MARK: - Axis

  /// The time axis: vertical grid lines across every track, labelled ticks below the last
  /// one, and the same labels just above each of `labelsAbove` (the top of the tracks, the
  /// top of the task lanes), so a tall picture has its times in view wherever one looks.
  private func axis(
    into body: inout SVGBuilder, top: Double, bottom: Double, labelsAbove: [Double] = []
  ) {
    let step = Self.tickStep(for: duration)
    body.raw("<g id=\"time-axis\">")
    var tick = 0.0
    let decimals = step >= 1 ? 0 : step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3
    while tick <= duration + step * 0.001 {
      let tickX = x(tick)
      body.raw(
        "<line x1=\"\(SVGBuilder.number(tickX))\" x2=\"\(SVGBuilder.number(tickX))\" y1=\"\(SVGBuilder.number(top))\" y2=\"\(SVGBuilder.number(bottom + 4))\" stroke=\"#000\" stroke-opacity=\"0.12\"/>"
      )
      body.label(
        "\(ByteFormat.fixed(tick, decimals)) s", x: tickX, y: bottom + 18, size: 11,
        fill: "#212529", anchor: "middle")
      for above in labelsAbove {
        body.label(
          "\(ByteFormat.fixed(tick, decimals)) s", x: tickX, y: above - 5, size: 10,
          fill: "#495057", anchor: "middle")
      }
      tick += step
    }
    body.label(
      "time since the run started", x: Self.left + Self.plotWidth / 2, y: bottom + 36, size: 11,
      fill: "#495057", anchor: "middle")
    body.raw("</g>")
  }

  /// A tick spacing of 1, 2 or 5 times a power of ten giving 5 to 12 ticks.
  static func tickStep(for duration: Double) -> Double {
    var power = 1e-3
    while true {
      for multiple in [1.0, 2.0, 5.0] where duration / (power * multiple) <= 12 {
        return power * multiple
      }
      power *= 10
    }
  }
}

/// Accumulates SVG markup.
package struct SVGBuilder {
  /// The markup so far.
  package private(set) var content = ""

  /// Appends `markup` as it is, and a newline.
  package mutating func raw(_ markup: String) {
    content += markup
    content += "\n"
  }

  /// A plot area's background: data is drawn only on plot areas, labels never.
  mutating func plot(x: Double, y: Double, width: Double, height: Double) {
    raw(
      "<rect class=\"plot\" x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" width=\"\(Self.number(width))\" height=\"\(Self.number(height))\" fill=\"#f8f9fa\"/>"
    )
  }

  /// A label in the timeline's monospace font (`TimelineFont`).
  package mutating func label(
    _ text: String, x: Double, y: Double, size: Double, weight: String = "normal",
    fill: String = "#111", anchor: String = "start"
  ) {
    var attributes =
      "x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" font-size=\"\(Self.number(size))\""
    if weight != "normal" { attributes += " font-weight=\"\(weight)\"" }
    if fill != "#111" { attributes += " fill=\"\(fill)\"" }
    if anchor != "start" { attributes += " text-anchor=\"\(anchor)\"" }
    raw("<text \(attributes)>\(Self.escape(text))</text>")
  }

  /// A rectangle as path data.
  static func rectPath(_ x: Double, _ y: Double, _ width: Double, _ height: Double) -> String {
    "M\(number(x)) \(number(y))h\(number(width))v\(number(height))h\(number(-width))z"
  }

  /// A coordinate with at most one decimal (held within ±10^12 pixels, so it cannot trap).
  package static func number(_ value: Double) -> String {
    let tenths = Int(TimelineModel.wholeNumber(min(max(value * 10, -1e13), 1e13)))
    let whole = tenths / 10
    let fraction = abs(tenths % 10)
    if fraction == 0 { return String(whole) }
    return (tenths < 0 && whole == 0 ? "-" : "") + String(whole) + "." + String(fraction)
  }

  /// Escapes text for XML content and attributes (SVG, and HTML's text): `&`, `<`, `>`,
  /// `"` and `'` as entities, and what XML 1.0 cannot hold at all (control characters other
  /// than tab and line feed, U+FFFE, U+FFFF) as U+FFFD.
  ///
  /// - Complexity: O(n) in the text's length.
  package static func escape(_ text: String) -> String {
    var result = String.UnicodeScalarView()
    result.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": result.append(contentsOf: "&amp;".unicodeScalars)
      case "<": result.append(contentsOf: "&lt;".unicodeScalars)
      case ">": result.append(contentsOf: "&gt;".unicodeScalars)
      case "\"": result.append(contentsOf: "&quot;".unicodeScalars)
      case "'": result.append(contentsOf: "&apos;".unicodeScalars)
      case "\t", "\n": result.append(scalar)
      case "\u{0}"..<" ", "\u{FFFE}", "\u{FFFF}": result.append("\u{FFFD}")
      default: result.append(scalar)
      }
    }
    return String(result)
  }

}
