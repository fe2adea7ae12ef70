import Foundation
import FoundationXML
import SqueezeTaskLog
import TestSupport
import Testing

@testable import SqueezeTimeline

@Suite struct TimelineTests {
  /// A synthetic log: `tasks` tasks created over `duration` seconds, each enqueued, running,
  /// then finished (every tenth failed), with samples every 10 ms and one hang.
  static func syntheticLog(tasks: Int, duration: Double) -> [UInt8] {
    var lines = ""
    lines +=
      #"{"event":"start","t":0,"version":"t","isolation":"nonisolated","jobs":4,"level":6,"cpus":2,"files":\#(tasks),"bytes":1000}"#
      + "\n"
    var time = 0.0
    while time < duration {
      lines +=
        #"{"event":"sample","t":\#(time),"running":2,"enqueued":\#(Int(time * 10)),"suspended":0,"alive":3,"total":5,"completed":1,"actorQueue":0,"mainActorLagMs":\#(time > 0.5 && time < 1.2 ? (time - 0.5) * 1000 : 0.3),"futureKey":true}"#
        + "\n"
      time += 0.01
    }
    for id in 1...tasks {
      let start = duration * Double(id - 1) / Double(tasks)
      lines +=
        #"{"event":"task","t":\#(start),"id":\#(id),"file":"dir/file \#(id).txt","state":"enqueued"}"#
        + "\n"
      lines += #"{"event":"task","t":\#(start + 0.001),"id":\#(id),"state":"running"}"# + "\n"
      lines +=
        #"{"event":"task","t":\#(start + 0.002),"id":\#(id),"state":"\#(id % 10 == 0 ? "failed" : "finished")"}"#
        + "\n"
    }
    lines += #"{"event":"hang","t":0.5,"durationMs":700,"severity":"hang"}"# + "\n"
    lines += #"{"event":"someFutureEvent","t":1}"# + "\n"
    lines +=
      #"{"event":"end","t":\#(duration),"files":\#(tasks),"failed":\#(tasks / 10),"bytesIn":1000,"bytesOut":500,"maxRunning":2,"maxEnqueued":9,"hangs":1,"microhangs":0,"worstLagMs":700}"#
      + "\n"
    return Array(lines.utf8)
  }

  /// Parses `svg` as XML and returns the ids of its elements.
  static func elementIDs(_ svg: String) throws -> Set<String> {
    final class Collector: NSObject, XMLParserDelegate {
      var ids: Set<String> = []
      func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName: String?, attributes: [String: String] = [:]
      ) {
        if let id = attributes["id"] { ids.insert(id) }
      }
    }
    let parser = XMLParser(data: Data(svg.utf8))
    let collector = Collector()
    parser.delegate = collector
    guard parser.parse() else {
      throw ParseFailure(description: String(describing: parser.parserError))
    }
    return collector.ids
  }

  struct ParseFailure: Error, CustomStringConvertible {
    var description: String
  }

  @Test func readsEveryEventAndIgnoresUnknownOnes() throws {
    let data = try TaskLogData.parse(Self.syntheticLog(tasks: 30, duration: 2))
    #expect(data.start.isolation == "nonisolated")
    #expect(data.tasks.count == 30)
    #expect(data.tasks[0].file == "dir/file 1.txt")
    #expect(data.tasks[9].transitions.last?.state == .failed)
    #expect(data.hangs.count == 1)
    #expect(data.end?.hangs == 1)
    #expect(data.samples.count >= 199)
    #expect(data.statistics.maxRunning == 2)
  }

  @Test func refusesSomethingThatIsNotATaskLog() {
    #expect(throws: TaskLogData.ReadError.self) { try TaskLogData.parse(Array("hello\n".utf8)) }
    #expect(throws: TaskLogData.ReadError.self) {
      try TaskLogData.parse(Array(#"{"event":"sample","t":0}"#.utf8))
    }
  }

  @Test(arguments: [10, 500])
  func drawsWellFormedSVGWithEveryTrack(tasks: Int) throws {
    let data = try TaskLogData.parse(Self.syntheticLog(tasks: tasks, duration: 2))
    let svg = TimelineRenderer(data: data).svg()
    let ids = try Self.elementIDs(svg)
    #expect(
      ids.isSuperset(of: [
        "running-track", "enqueued-track", "actor-queue-track", "lag-track", "task-lanes",
        "time-axis", "legend",
      ]))
    #expect(svg.contains("class=\"hang\""))
    #expect(svg.contains("class=\"running\""))
    #expect(svg.contains("class=\"failed\""))
    #expect(svg.contains("--isolation nonisolated"))
    #expect(ids.contains("thread-lanes"))
    #expect(svg.contains("dir/file 1.txt"))
  }

  @Test(.tags(.slow), .systemTier)
  func aLogOf100000TasksDrawsUnder5Megabytes() throws {
    let data = try TaskLogData.parse(Self.syntheticLog(tasks: 100_000, duration: 30))
    let svg = TimelineRenderer(data: data).svg()
    #expect(svg.utf8.count < 5_000_000)
    #expect(try Self.elementIDs(svg).contains("task-lanes"))
  }

  @Test(arguments: [(0.05, 0.005), (2.0, 0.2), (4.2, 0.5), (35.0, 5.0), (100.0, 10.0)])
  func ticksAreOneTwoOrFiveTimesAPowerOfTen(duration: Double, step: Double) {
    #expect(abs(TimelineRenderer.tickStep(for: duration) - step) < 1e-9)
  }

  @Test func aKilledRunsLogIsReadUpToItsCutOffLastLine() throws {
    var bytes = Self.syntheticLog(tasks: 3, duration: 0.1)
    // Drop the end event and cut the log in the middle of its last line.
    let text = String(decoding: bytes, as: UTF8.self)
    let withoutEnd = text.split(separator: "\n").filter { !$0.contains(#""event":"end""#) }
    bytes = Array((withoutEnd.joined(separator: "\n") + "\n" + #"{"event":"sam"#).utf8)
    let data = try TaskLogData.parse(bytes)
    #expect(data.endsMidLine)
    #expect(data.end == nil)
    #expect(data.tasks.count == 3)
    #expect(TimelineRenderer(data: data).svg().contains("the log stops early"))
    // A broken line anywhere else is still an error, and so is a broken last line that
    // ends with a newline (the writer never leaves one).
    #expect(throws: TaskLogData.ReadError.self) {
      try TaskLogData.parse(Array((#"{"event":"sam"# + "\n" + text).utf8))
    }
    #expect(throws: TaskLogData.ReadError.self) {
      try TaskLogData.parse(Array((text + #"{"event":"sam"# + "\n").utf8))
    }
  }
}

/// A schema-2 log written the way squeeze writes one, for the drawing tests.
enum Schema2Log {
  /// `tasks` tasks over `duration` seconds on `threads` pool threads: each enqueued, running
  /// on a thread, suspended for its publication, then finished (every tenth failed); task 1
  /// is a big file whose 3 chunks run on the threads while it waits for them, task 2 waits
  /// for a compression slot; samples every 10 ms with the threads' states; one hang.
  static func make(
    tasks: Int, duration: Double, threads: Int = 2,
    fileNames: (Int) -> String = {
      "dir/file \($0).txt"
    }
  ) -> [UInt8] {
    var events: [(Double, String)] = []
    func add(_ time: Double, _ text: String) { events.append((time, text)) }
    add(
      0,
      #"{"event":"start","t":0,"schema":2,"version":"t","arch":"x86_64","isolation":"nonisolated","jobs":4,"level":6,"cpus":2,"files":\#(tasks),"bytes":1000,"blockSize":131072}"#
    )
    let tids = (0..<threads).map { 101 + $0 }
    add(0.0001, #"{"event":"thread","t":0.0001,"tid":100,"name":"squeeze"}"#)
    for tid in tids {
      add(0.0001, #"{"event":"thread","t":0.0001,"tid":\#(tid),"name":"r-initiated-qos"}"#)
    }
    add(0.0001, #"{"event":"thread","t":0.0001,"tid":200,"name":"squeeze-publish"}"#)
    let slot = duration / Double(max(tasks, 1))
    for id in 1...tasks {
      let start = Double(id - 1) * slot
      let tid = tids[(id - 1) % tids.count]
      let time = { (fraction: Double) in start + slot * fraction }
      add(
        time(0),
        #"{"event":"task","t":\#(time(0)),"id":\#(id),"file":"\#(fileNames(id))","state":"enqueued","on":"pool"}"#
      )
      add(
        time(0.1),
        #"{"event":"task","t":\#(time(0.1)),"id":\#(id),"state":"running","thread":\#(tid)}"#)
      if id == 1 {
        for chunk in 0..<3 {
          let begin = time(0.2 + Double(chunk) * 0.1)
          add(
            begin, #"{"event":"chunk","t":\#(begin),"id":1,"chunk":\#(chunk),"state":"enqueued"}"#)
          add(
            begin + slot * 0.01,
            #"{"event":"chunk","t":\#(begin + slot * 0.01),"id":1,"chunk":\#(chunk),"state":"running","thread":\#(tids[chunk % tids.count])}"#
          )
          add(
            begin + slot * 0.05,
            #"{"event":"chunk","t":\#(begin + slot * 0.05),"id":1,"chunk":\#(chunk),"state":"finished"}"#
          )
        }
        add(
          time(0.15),
          #"{"event":"task","t":\#(time(0.15)),"id":1,"state":"suspended","reason":"chunks"}"#)
        add(
          time(0.6),
          #"{"event":"task","t":\#(time(0.6)),"id":1,"state":"running","thread":\#(tid)}"#)
      }
      if id == 2 {
        add(
          time(0.15),
          #"{"event":"task","t":\#(time(0.15)),"id":2,"state":"suspended","reason":"slot"}"#)
        add(time(0.2), #"{"event":"task","t":\#(time(0.2)),"id":2,"state":"enqueued","on":"pool"}"#)
        add(
          time(0.25),
          #"{"event":"task","t":\#(time(0.25)),"id":2,"state":"running","thread":\#(tid)}"#)
      }
      add(
        time(0.7),
        #"{"event":"task","t":\#(time(0.7)),"id":\#(id),"state":"suspended","reason":"publication"}"#
      )
      if id % 10 == 0 {
        add(
          time(0.9),
          #"{"event":"task","t":\#(time(0.9)),"id":\#(id),"file":"\#(fileNames(id))","state":"failed","error":"cannot read: Input/output error (errno 5)"}"#
        )
      } else {
        add(time(0.9), #"{"event":"task","t":\#(time(0.9)),"id":\#(id),"state":"finished"}"#)
      }
    }
    var sampleTime = 0.0
    while sampleTime < duration {
      let states = ([100] + tids + [200]).map { tid in
        let state =
          tid == 200 ? #""blocked","syscall":306"# : tid == 100 ? #""idle""# : #""running""#
        return #"{"tid":\#(tid),"state":\#(state)}"#
      }
      add(
        sampleTime,
        #"{"event":"sample","t":\#(sampleTime),"running":1,"enqueued":0,"suspended":0,"alive":1,"total":1,"completed":0,"actorQueue":0,"threads":[\#(states.joined(separator: ","))],"mainActorLagMs":\#(sampleTime > 0.5 && sampleTime < 1.2 ? (sampleTime - 0.5) * 1000 : 0.3)}"#
      )
      sampleTime += 0.01
    }
    add(0.5, #"{"event":"hang","t":0.5,"durationMs":700,"severity":"hang"}"#)
    add(
      duration,
      #"{"event":"end","t":\#(duration),"files":\#(tasks),"failed":\#(tasks / 10),"bytesIn":1000,"bytesOut":500,"maxRunning":2,"maxEnqueued":2,"hangs":1,"microhangs":0,"worstLagMs":700,"leakedContinuations":0}"#
    )
    // The writer's order: by time (stable).
    let ordered = events.enumerated().sorted {
      ($0.element.0, $0.offset) < ($1.element.0, $1.offset)
    }
    return Array(ordered.map { $0.element.1 + "\n" }.joined().utf8)
  }
}

/// A label of an SVG: its text, where, how big.
struct SVGLabel {
  var text: String
  var x: Double
  var y: Double
  var size: Double
  var anchor: String

  /// The box the label's glyphs fill, from the timeline's monospace metrics.
  var box: (x0: Double, y0: Double, x1: Double, y1: Double) {
    let width = TimelineFont.width(text, size: size)
    let x0 = anchor == "end" ? x - width : anchor == "middle" ? x - width / 2 : x
    return (x0, y - TimelineFont.ascent * size, x0 + width, y + TimelineFont.descent * size)
  }
}

/// Reads the labels, plot areas and size of an SVG.
final class SVGGeometry: NSObject, XMLParserDelegate {
  var labels: [SVGLabel] = []
  var plots: [(x0: Double, y0: Double, x1: Double, y1: Double)] = []
  var width = 0.0
  var height = 0.0
  var fills: Set<String> = []
  private var current: SVGLabel? = nil

  static func read(_ svg: String) throws -> SVGGeometry {
    let geometry = SVGGeometry()
    let parser = XMLParser(data: Data(svg.utf8))
    parser.delegate = geometry
    guard parser.parse() else {
      throw TimelineTests.ParseFailure(description: String(describing: parser.parserError))
    }
    return geometry
  }

  func parser(
    _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
    qualifiedName: String?, attributes: [String: String] = [:]
  ) {
    func number(_ key: String) -> Double { Double(attributes[key] ?? "") ?? 0 }
    if let fill = attributes["fill"] { fills.insert(fill) }
    switch elementName {
    case "svg":
      width = number("width")
      height = number("height")
    case "rect" where attributes["class"] == "plot":
      plots.append(
        (number("x"), number("y"), number("x") + number("width"), number("y") + number("height")))
    case "text":
      current = SVGLabel(
        text: "", x: number("x"), y: number("y"), size: number("font-size"),
        anchor: attributes["text-anchor"] ?? "start")
    default: break
    }
  }

  func parser(_ parser: XMLParser, foundCharacters string: String) {
    current?.text += string
  }

  func parser(
    _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
    qualifiedName: String?
  ) {
    if elementName == "text", let label = current {
      labels.append(label)
      current = nil
    }
  }
}

@Suite struct TimelineDrawingTests {
  static func model(_ bytes: [UInt8]) throws -> TimelineModel {
    TimelineModel(data: try TaskLogData.parse(bytes))
  }

  @Test(arguments: [
    (tasks: 12, long: false), (tasks: 300, long: false), (tasks: 40, long: true),
    (tasks: 3_000, long: true),
  ])
  func labelsAreNeverCutAndNeverOverData(tasks: Int, long: Bool) throws {
    let names: (Int) -> String =
      long
      ? {
        "a/very/deep/folder/with/a/long/name/that/goes/on/and/on/\(String(repeating: "é", count: $0 % 7))file-\($0).log"
      }
      : { "dir/file \($0).txt" }
    for bytes in [
      Schema2Log.make(tasks: tasks, duration: 2, fileNames: names),
      TimelineTests.syntheticLog(tasks: tasks, duration: 2),
    ] {
      let svg = TimelineRenderer(model: try Self.model(bytes)).svg()
      let geometry = try SVGGeometry.read(svg)
      #expect(geometry.labels.count > 10)
      #expect(geometry.plots.count >= 5)
      for label in geometry.labels {
        let box = label.box
        #expect(
          box.x0 >= 0 && box.x1 <= geometry.width && box.y0 >= 0 && box.y1 <= geometry.height,
          "cut: \(label.text) \(box)")
        for plot in geometry.plots {
          let overlaps =
            box.x0 < plot.x1 && box.x1 > plot.x0 && box.y0 < plot.y1 && box.y1 > plot.y0
          #expect(!overlaps, "over data: \(label.text) \(box) on \(plot)")
        }
      }
      let sorted = geometry.labels.sorted { $0.box.y0 < $1.box.y0 }
      for (index, label) in sorted.enumerated() {
        for other in sorted[(index + 1)...] {
          if other.box.y0 >= label.box.y1 { break }
          let overlaps = label.box.x0 < other.box.x1 && label.box.x1 > other.box.x0
          #expect(!overlaps, "labels overlap: '\(label.text)' and '\(other.text)'")
        }
      }
    }
  }

  @Test func everyPairOfLegendColoursIsAtLeast20ApartInCIELAB() throws {
    let colors = Palette.legend.map(\.color)
    #expect(Set(colors).count == colors.count)
    for (index, first) in colors.enumerated() {
      for second in colors[(index + 1)...] {
        #expect(Palette.deltaE76(first, second) >= 20, "\(first) and \(second)")
      }
    }
    // The conversion itself: white is L* 100, black 0, and sRGB red's published Lab.
    #expect(abs(Palette.lab("#ffffff").l - 100) < 0.01)
    #expect(abs(Palette.lab("#000000").l) < 0.01)
    let red = Palette.lab("#ff0000")
    #expect(abs(red.l - 53.24) < 0.05 && abs(red.a - 80.09) < 0.1 && abs(red.b - 67.20) < 0.1)
    // The legend is what the picture uses.
    let svg = TimelineRenderer(model: try Self.model(Schema2Log.make(tasks: 30, duration: 1))).svg()
    let fills = try SVGGeometry.read(svg).fills
    #expect(Set(colors).isSubset(of: fills))
  }

  @Test func countsStepAtEachChangeNotAtSamples() throws {
    // A 26 ms run as a user reported it: every task finished at 0.0136 s, but the samples (10 ms apart)
    // held `running 1` until 0.022 s.
    var lines = [
      #"{"event":"start","t":0,"schema":2,"isolation":"nonisolated","jobs":2,"cpus":2}"#,
      #"{"event":"task","t":0.0100,"id":1,"file":"a","state":"enqueued","on":"pool"}"#,
      #"{"event":"task","t":0.0101,"id":1,"state":"running","thread":7}"#,
      #"{"event":"sample","t":0.0120,"running":1,"enqueued":0,"suspended":0,"alive":1,"total":1,"completed":0,"actorQueue":0,"mainActorLagMs":0}"#,
      #"{"event":"task","t":0.0136,"id":1,"state":"finished"}"#,
      #"{"event":"sample","t":0.0220,"running":1,"enqueued":0,"suspended":0,"alive":0,"total":1,"completed":1,"actorQueue":0,"mainActorLagMs":0}"#,
      #"{"event":"end","t":0.026,"files":1}"#,
    ]
    let model = try Self.model(Array((lines.joined(separator: "\n") + "\n").utf8))
    #expect(model.exactCounts)
    #expect(model.steps.map(\.time) == [0.0100, 0.0101, 0.0136])
    #expect(model.steps.map(\.running) == [0, 1, 0])
    #expect(model.steps.map(\.enqueued) == [1, 0, 0])
    // A schema-1 log has only its samples.
    lines[0] = #"{"event":"start","t":0,"isolation":"nonisolated","jobs":2,"cpus":2}"#
    let old = try Self.model(Array((lines.joined(separator: "\n") + "\n").utf8))
    #expect(!old.exactCounts)
    #expect(old.steps.map(\.running) == [1, 1])
    #expect(TimelineRenderer(model: old).svg().contains("counts from samples"))
  }

  @Test func aTasksStoryTellsWhereItsTimeWent() throws {
    let lines = [
      #"{"event":"start","t":0,"schema":2,"isolation":"nonisolated","jobs":2,"cpus":2}"#,
      #"{"event":"thread","t":0,"tid":50,"name":"squeeze"}"#,
      #"{"event":"thread","t":0,"tid":51,"name":"r-initiated-qos"}"#,
      #"{"event":"thread","t":0,"tid":52,"name":"r-initiated-qos"}"#,
      #"{"event":"task","t":0.001000,"id":1,"file":"big.tar","state":"enqueued","on":"pool"}"#,
      #"{"event":"task","t":0.001500,"id":1,"state":"running","thread":51}"#,
      #"{"event":"task","t":0.002000,"id":1,"state":"suspended","reason":"slot"}"#,
      #"{"event":"task","t":0.005123,"id":1,"state":"running","thread":51}"#,
      #"{"event":"chunk","t":0.005200,"id":1,"chunk":0,"state":"enqueued"}"#,
      #"{"event":"chunk","t":0.005300,"id":1,"chunk":0,"state":"running","thread":52}"#,
      #"{"event":"task","t":0.005400,"id":1,"state":"suspended","reason":"chunks"}"#,
      #"{"event":"chunk","t":0.045500,"id":1,"chunk":0,"state":"finished"}"#,
      #"{"event":"task","t":0.045500,"id":1,"state":"enqueued","on":"pool"}"#,
      #"{"event":"task","t":0.045600,"id":1,"state":"running","thread":51}"#,
      #"{"event":"task","t":0.046000,"id":1,"state":"suspended","reason":"publication"}"#,
      #"{"event":"task","t":0.058012,"id":1,"state":"finished"}"#,
      #"{"event":"task","t":0.060000,"id":2,"file":"lost.txt","state":"enqueued","on":"pool"}"#,
      #"{"event":"task","t":0.060100,"id":2,"state":"running","thread":52}"#,
      #"{"event":"task","t":0.060300,"id":2,"state":"suspended","reason":"continuation"}"#,
      #"{"event":"end","t":0.07,"files":2,"leakedContinuations":1}"#,
    ]
    let model = try Self.model(Array((lines.joined(separator: "\n") + "\n").utf8))
    #expect(
      model.narrative(of: 0)
        == "big.tar: waited 0.6 ms for a thread, waited 3.1 ms for a compression slot, ran 1.2 ms on T2, its 1 chunk ran 40.2 ms on T3, waited 40.1 ms for its chunks, waited 12.0 ms for its publication (sync and rename); finished at 0.0580 s, 57.0 ms after it was created"
    )
    #expect(
      model.narrative(of: 1)
        == "lost.txt: waited 0.1 ms for a thread, ran 0.2 ms on T3, waited 9.7 ms on a continuation; still suspended for continuation when the log ends (a leaked continuation)"
    )
    #expect(model.threads.map(\.label) == ["T1", "T2", "T3"])
    #expect(model.threads[1].slices.count == 3, "the task's own code ran three times on T2")
    #expect(model.threads[2].slices.map(\.chunk) == [0, -1], "a chunk, then task 2")
    let svg = TimelineRenderer(model: model).svg()
    #expect(svg.contains("leaked continuations 1"))
    #expect(svg.contains("class=\"continuation\""), "continuation waits are marked")
  }

  /// Checks the Trace Event Format's rules on a trace, each event by its kind
  /// (``TraceEventRules``), and squeeze's own: on each track, times never go back and
  /// slices never overlap.
  static func checkTraceRules(_ json: String) throws -> [[String: Any]] {
    let report = try TraceEventRules.check(json)
    #expect(Array(report.problems.prefix(10)) == [], "\(report.problems.count) problems")
    var lastTime: [String: Int] = [:]
    var busyUntil: [String: Int] = [:]
    for event in report.events where event["ph"] as? String != "M" {
      let (pid, tid) = (event["pid"] as? Int ?? -1, event["tid"] as? Int ?? -1)
      let ts = event["ts"] as? Int ?? -1
      let track = "\(pid)/\(tid)"
      #expect(ts >= lastTime[track, default: 0], "ts non-decreasing on \(track)")
      lastTime[track] = ts
      if event["ph"] as? String == "X", let duration = event["dur"] as? Int {
        #expect(ts >= busyUntil[track, default: 0], "no overlapping slices on \(track)")
        busyUntil[track] = ts + duration
      }
    }
    return report.events
  }

  @Test func theChromeTraceFollowsTheFormatsRules() throws {
    let model = try Self.model(Schema2Log.make(tasks: 200, duration: 2))
    let events = try Self.checkTraceRules(ChromeTrace(model: model).json())
    func named(_ ph: String, _ name: String) -> [[String: Any]] {
      events.filter { $0["ph"] as? String == ph && $0["name"] as? String == name }
    }
    let processes = named("M", "process_name").compactMap {
      ($0["args"] as? [String: Any])?["name"] as? String
    }
    #expect(Set(processes) == ["squeeze threads", "squeeze tasks"])
    let threadNames = named("M", "thread_name")
    // Every track with slices is named.
    let named = Set(threadNames.map { "\($0["pid"]!)/\($0["tid"]!)" })
    for event in events where event["ph"] as? String == "X" {
      #expect(named.contains("\(event["pid"]!)/\(event["tid"]!)"))
    }
    #expect(
      threadNames.filter { $0["pid"] as? Int == ChromeTrace.tasksProcess }.count == 200,
      "a track per task")
    let counters = Set(
      events.filter { $0["ph"] as? String == "C" }.compactMap { $0["name"] as? String })
    #expect(counters == ["tasks", "main-actor lag (ms)"])
    let series = events.first { $0["name"] as? String == "tasks" }?["args"] as? [String: Any]
    #expect(Set(series?.keys.map { $0 } ?? []) == ["running", "enqueued", "actor queue"])
    #expect(
      events.contains {
        $0["ph"] as? String == "i" && ($0["name"] as? String)?.hasPrefix("hang 700 ms") == true
      })
    // Slices on the threads: every running span, on its thread's track.
    let onThreads = events.filter {
      $0["ph"] as? String == "X" && $0["pid"] as? Int == ChromeTrace.threadsProcess
        && ($0["cat"] as? String) != "thread-state"
    }
    #expect(onThreads.count == model.threads.reduce(0) { $0 + $1.slices.count })
    #expect(onThreads.contains { ($0["name"] as? String)?.hasSuffix("· chunk 2") == true })
  }

  @Test(.tags(.slow), .systemTier)
  func aLogOf100000TasksDrawsSVGUnder5MBAndHTMLUnder10MB() throws {
    let model = try Self.model(Schema2Log.make(tasks: 100_000, duration: 30))
    let svg = TimelineRenderer(model: model).svg()
    #expect(svg.utf8.count < 5_000_000, "\(svg.utf8.count) bytes")
    let geometry = try SVGGeometry.read(svg)
    #expect(geometry.labels.count > 50)
    #expect(svg.contains("class=\"task-group\"><title>"), "titles per lane group")
    let html = TimelinePage(model: model).html()
    #expect(html.utf8.count < 10_000_000, "\(html.utf8.count) bytes")
  }

  /// The page's data block: JSON, every file name once, integer microseconds.
  static func dataBlock(of html: String) throws -> [String: Any] {
    let opening = "<script type=\"application/json\" id=\"\(TimelinePage.dataID)\">"
    #expect(html.components(separatedBy: opening).count == 2, "one data block")
    let after = try #require(html.components(separatedBy: opening).last)
    let text = try #require(after.components(separatedBy: "</script>").first)
    return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
  }

  @Test func thePageDrawsFromOneCompactDataBlock() throws {
    let bytes = Schema2Log.make(tasks: 60, duration: 1) { "dir/é\($0 % 7)/file \($0).txt" }
    let data = try TaskLogData.parse(bytes)
    let html = TimelinePage(model: TimelineModel(data: data)).html()
    #expect(html.hasPrefix("<!DOCTYPE html>"))
    let block = try Self.dataBlock(of: html)
    // Every name once, front-coded: the characters shared with the previous name, the rest.
    let coded = try #require(block["files"] as? [Any])
    var files: [String] = []
    var last = ""
    for index in stride(from: 0, to: coded.count, by: 2) {
      let shared = try #require(coded[index] as? Int)
      let rest = try #require(coded[index + 1] as? String)
      last = String(last.utf16.prefix(shared))! + rest
      files.append(last)
    }
    #expect(files == data.tasks.map(\.file))
    #expect(coded.count == 2 * data.tasks.count, "each name once")
    let tasks = try #require(block["tasks"] as? [[Any]])
    #expect(tasks.allSatisfy { $0.allSatisfy { $0 is Int } }, "integer microseconds")
    #expect(!html.contains("<svg"), "not a copy of the SVG")
    #expect(!html.contains("http://") && !html.contains("https://"), "no network")
    #expect(!html.contains("<script src"), "no external script")
  }

  @Test(.tags(.system), .systemTier)
  func thePageRunsAndTellsTheSameStoriesAsTheSVG() throws {
    let node = try Shell.run("/usr/bin/env", ["node", "--version"])
    try #require(node.status == 0, "node (Debian's nodejs) runs the page's script")
    let model = try Self.model(Schema2Log.make(tasks: 40, duration: 1))
    let html = TimelinePage(model: model).html()
    let folder = TemporaryFolder("page")
    try folder.write("page.html", text: html)
    // A page without a browser: stub DOM and canvas, the page's own scripts, then its hooks.
    let harness = #"""
      const fs = require("fs");
      const html = fs.readFileSync(process.argv[2], "utf8");
      const blocks = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
      const dataText = blocks.find(b => b[1].includes("application/json"))[2];
      const code = blocks.find(b => !b[1].includes("application/json"))[2];
      let calls = 0;
      const ctx = new Proxy({}, {get: (t, k) => (k in t) ? t[k] : (() => { calls++; }), set: (t, k, v) => { t[k] = v; return true; }});
      const element = () => ({textContent: "", style: {}, hidden: true, offsetHeight: 100, appendChild() {}, addEventListener() {},
        getContext: () => ctx, getBoundingClientRect: () => ({left: 0, top: 0})});
      const elements = {"timeline-data": {textContent: dataText}};
      global.document = {getElementById: id => elements[id] || (elements[id] = element()), createElement: element, createTextNode: () => ({})};
      global.window = {innerWidth: 1400, innerHeight: 900, addEventListener() {}};
      new Function(code)();
      const T = window.squeezeTimeline;
      T.draw();
      const L = T.layout();
      const out = {calls, stories: T.tasks.map(T.narrative),
        taskHover: T.hit(600, L.taskTop + 2), threadHover: T.hit(600, L.threadTop + 20), trackHover: T.hit(600, L.rows[0].y + 10)};
      console.log(JSON.stringify(out));
      """#
    try folder.write("harness.js", text: harness)
    let run = try Shell.run(
      "/usr/bin/env", ["node", folder.url("harness.js"), folder.url("page.html")])
    #expect(run.status == 0, "\(run.stderrText)")
    let out = try #require(
      try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any])
    #expect((out["calls"] as? Int ?? 0) > 100, "it drew")
    let stories = try #require(out["stories"] as? [String])
    let expected = model.data.tasks.indices.map { model.narrative(of: $0) }
    #expect(stories.count == expected.count)
    for (page, svg) in zip(stories, expected) where page != svg {
      Issue.record("the page says \"\(page)\", the SVG \"\(svg)\"")
      break
    }
    #expect((out["taskHover"] as? String)?.contains("dir/file") == true)
    #expect((out["trackHover"] as? String)?.hasPrefix("running ") == true)
    #expect(out["threadHover"] is String)
  }
}

/// The threads' signature on the page: each thread's shares of CPU, blocked and idle, the
/// pool's total, the names squeeze knows, and where the main actor's jobs ran, checked
/// against a log made by hand whose shares are known.
@Suite struct ThreadSignatureTests {
  /// Tasks alive from 0 to 0.1 s; thread states read at 0, 0.025, 0.05, 0.075 and 0.1 s
  /// (each holds until the next). Pool thread 10 (the second to run a job): running,
  /// running, blocked, blocked: on CPU 50 %, blocked 50 %. Pool thread 11 (the first):
  /// running, idle, running, idle: on CPU 50 %, idle 50 %. The pool: on CPU 50 %, blocked
  /// 25 %, idle 25 %. The main thread (5) idle throughout; the main queue's worker (6) ran
  /// the heartbeat's main-actor jobs; the publisher (12) is squeeze's own.
  static let log: [UInt8] = {
    func sample(_ t: Double, _ states: [(Int, String)]) -> String {
      let threads = states.map {
        #"{"tid":\#($0.0),"state":"\#($0.1)"\#($0.1 == "blocked" ? #","syscall":74"# : "")}"#
      }
      return
        #"{"event":"sample","t":\#(t),"running":1,"enqueued":0,"suspended":0,"alive":2,"total":2,"completed":0,"actorQueue":0,"threads":[\#(threads.joined(separator: ","))],"mainActorLagMs":0.5}"#
    }
    let lines = [
      #"{"event":"start","t":0,"schema":3,"version":"t","arch":"x86_64","isolation":"blocking","jobs":2,"level":6,"cpus":2,"files":2,"bytes":10}"#,
      #"{"event":"thread","t":0,"tid":5,"name":"squeeze","given":"main thread"}"#,
      #"{"event":"thread","t":0,"tid":6,"name":"-qos.overcommit"}"#,
      #"{"event":"thread","t":0,"tid":10,"name":"r-initiated-qos"}"#,
      #"{"event":"thread","t":0,"tid":11,"name":"r-initiated-qos"}"#,
      #"{"event":"thread","t":0,"tid":12,"name":"squeeze-publish","given":"squeeze-publish"}"#,
      #"{"event":"thread","t":0,"tid":6,"queue":"com.apple.main-thread"}"#,
      #"{"event":"task","t":0,"id":1,"file":"a","state":"enqueued","on":"pool"}"#,
      #"{"event":"task","t":0,"id":2,"file":"b","state":"enqueued","on":"pool"}"#,
      sample(0, [(5, "idle"), (6, "idle"), (10, "running"), (11, "running"), (12, "idle")]),
      #"{"event":"thread","t":0.001,"tid":11,"queue":"Swift global concurrent queue","qos":"user-initiated"}"#,
      #"{"event":"task","t":0.001,"id":1,"state":"running","thread":11}"#,
      sample(0.025, [(5, "idle"), (6, "idle"), (10, "running"), (11, "idle"), (12, "idle")]),
      #"{"event":"thread","t":0.05,"tid":10,"queue":"Swift global concurrent queue","qos":"user-initiated"}"#,
      #"{"event":"task","t":0.05,"id":2,"state":"running","thread":10}"#,
      sample(0.05, [(5, "idle"), (6, "idle"), (10, "blocked"), (11, "running"), (12, "idle")]),
      sample(0.075, [(5, "idle"), (6, "idle"), (10, "blocked"), (11, "idle"), (12, "idle")]),
      #"{"event":"task","t":0.1,"id":1,"state":"finished"}"#,
      #"{"event":"task","t":0.1,"id":2,"state":"finished"}"#,
      sample(0.1, [(5, "idle"), (6, "idle"), (10, "idle"), (11, "idle"), (12, "idle")]),
      #"{"event":"end","t":0.1,"files":2,"failed":0}"#,
    ]
    return Array((lines.joined(separator: "\n") + "\n").utf8)
  }()

  static func model() throws -> TimelineModel {
    TimelineModel(data: try TaskLogData.parse(log))
  }

  @Test func eachThreadsSharesAreTheLogs() throws {
    let model = try Self.model()
    func shares(_ tid: Int32) -> [Int] {
      guard let thread = model.threads.first(where: { $0.tid == tid }) else { return [] }
      let shares = thread.shares
      return [
        shares.percent(shares.onCPU), shares.percent(shares.blocked), shares.percent(shares.idle),
      ]
    }
    #expect(shares(10) == [50, 50, 0])
    #expect(shares(11) == [50, 0, 50])
    #expect(shares(5) == [0, 0, 100])
    #expect(abs(model.poolShares.sampled - 0.2) < 1e-9, "two pool threads, 0.1 s each")
    let summary =
      "pool threads blocked 25 % of the time tasks were alive (on CPU 50 %, idle 25 %; 2 threads, user-initiated)"
    #expect(model.poolSummary == summary)
    // The SVG: a bar per thread whose numbers are these, and the summary in its header.
    let svg = TimelineRenderer(model: model).svg()
    #expect(
      svg.contains(
        #"class="thread-shares" data-tid="10" data-on-cpu="50" data-blocked="50" data-idle="0""#))
    #expect(
      svg.contains(
        #"class="thread-shares" data-tid="11" data-on-cpu="50" data-blocked="0" data-idle="50""#))
    #expect(svg.contains(">\(summary)</text>"))
    #expect(
      svg.contains(
        #"id="thread-notes" data-pool-on-cpu="50" data-pool-blocked="25" data-pool-idle="25""#))
    // The page: the same numbers in its data block, and the same summary.
    let block = try TimelineDrawingTests.dataBlock(of: TimelinePage(model: model).html())
    let threads = try #require(block["threads"] as? [[Any]])
    let byTid = Dictionary(
      uniqueKeysWithValues: threads.compactMap { entry in
        (entry.first as? Int).map { ($0, Array(entry.dropFirst(3)).compactMap { $0 as? Int }) }
      })
    #expect(byTid[10] == [50, 50, 0])
    #expect(byTid[11] == [50, 0, 50])
    let notes = try #require((block["meta"] as? [String: Any])?["notes"] as? [String])
    #expect(notes.first == summary)
  }

  @Test func threadsAreNamedByWhatSqueezeKnowsNotTheKernelsFifteenBytes() throws {
    let model = try Self.model()
    let names = Dictionary(
      uniqueKeysWithValues: model.threads.map { ($0.tid, $0.displayName) })
    // Numbered by the order they first ran a job (11 before 10), not by thread id.
    #expect(names[11] == "pool (user-initiated) 1")
    #expect(names[10] == "pool (user-initiated) 2")
    #expect(names[12] == "squeeze-publish")
    #expect(names[5] == "main thread")
    #expect(names[6] == "dispatch worker")
    let svg = TimelineRenderer(model: model).svg()
    let labels = try SVGGeometry.read(svg).labels.map(\.text)
    for name in ["T3 pool (user-initiated) 2", "T4 pool (user-initiated) 1", "T1 main thread"] {
      #expect(labels.contains(name), "\(name)")
    }
    #expect(labels.contains { $0.hasPrefix("T5 squeeze-publish") })
    #expect(labels.contains("T2 dispatch worker · main actor"))
    #expect(!labels.contains { $0.contains("r-initiated-qos") }, "not the kernel's name")
    let block = try TimelineDrawingTests.dataBlock(of: TimelinePage(model: model).html())
    let threads = try #require(block["threads"] as? [[Any]])
    #expect(
      threads.compactMap { $0.count > 1 ? $0[1] as? String : nil }.contains(
        "pool (user-initiated) 1"))
    let trace = ChromeTrace(model: model).json()
    #expect(trace.contains(#""name":"T4 pool (user-initiated) 1"#), "the trace's thread names")
    #expect(!trace.contains("r-initiated-qos"), "not the kernel's name in the trace")
  }

  @Test func thePageSaysWhereTheMainActorsJobsRan() throws {
    let model = try Self.model()
    let note = try #require(model.mainActorNote)
    #expect(note.hasPrefix("the main actor's jobs ran on T2"))
    #expect(note.contains("not on T1, the main thread (idle 100 %"))
    let svg = TimelineRenderer(model: model).svg()
    #expect(svg.contains("Note: the main actor&apos;s jobs ran on T2"))
    let block = try TimelineDrawingTests.dataBlock(of: TimelinePage(model: model).html())
    let notes = try #require((block["meta"] as? [String: Any])?["notes"] as? [String])
    #expect(notes.last == "Note: " + note)
  }

  @Test func aSchema2LogNamesPoolThreadsFromTheirKernelNames() throws {
    let lines = [
      #"{"event":"start","t":0,"schema":2,"isolation":"detached","jobs":2,"cpus":2}"#,
      #"{"event":"thread","t":0,"tid":40,"name":"squeeze"}"#,
      #"{"event":"thread","t":0,"tid":41,"name":"oot.default-qos"}"#,
      #"{"event":"thread","t":0,"tid":42,"name":"r-initiated-qos"}"#,
      #"{"event":"task","t":0.001,"id":1,"file":"a","state":"enqueued","on":"pool"}"#,
      #"{"event":"task","t":0.002,"id":1,"state":"running","thread":41}"#,
      #"{"event":"task","t":0.003,"id":1,"state":"finished"}"#,
    ]
    let model = TimelineModel(
      data: try TaskLogData.parse(Array((lines.joined(separator: "\n") + "\n").utf8)))
    #expect(
      model.threads.map(\.displayName) == [
        "main thread", "pool (default) 1", "pool (user-initiated) 1",
      ])
  }

  @Test func timeLabelsSitAboveTheTracksAndAboveTheTaskLanes() throws {
    let svg = TimelineRenderer(model: try Self.model()).svg()
    let geometry = try SVGGeometry.read(svg)
    let zero = geometry.labels.filter { $0.text == "0.00 s" }.map(\.box.y0).sorted()
    #expect(zero.count == 3, "above the tracks, above the tasks, below everything")
    let running = try #require(geometry.labels.first { $0.text == "Running" })
    let tasks = try #require(geometry.labels.first { $0.text == "Tasks" })
    #expect(zero[0] < running.box.y0 + 14, "at the top of the first track")
    #expect(zero[1] > tasks.box.y0 && zero[1] < tasks.box.y1 + 16, "just above the task lanes")
  }
}
