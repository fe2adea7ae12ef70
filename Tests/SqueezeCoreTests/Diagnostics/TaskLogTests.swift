import Foundation
import SqueezeEngines
import TestSupport
import Testing

@testable import SqueezeCore

@Suite struct TaskLogTests {
  private func object(_ line: JSONLine) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(line.line)) as? [String: Any])
  }

  @Test func encodesEveryFieldKindAsValidJSON() throws {
    var line = JSONLine()
    line.field("event", literal: "task")
    line.field("t", 1.5, decimals: 6)
    line.field("id", 42)
    line.field("negative", -7)
    line.field("file", "a \"quoted\" \\ name\nwith\tcontrol \u{1}")
    line.field("flag", true)
    #expect(line.line.last == UInt8(ascii: "\n"))
    let parsed = try object(line)
    #expect(parsed["event"] as? String == "task")
    #expect((parsed["t"] as? NSNumber)?.doubleValue == 1.5)
    #expect((parsed["id"] as? NSNumber)?.intValue == 42)
    #expect((parsed["negative"] as? NSNumber)?.intValue == -7)
    #expect(parsed["file"] as? String == "a \"quoted\" \\ name\nwith\tcontrol \u{1}")
    #expect(parsed["flag"] as? Bool == true)
  }

  @Test(arguments: [
    (value: 0.0, decimals: 3, text: "0.000"),
    (value: 1.0005, decimals: 3, text: "1.001"),
    (value: 12.25, decimals: 1, text: "12.3"),
    (value: -0.5, decimals: 2, text: "-0.50"),
    (value: 3.0, decimals: 0, text: "3"),
    (value: Double.nan, decimals: 2, text: "0"),
  ])
  func decimalsAreFixedPoint(value: Double, decimals: Int, text: String) {
    var bytes: [UInt8] = []
    JSONLine.appendDecimal(value, decimals: decimals, to: &bytes)
    #expect(String(decoding: bytes, as: UTF8.self) == text)
  }

  @Test func integersCoverTheWholeRange() {
    for value in [Int64.min + 1, -1, 0, 9, 10, 1_234_567_890, Int64.max] {
      var bytes: [UInt8] = []
      JSONLine.appendInteger(value, to: &bytes)
      #expect(String(decoding: bytes, as: UTF8.self) == String(value))
    }
  }

  @Test func theLogWritesEachEventWithTheSpecKeys() throws {
    let folder = TemporaryFolder("log")
    let path = folder.url("run.jsonl")
    let log = try TaskLog(path: RawPath(path), startTime: MonotonicClock.now())
    log.start(
      version: "1", isolation: .actor, jobs: 4, level: .default, engine: .zlib, cpus: 2,
      files: 3, bytes: 99, chunkSize: 131072)
    var counters = TaskCounters.Snapshot()
    counters.running = 1
    counters.enqueued = 2
    log.sample(counters, mainActorLagMilliseconds: 0.4, at: MonotonicClock.now())
    log.taskEvent(id: 1, file: RawPath(bytes: [0x61, 0xFF]), state: .enqueued)
    log.taskEvent(id: 1, file: nil, state: .running)
    log.hang(startingAt: MonotonicClock.now(), duration: 0.612, severity: .hang)
    log.end(
      files: 3, failed: 0, bytesIn: 99, bytesOut: 50, maxRunning: 1, maxEnqueued: 2,
      hangs: HangReport(hangs: 1, microhangs: 0, worstLag: 0.612))
    log.flush()
    let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
    #expect(lines.count == 6)
    let events = try lines.map {
      try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
    let expectedKeys: [String: Set<String>] = [
      "start": [
        "event", "t", "version", "isolation", "jobs", "level", "engine", "cpus", "files", "bytes",
        "blockSize",
      ],
      "sample": [
        "event", "t", "running", "enqueued", "suspended", "alive", "total", "completed",
        "actorQueue",
        "mainActorLagMs",
      ],
      "hang": ["event", "t", "durationMs", "severity"],
      "end": [
        "event", "t", "files", "failed", "bytesIn", "bytesOut", "maxRunning", "maxEnqueued",
        "hangs",
        "microhangs", "worstLagMs",
      ],
    ]
    for event in events {
      let name = try #require(event["event"] as? String)
      if let keys = expectedKeys[name] { #expect(Set(event.keys) == keys, "\(name)") }
    }
    #expect(events[2]["file"] as? String == "a\\xff", "names are shown losslessly")
    #expect(events[3]["file"] == nil, "the file is named on a task's first event only")
    #expect((events[4]["durationMs"] as? NSNumber)?.doubleValue == 612)
    #expect(events[4]["severity"] as? String == "hang")
  }

  @Test(arguments: [
    (lag: 0.249, severity: HangSeverity?.none),
    (lag: 0.25, severity: .microhang),
    (lag: 0.499, severity: .microhang),
    (lag: 0.5, severity: .hang),
    (lag: 3.0, severity: .hang),
  ])
  func hangThresholdsAre250And500Milliseconds(lag: Double, severity: HangSeverity?) {
    #expect(HangSeverity(lag: lag) == severity)
  }

  @MainActor
  @Test func theHeartbeatMeasuresABlockedMainActor() async throws {
    // The heartbeat measures real lag, so a loaded machine (the CLI tests run beside this
    // one) can add a lag of its own. An attempt free of outside lag must see the 300 ms
    // block as exactly one microhang; a heartbeat that missed it or counted it twice fails
    // every attempt.
    var reports: [HangReport] = []
    for _ in 0..<5 {
      let heartbeat = MainActorHeartbeat(period: 0.002, log: nil)
      heartbeat.start()
      try await Task.sleep(for: .milliseconds(30))
      // Block the main actor for 300 ms: one microhang.
      let blockUntil = MonotonicClock.now() + 0.3
      while MonotonicClock.now() < blockUntil {}
      try await Task.sleep(for: .milliseconds(30))
      let report = heartbeat.stop()
      reports.append(report)
      if report.microhangs == 1 && report.hangs == 0 && report.worstLag < 0.5 { break }
    }
    let clean = reports.last!
    #expect(clean.microhangs == 1, "\(reports)")
    #expect(clean.hangs == 0, "\(reports)")
    #expect(clean.worstLag >= 0.25 && clean.worstLag < 0.5, "\(reports)")
  }
}
