import Foundation
import FoundationXML
import Testing

@testable import SqueezeCore

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

  @Test func aLogOf100000TasksDrawsUnder5Megabytes() throws {
    let data = try TaskLogData.parse(Self.syntheticLog(tasks: 100_000, duration: 30))
    let svg = TimelineRenderer(data: data).svg()
    #expect(svg.utf8.count < 5_000_000)
    #expect(try Self.elementIDs(svg).contains("task-lanes"))
  }


  @Test(arguments: [(0.05, 0.005), (2.0, 0.2), (4.2, 0.5), (35.0, 5.0), (100.0, 10.0)])
  func ticksAreOneTwoOrFiveTimesAPowerOfTen(duration: Double, step: Double) {
    #expect(abs(TimelineRenderer.tickStep(for: duration) - step) < 1e-9)
  }

  @Test func theDefaultPictureIsTheLogsNameWithSVG() {
    #expect(TimelineOptions(log: "runs/a.jsonl", output: nil).resolvedOutput == "runs/a.svg")
    #expect(TimelineOptions(log: "log", output: nil).resolvedOutput == "log.svg")
    #expect(TimelineOptions(log: "a.jsonl", output: "x.html").resolvedOutput == "x.html")
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
