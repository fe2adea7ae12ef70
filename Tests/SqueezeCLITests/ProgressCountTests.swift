import Foundation
import Glibc
import TestSupport
import Testing

/// Progress counts this run's work, end to end: what the task log's `start` event
/// records is what the reporter was given, and small files finish while big ones go first.
@Suite struct ProgressCountTests {
  /// The events of a task log.
  static func events(_ path: String) throws -> [[String: Any]] {
    try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").compactMap {
      try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
  }

  @Test func aReRunAfterOneBigFileChangedWorksOnThatFileOnly() throws {
    let folder = TemporaryFolder("rerun-progress")
    for index in 0..<200 {
      try folder.write("S/f\(index).txt", TestData.text(900, seed: UInt64(index)))
    }
    try folder.write("S/big.txt", TestData.text(2 << 20))
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    try folder.write("S/big.txt", TestData.text(2 << 20, seed: 77))
    let log = folder.url("run.jsonl")
    let result = try SqueezeBinary.run([
      "--json", "--task-log", log, "-o", folder.url("M"), folder.url("S/"),
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    let start = try #require(try Self.events(log).first { $0["event"] as? String == "start" })
    #expect((start["files"] as? NSNumber)?.intValue == 1)
    #expect((start["bytes"] as? NSNumber)?.intValue == 2 << 20)
    let summary = try #require(
      JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    let files = try #require(summary["files"] as? [String: Any])
    #expect((files["upToDate"] as? NSNumber)?.intValue == 200)
    #expect((files["compressed"] as? NSNumber)?.intValue == 1)
  }

  @Test func smallFilesFinishWhileTheLargestGoFirst() throws {
    let folder = TemporaryFolder("counter-moves")
    // Several big files: before, small files started only once the last big one had started
    // all its chunks, long after the first had finished.
    for index in 0..<4 {
      try folder.write("S/big\(index).txt", TestData.text(5 << 20, seed: UInt64(index)))
    }
    for index in 0..<200 {
      try folder.write("S/small\(index).txt", TestData.text(2000, seed: UInt64(index)))
    }
    let log = folder.url("run.jsonl")
    let result = try SqueezeBinary.run([
      "-j", "2", "--task-log", log, "-o", folder.url("M"), folder.url("S/"),
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    var names: [Int: String] = [:]
    var finished: [Int: Double] = [:]
    for event in try Self.events(log) where event["event"] as? String == "task" {
      guard let id = (event["id"] as? NSNumber)?.intValue else { continue }
      if let file = event["file"] as? String { names[id] = file }
      if event["state"] as? String == "finished", let time = (event["t"] as? NSNumber)?.doubleValue
      {
        finished[id] = time
      }
    }
    let bigTimes = finished.filter { names[$0.key]?.contains("/big") == true }.map(\.value)
    let firstBig = try #require(bigTimes.min())
    let smallBefore = finished.filter {
      names[$0.key]?.contains("/small") == true && $0.value < firstBig
    }
    #expect(smallBefore.count > 0, "the file counter moves before the first big file is done")
  }
}
