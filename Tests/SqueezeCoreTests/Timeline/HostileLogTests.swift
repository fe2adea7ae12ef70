import Foundation
import TestSupport
import Testing

@testable import SqueezeCore

/// Logs written to hurt the reader and the renderers: numbers out of range, names that are
/// markup, names and folders long enough to make quadratic work show.
@Suite struct HostileLogTests {
  /// A schema-2 `start` line.
  static let start =
    #"{"event":"start","t":0,"schema":2,"version":"t","arch":"x86_64","isolation":"nonisolated","jobs":2,"level":6,"cpus":2,"files":1,"bytes":10,"blockSize":131072}"#

  /// `lines` after the start line, as a log's bytes.
  static func log(_ lines: [String]) -> [UInt8] {
    Array(([start] + lines).map { $0 + "\n" }.joined().utf8)
  }

  @Test(arguments: [
    (line: #"{"event":"task","t":1e13,"id":1,"state":"running","thread":5}"#, key: "t"),
    (line: #"{"event":"task","t":-0.5,"id":1,"state":"running","thread":5}"#, key: "t"),
    (line: #"{"event":"hang","t":0.5,"durationMs":1e300,"severity":"hang"}"#, key: "durationMs"),
    (
      line: #"{"event":"sample","t":0.1,"running":1,"mainActorLagMs":1e300}"#,
      key: "mainActorLagMs"
    ),
    (line: #"{"event":"sample","t":0.1,"running":1e10}"#, key: "running"),
    (
      line: #"{"event":"sample","t":0.1,"threads":[{"tid":4294967296,"state":"idle"}]}"#, key: "tid"
    ),
    (
      line: #"{"event":"sample","t":0.1,"threads":[{"tid":4,"state":"blocked","syscall":-1}]}"#,
      key: "syscall"
    ),
    (line: #"{"event":"task","t":0.1,"id":1e20,"state":"enqueued"}"#, key: "id"),
    (line: #"{"event":"task","t":0.1,"id":1,"state":"running","thread":-7}"#, key: "thread"),
    (line: #"{"event":"chunk","t":0.1,"id":1,"chunk":1e17,"state":"enqueued"}"#, key: "chunk"),
    (line: #"{"event":"thread","t":0.1,"tid":1e300,"name":"x"}"#, key: "tid"),
    (line: #"{"event":"end","t":1,"files":1,"worstLagMs":1e13}"#, key: "worstLagMs"),
    (line: #"{"event":"end","t":1,"files":1,"bytesOut":1e19}"#, key: "bytesOut"),
    (line: #"{"event":"end","t":1,"files":1,"samplerCPUSeconds":1e10}"#, key: "samplerCPUSeconds"),
  ])
  func aNumberOutOfItsRangeIsAnErrorNamingTheLineAndTheKey(line: String, key: String) {
    // The first task event gives the later ones a task to belong to.
    let bytes = Self.log([#"{"event":"task","t":0,"id":1,"file":"a","state":"enqueued"}"#, line])
    #expect {
      _ = try TaskLogData.parse(bytes)
    } throws: { error in
      guard let error = error as? TaskLogData.ReadError, error.line == 3,
        case .outOfRange(let named, _, _) = error.reason
      else { return false }
      return named == key && error.description.hasPrefix("line 3: \"\(key)\" is out of range (")
    }
  }

  @Test func theMessageSaysTheValueAndTheRange() throws {
    let bytes = Self.log([#"{"event":"task","t":1e13,"id":1,"state":"running","thread":5}"#])
    let error = try #require(throws: TaskLogData.ReadError.self) { try TaskLogData.parse(bytes) }
    #expect(error.description == #"line 2: "t" is out of range (1e+13; expected 0 to 1e+9)"#)
  }

  @Test func fractionsWhereWholeNumbersBelongAndTextWhereNumbersBelongAreErrors() throws {
    let fraction = try #require(throws: TaskLogData.ReadError.self) {
      try TaskLogData.parse(Self.log([#"{"event":"task","t":0,"id":2.5,"state":"enqueued"}"#]))
    }
    #expect(fraction.description == #"line 2: "id" is not a whole number (2.5)"#)
    let text = try #require(throws: TaskLogData.ReadError.self) {
      try TaskLogData.parse(Self.log([#"{"event":"task","t":"soon","id":2,"state":"enqueued"}"#]))
    }
    #expect(text.description == #"line 2: "t" is not a number"#)
  }

  @Test func linesAreCountedAsAnEditorCountsThemBlankOnesIncluded() throws {
    let bytes = Array(
      (Self.start + "\n\n   \n" + #"{"event":"hang","t":1e10,"durationMs":1}"# + "\n").utf8)
    let error = try #require(throws: TaskLogData.ReadError.self) { try TaskLogData.parse(bytes) }
    #expect(error.line == 4)
  }

  /// Every number at the top of its range: what the renderers work out from them stays
  /// inside the integers they use, so all three drawings come out (none traps).
  @Test func aLogWithEveryNumberAtItsLimitDrawsInAllThreeFormats() throws {
    let limits = TaskLogData.Limits.self
    let second = limits.seconds.upperBound
    let count = Int(limits.count.upperBound)
    let id = Int64(limits.identifier.upperBound)
    let tid = Int(limits.threadID.upperBound)
    let millis = limits.milliseconds.upperBound
    let bytes = Int64(limits.byteCount.upperBound)
    let lines = [
      #"{"event":"start","t":0,"schema":\#(count),"arch":"x86_64","isolation":"x","jobs":\#(count),"level":\#(count),"cpus":\#(count),"files":\#(count),"bytes":\#(bytes),"blockSize":\#(bytes)}"#,
      #"{"event":"thread","t":\#(second),"tid":\#(tid),"name":"n"}"#,
      #"{"event":"task","t":0,"id":\#(id),"file":"f","state":"enqueued","on":"actor"}"#,
      #"{"event":"task","t":\#(second),"id":\#(id),"state":"running","thread":\#(tid)}"#,
      #"{"event":"chunk","t":0,"id":\#(id),"chunk":\#(id),"state":"enqueued"}"#,
      #"{"event":"chunk","t":\#(second),"id":\#(id),"chunk":\#(id),"state":"running","thread":\#(tid)}"#,
      #"{"event":"task","t":0,"id":\#(id),"state":"suspended","reason":"slot"}"#,
      #"{"event":"task","t":\#(second),"id":\#(id),"state":"failed","error":"e"}"#,
      #"{"event":"sample","t":\#(second),"running":\#(count),"enqueued":\#(count),"suspended":\#(count),"alive":\#(count),"total":\#(count),"completed":\#(count),"actorQueue":\#(count),"threads":[{"tid":\#(tid),"state":"blocked","syscall":\#(tid)}],"mainActorLagMs":\#(millis)}"#,
      #"{"event":"sample","t":0,"running":0,"mainActorLagMs":\#(millis)}"#,
      #"{"event":"hang","t":\#(second),"durationMs":\#(millis),"severity":"hang"}"#,
      #"{"event":"end","t":\#(second),"files":\#(count),"failed":\#(count),"bytesIn":\#(bytes),"bytesOut":\#(bytes),"maxRunning":\#(count),"maxEnqueued":\#(count),"hangs":\#(count),"microhangs":\#(count),"worstLagMs":\#(millis),"leakedContinuations":\#(count),"samplerCPUSeconds":\#(second)}"#,
    ]
    let data = try TaskLogData.parse(Array(lines.map { $0 + "\n" }.joined().utf8))
    let model = TimelineModel(data: data)
    #expect(
      try TimelineTests.elementIDs(TimelineRenderer(model: model).svg()).contains("lag-track"))
    let html = TimelinePage(model: model).html()
    #expect(try TimelineDrawingTests.dataBlock(of: html)["tasks"] != nil)
    #expect(
      try JSONSerialization.jsonObject(with: Data(ChromeTrace(model: model).json().utf8))
        is [String: Any])
    #expect(model.narrative(of: 0).hasPrefix("f: "))
  }
}
