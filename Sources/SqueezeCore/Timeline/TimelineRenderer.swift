import Foundation

/// Draws a task-state log as one self-contained SVG (no scripts, no fonts, no network), in
/// the spirit of Instruments' Swift Tasks and Swift Actors tracks: counts of running,
/// enqueued and actor-queued tasks over time, the main actor's lag with microhangs and hangs
/// marked, and one lane per task coloured by state. With more tasks than ``maximumLanes``,
/// consecutive tasks (in creation order) share a lane, which shows in each time column the
/// most active state any of them was in (running, else enqueued, else suspended); the
/// picture stays small (well under 5 MB for 100,000 tasks).
struct TimelineRenderer {
  let data: TaskLogData
  /// The time span drawn, in seconds (computed once: it looks at every event).
  private let duration: Double

  init(data: TaskLogData) {
    self.data = data
    duration = max(data.duration, 0.001)
  }

  /// Most lanes drawn; beyond this, tasks are grouped.
  static let maximumLanes = 120
  /// Time columns for grouped lanes and downsampled tracks.
  static let columns = 600

  private let width = 1400.0
  private let left = 190.0
  private let right = 30.0
  private var plotWidth: Double { width - left - right }

  /// Colours by state, as in the legend.
  static let colors: [TaskState: String] = [
    .running: "#2e86de", .enqueued: "#f0a020", .suspended: "#a5b1c2", .failed: "#e03131",
    .finished: "#2f9e44",
  ]

  private func x(_ time: Double) -> Double {
    left + max(0, min(time, duration)) / duration * plotWidth
  }

  /// The SVG document.
  func svg() -> String {
    var body = SVGBuilder()
    var y = 0.0
    let statistics = data.statistics
    let end = data.end
    var title = "squeeze timeline: --isolation \(data.start.isolation)"
    if end == nil { title += " (the log stops early: the run did not finish)" }
    body.text(title, x: 20, y: 30, size: 20, weight: "bold")
    let facts = [
      "jobs \(data.start.jobs)", "\(data.start.cpus) CPUs", "level \(data.start.level)",
      "\(ByteFormat.count(data.start.files)) files", ByteFormat.format(data.start.bytes),
      "wall \(ByteFormat.seconds(duration))",
    ]
    body.text(facts.joined(separator: " · "), x: 20, y: 52, size: 13)
    let measured = [
      "max running \(statistics.maxRunning)",
      "mean running \(ByteFormat.fixed(statistics.meanRunning, 2))",
      "max enqueued \(ByteFormat.count(statistics.maxEnqueued))",
      "hangs \(end?.hangs ?? data.hangs.filter(\.isHang).count)",
      "microhangs \(end?.microhangs ?? data.hangs.filter { !$0.isHang }.count)",
      "worst main-actor lag \(ByteFormat.fixed(end?.worstLagMilliseconds ?? (data.samples.map(\.mainActorLagMilliseconds).max() ?? 0), 1)) ms",
    ]
    body.text(measured.joined(separator: " · "), x: 20, y: 72, size: 13)
    y = 88
    legend(into: &body, y: y)
    y += 28
    let plotTop = y

    let runningMax = max(statistics.maxRunning, data.start.cpus, 1)
    y = countTrack(
      into: &body, top: y, height: 90, label: "Running", id: "running-track",
      values: { $0.running }, maximum: runningMax, color: Self.colors[.running]!,
      marks: [(Double(data.start.cpus), "\(data.start.cpus) cores")])
    y = countTrack(
      into: &body, top: y + 12, height: 90, label: "Enqueued", id: "enqueued-track",
      values: { $0.enqueued }, maximum: max(statistics.maxEnqueued, 1),
      color: Self.colors[.enqueued]!, marks: [])
    y = countTrack(
      into: &body, top: y + 12, height: 45, label: "Actor queue", id: "actor-queue-track",
      values: { $0.actorQueue }, maximum: max(statistics.maxActorQueue, 1), color: "#8e44ad",
      marks: [])
    y = lagTrack(into: &body, top: y + 12, height: 90)
    y = lanes(into: &body, top: y + 18)
    let plotBottom = y
    axis(into: &body, top: plotTop, bottom: plotBottom)
    let height = plotBottom + 40
    return """
      <?xml version="1.0" encoding="UTF-8"?>
      <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
      viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif">
      <title>\(SVGBuilder.escape(title))</title>
      <rect width="100%" height="100%" fill="#ffffff"/>
      \(body.content)</svg>

      """
  }

  /// An HTML page holding the SVG, for browsers that open `.html` more readily.
  func html() -> String {
    """
    <!DOCTYPE html>
    <html lang="en"><head><meta charset="utf-8">\
    <title>squeeze timeline: \(SVGBuilder.escape(data.start.isolation))</title></head>
    <body style="margin:0;background:#fff">
    \(svg().split(separator: "\n", maxSplits: 1).last ?? "")
    </body></html>

    """
  }

  private func legend(into body: inout SVGBuilder, y: Double) {
    var x = 20.0
    let items: [(String, String)] = [
      ("running", Self.colors[.running]!), ("enqueued", Self.colors[.enqueued]!),
      ("suspended", Self.colors[.suspended]!), ("failed", Self.colors[.failed]!),
      ("actor queue", "#8e44ad"), ("microhang (≥ 250 ms)", "#f59f00"),
      ("hang (≥ 500 ms)", "#e03131"),
    ]
    body.raw("<g id=\"legend\">")
    for (name, color) in items {
      body.rect(x: x, y: y, width: 12, height: 12, fill: color)
      body.text(name, x: x + 17, y: y + 11, size: 12)
      x += 30 + Double(name.count) * 6.8
    }
    body.raw("</g>")
  }

  /// A step-area track of one sampled count; returns the bottom.
  private func countTrack(
    into body: inout SVGBuilder, top: Double, height: Double, label: String, id: String,
    values: (TaskLogData.Sample) -> Int, maximum: Int, color: String,
    marks: [(value: Double, label: String)]
  ) -> Double {
    let bottom = top + height
    let scale = Double(max(maximum, 1))
    body.raw("<g id=\"\(id)\">")
    body.rect(x: left, y: top, width: plotWidth, height: height, fill: "#f8f9fa")
    body.text(label, x: 20, y: top + 16, size: 13, weight: "bold")
    body.text("0 – \(ByteFormat.count(maximum))", x: 20, y: top + 32, size: 11, fill: "#555")
    let columns = downsample(values)
    var path = "M\(SVGBuilder.number(left)),\(SVGBuilder.number(bottom))"
    for (index, value) in columns.enumerated() {
      let x0 = left + Double(index) / Double(columns.count) * plotWidth
      let x1 = left + Double(index + 1) / Double(columns.count) * plotWidth
      let yValue = bottom - min(Double(value) / scale, 1) * (height - 4)
      path += "V\(SVGBuilder.number(yValue))H\(SVGBuilder.number(x1))"
      _ = x0
    }
    path += "V\(SVGBuilder.number(bottom))Z"
    body.raw(
      "<path d=\"\(path)\" fill=\"\(color)\" fill-opacity=\"0.55\" stroke=\"\(color)\" stroke-width=\"1\"/>"
    )
    for mark in marks where mark.value > 0 {
      let markY = bottom - min(mark.value / scale, 1) * (height - 4)
      body.raw(
        "<line x1=\"\(SVGBuilder.number(left))\" x2=\"\(SVGBuilder.number(left + plotWidth))\" y1=\"\(SVGBuilder.number(markY))\" y2=\"\(SVGBuilder.number(markY))\" stroke=\"#333\" stroke-dasharray=\"4 3\" stroke-width=\"1\"/>"
      )
      body.text(mark.label, x: left + plotWidth - 60, y: markY - 3, size: 10, fill: "#333")
    }
    body.raw("</g>")
    return bottom
  }

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
    body.rect(x: left, y: top, width: plotWidth, height: height, fill: "#f8f9fa")
    body.text("Main-actor lag", x: 20, y: top + 16, size: 13, weight: "bold")
    body.text("0 – \(Int(scale.rounded())) ms", x: 20, y: top + 32, size: 11, fill: "#555")
    for hang in data.hangs {
      let x0 = x(hang.time)
      let x1 = max(x(hang.time + hang.durationMilliseconds / 1000), x0 + 1.5)
      body.raw(
        "<rect class=\"\(hang.isHang ? "hang" : "microhang")\" x=\"\(SVGBuilder.number(x0))\" y=\"\(SVGBuilder.number(top))\" width=\"\(SVGBuilder.number(x1 - x0))\" height=\"\(SVGBuilder.number(height))\" fill=\"\(hang.isHang ? "#e03131" : "#f59f00")\" fill-opacity=\"0.3\"><title>\(hang.isHang ? "hang" : "microhang") of \(ByteFormat.fixed(hang.durationMilliseconds, 0)) ms at \(ByteFormat.fixed(hang.time, 3)) s</title></rect>"
      )
    }
    for (threshold, name, labelX) in [
      (250.0, "250 ms: microhang", left + 4), (500.0, "500 ms: hang", left + plotWidth - 80),
    ] {
      let lineY = yOf(threshold)
      body.raw(
        "<line x1=\"\(SVGBuilder.number(left))\" x2=\"\(SVGBuilder.number(left + plotWidth))\" y1=\"\(SVGBuilder.number(lineY))\" y2=\"\(SVGBuilder.number(lineY))\" stroke=\"\(threshold == 500 ? "#e03131" : "#f59f00")\" stroke-dasharray=\"4 3\" stroke-width=\"1\"/>"
      )
      body.text(name, x: labelX, y: lineY - 3, size: 10, fill: "#333")
    }
    let columns = downsampleLag()
    var path = ""
    for (index, value) in columns.enumerated() {
      let xValue = left + (Double(index) + 0.5) / Double(columns.count) * plotWidth
      path +=
        (index == 0 ? "M" : "L") + "\(SVGBuilder.number(xValue)),\(SVGBuilder.number(yOf(value)))"
    }
    if !path.isEmpty {
      body.raw("<path d=\"\(path)\" fill=\"none\" stroke=\"#c92a2a\" stroke-width=\"1.2\"/>")
    }
    body.raw("</g>")
    return bottom
  }

  /// The task lanes; returns the bottom.
  private func lanes(into body: inout SVGBuilder, top: Double) -> Double {
    let tasks = data.tasks.sorted { ($0.created, $0.id) < ($1.created, $1.id) }
    let grouped = tasks.count > Self.maximumLanes
    let perLane = grouped ? (tasks.count + Self.maximumLanes - 1) / Self.maximumLanes : 1
    let laneCount = (tasks.count + perLane - 1) / perLane
    let laneHeight = laneCount > 60 ? 6.0 : 10.0
    let gap = 1.0
    var header = "Tasks: one lane per task, by creation time"
    if grouped {
      header =
        "Tasks: \(ByteFormat.count(tasks.count)) in \(laneCount) lanes of \(perLane), by creation time; a lane shows the most active state any of its tasks was in"
    }
    body.raw("<g id=\"task-lanes\">")
    body.text("Task lanes", x: 20, y: top + 14, size: 13, weight: "bold")
    body.text(header, x: left, y: top + 12, size: 11, fill: "#555")
    let lanesTop = top + 22
    for lane in 0..<laneCount {
      let members = tasks[(lane * perLane)..<min(tasks.count, (lane + 1) * perLane)]
      guard !members.isEmpty else { continue }
      let laneY = lanesTop + Double(lane) * (laneHeight + gap)
      let first = lane * perLane + 1
      let label =
        grouped
        ? "tasks #\(ByteFormat.count(first))–\(ByteFormat.count(first + members.count - 1))"
        : members.first!.file
      body.text(
        String(label.suffix(30)), x: left - 6, y: laneY + laneHeight - 1, size: min(laneHeight, 10),
        fill: "#333", anchor: "end")
      var paths: [TaskState: String] = [:]
      var failures = ""
      if grouped {
        for (state, x0, x1) in dominantRuns(Array(members)) {
          paths[state, default: ""] += rectPath(x0, laneY, x1 - x0, laneHeight)
        }
      } else {
        let task = members.first!
        for (index, transition) in task.transitions.enumerated() where !transition.state.isTerminal
        {
          let until =
            index + 1 < task.transitions.count ? task.transitions[index + 1].time : duration
          let x0 = x(transition.time)
          paths[transition.state, default: ""] += rectPath(
            x0, laneY, max(x(until) - x0, 0.6), laneHeight)
        }
      }
      for task in members {
        if let last = task.transitions.last, last.state == .failed {
          failures += rectPath(x(last.time) - 1, laneY, 2.5, laneHeight)
        }
      }
      for state in [TaskState.suspended, .enqueued, .running] {
        if let path = paths[state] {
          body.raw(
            "<path class=\"\(state.rawValue)\" d=\"\(path)\" fill=\"\(Self.colors[state]!)\"/>")
        }
      }
      if !failures.isEmpty {
        body.raw("<path class=\"failed\" d=\"\(failures)\" fill=\"\(Self.colors[.failed]!)\"/>")
      }
    }
    body.raw("</g>")
    return lanesTop + Double(laneCount) * (laneHeight + gap)
  }

  /// For a group of tasks, the most active state any of them was in, column by column
  /// (running, else enqueued, else suspended), merged into runs: (state, x from, x to).
  private func dominantRuns(_ tasks: [TaskLogData.TaskTrack]) -> [(TaskState, Double, Double)] {
    let columns = Self.columns
    let columnWidth = duration / Double(columns)
    // Time spent in each live state per column: running, enqueued, suspended.
    var time = [[Double]](repeating: [0, 0, 0], count: columns)
    let slot: [TaskState: Int] = [.running: 0, .enqueued: 1, .suspended: 2]
    for task in tasks {
      for (index, transition) in task.transitions.enumerated() {
        guard let which = slot[transition.state] else { continue }
        let start = transition.time
        let stop = index + 1 < task.transitions.count ? task.transitions[index + 1].time : duration
        guard stop > start else { continue }
        var column = max(0, min(columns - 1, Int(start / columnWidth)))
        while column < columns {
          let columnStart = Double(column) * columnWidth
          let columnEnd = columnStart + columnWidth
          let overlap = min(stop, columnEnd) - max(start, columnStart)
          if overlap > 0 { time[column][which] += overlap }
          if columnEnd >= stop { break }
          column += 1
        }
      }
    }
    let states: [TaskState] = [.running, .enqueued, .suspended]
    var runs: [(TaskState, Double, Double)] = []
    for column in 0..<columns {
      guard let best = time[column].firstIndex(where: { $0 > 0 }) else { continue }
      let state = states[best]
      let x0 = left + Double(column) / Double(columns) * plotWidth
      let x1 = left + Double(column + 1) / Double(columns) * plotWidth
      if let last = runs.last, last.0 == state, abs(last.2 - x0) < 0.01 {
        runs[runs.count - 1].2 = x1
      } else {
        runs.append((state, x0, x1))
      }
    }
    return runs
  }

  private func rectPath(_ x: Double, _ y: Double, _ width: Double, _ height: Double) -> String {
    "M\(SVGBuilder.number(x)),\(SVGBuilder.number(y))h\(SVGBuilder.number(width))v\(SVGBuilder.number(height))h\(SVGBuilder.number(-width))z"
  }

  /// The time axis: vertical grid lines across every track and labelled ticks below.
  private func axis(into body: inout SVGBuilder, top: Double, bottom: Double) {
    let step = Self.tickStep(for: duration)
    body.raw("<g id=\"time-axis\">")
    var tick = 0.0
    while tick <= duration + step * 0.001 {
      let tickX = x(tick)
      body.raw(
        "<line x1=\"\(SVGBuilder.number(tickX))\" x2=\"\(SVGBuilder.number(tickX))\" y1=\"\(SVGBuilder.number(top))\" y2=\"\(SVGBuilder.number(bottom + 4))\" stroke=\"#000\" stroke-opacity=\"0.12\"/>"
      )
      let decimals = step >= 1 ? 0 : step >= 0.1 ? 1 : step >= 0.01 ? 2 : 3
      body.text(
        "\(ByteFormat.fixed(tick, decimals)) s", x: tickX, y: bottom + 18, size: 11, fill: "#333",
        anchor: "middle")
      tick += step
    }
    body.text(
      "time since the run started", x: left + plotWidth / 2, y: bottom + 34, size: 11, fill: "#555",
      anchor: "middle")
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

  /// The largest sampled value in each of ``columns`` time columns (a column without a
  /// sample repeats the one before).
  private func downsample(_ value: (TaskLogData.Sample) -> Int) -> [Int] {
    var columns = [Int?](repeating: nil, count: Self.columns)
    for sample in data.samples {
      let column = max(0, min(Self.columns - 1, Int(sample.time / duration * Double(Self.columns))))
      columns[column] = max(columns[column] ?? 0, value(sample))
    }
    var previous = 0
    return columns.map { entry in
      if let entry { previous = entry }
      return previous
    }
  }

  private func downsampleLag() -> [Double] {
    var columns = [Double?](repeating: nil, count: Self.columns)
    for sample in data.samples {
      let column = max(0, min(Self.columns - 1, Int(sample.time / duration * Double(Self.columns))))
      columns[column] = max(columns[column] ?? 0, sample.mainActorLagMilliseconds)
    }
    var previous = 0.0
    return columns.map { entry in
      if let entry { previous = entry }
      return previous
    }
  }
}

/// Accumulates SVG markup.
struct SVGBuilder {
  private(set) var content = ""

  mutating func raw(_ markup: String) {
    content += markup
    content += "\n"
  }

  mutating func rect(x: Double, y: Double, width: Double, height: Double, fill: String) {
    raw(
      "<rect x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" width=\"\(Self.number(width))\" height=\"\(Self.number(height))\" fill=\"\(fill)\"/>"
    )
  }

  mutating func text(
    _ text: String, x: Double, y: Double, size: Double, weight: String = "normal",
    fill: String = "#111", anchor: String = "start"
  ) {
    raw(
      "<text x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" font-size=\"\(Self.number(size))\" font-weight=\"\(weight)\" fill=\"\(fill)\" text-anchor=\"\(anchor)\">\(Self.escape(text))</text>"
    )
  }

  /// A coordinate with at most one decimal.
  static func number(_ value: Double) -> String {
    ByteFormat.fixed(value, 1).replacingOccurrences(
      of: ".0", with: "", options: .anchored.union(.backwards))
  }

  /// Escapes text for XML content and attributes.
  static func escape(_ text: String) -> String {
    var result = ""
    result.reserveCapacity(text.count)
    for character in text {
      switch character {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      case "'": result += "&apos;"
      default: result.append(character)
      }
    }
    return result
  }
}
