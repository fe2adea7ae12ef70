import Foundation
import Glibc
import TestSupport
import Testing

/// An everyday run speaks of files and bytes: the main actor's lag and hangs appear in the
/// summary only when diagnostics were asked for, files a mirror stores are not said to
/// have grown, and `--json` keeps every number.
@Suite struct EverydayWordsTests {
  /// The test hook that blocks the main actor as the work starts (milliseconds): long
  /// enough for a hang (500 ms or more) whatever the machine's load.
  static let stall = ["SQUEEZE_TEST_MAIN_ACTOR_STALL_MS": "700"]

  /// Runs squeeze with the environment of the tests plus `extra`.
  static func run(_ arguments: [String], extra: [String: String] = [:]) throws -> Shell.Result {
    try Shell.run(
      SqueezeBinary.path, arguments,
      environment: ProcessInfo.processInfo.environment.merging(extra) { $1 })
  }

  static func folderOfThree(_ name: String) throws -> TemporaryFolder {
    let folder = TemporaryFolder(name)
    for index in 0..<3 {
      try folder.write("in/f\(index).txt", TestData.text(20_000, seed: UInt64(index)))
    }
    return folder
  }

  /// The summary line (the last line on stderr that starts with `squeeze: `).
  static func summary(_ result: Shell.Result) -> String {
    result.stderrText.split(separator: "\n").last { $0.hasPrefix("squeeze: ") }.map(String.init)
      ?? ""
  }

  @Test func aDefaultRunsSummarySaysNothingOfTheMainActorAfterAHangButJSONCounts() throws {
    let folder = try Self.folderOfThree("words-default")
    // --progress plain prints the summary into a pipe, as a terminal run would show it.
    let result = try Self.run(
      ["--progress", "plain", "--json", folder.url("in")], extra: Self.stall)
    #expect(result.status == 0, "\(result.stderrText)")
    let line = Self.summary(result)
    #expect(line.hasPrefix("squeeze: 3 files compressed"), "\(result.stderrText)")
    for word in ["hang", "lag", "main actor", "actor", "microhang"] {
      #expect(!result.stderrText.contains(word), "'\(word)' in: \(result.stderrText)")
    }
    let object = try #require(
      JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    #expect((object["hangs"] as? Int ?? 0) >= 1, "the hook made a hang: \(object)")
    #expect((object["worstLagMs"] as? NSNumber)?.doubleValue ?? 0 >= 500)
  }

  @Test(
    arguments: [
      (label: "-v", arguments: ["-v"]),
      (label: "--task-log", arguments: ["--progress", "plain", "--task-log", "LOG"]),
      (label: "--isolation actor", arguments: ["--progress", "plain", "--isolation", "actor"]),
    ])
  func askingForDiagnosticsShowsTheHang(label: String, arguments: [String]) throws {
    let folder = try Self.folderOfThree("words-diagnostics")
    let resolved = arguments.map { $0 == "LOG" ? folder.url("run.jsonl") : $0 }
    let result = try Self.run(resolved + [folder.url("in")], extra: Self.stall)
    #expect(result.status == 0, "\(label): \(result.stderrText)")
    let line = Self.summary(result)
    #expect(line.contains("; main actor: worst lag "), "\(label): \(line)")
    #expect(line.contains(" hang"), "\(label): \(line)")
  }

  /// `path` (ending in `.gz`) made by gzip from `count` random bytes.
  static func gzipFile(_ folder: TemporaryFolder, _ path: String, count: Int) throws {
    let source = String(path.dropLast(3))
    try folder.write(source, TestData.random(count, seed: UInt64(count)))
    let result = try Shell.run("/bin/gzip", ["-n", folder.url(source)])
    try #require(result.status == 0, "\(result.stderrText)")
  }

  @Test func aMirrorSaysItsCompressedSourcesWereStoredAndOnlyRealGrowthGrew() throws {
    let folder = TemporaryFolder("words-stored")
    try Self.gzipFile(folder, "in/a.gz", count: 3_000)
    try Self.gzipFile(folder, "in/b.gz", count: 70_000)
    try folder.write("in/one", [0x41])
    try folder.write("in/text.txt", TestData.text(50_000))
    let plain = try Self.run(
      ["--progress", "plain", "--json", "-o", folder.url("out"), folder.url("in/")])
    #expect(plain.status == 0, "\(plain.stderrText)")
    let line = Self.summary(plain)
    #expect(line.contains(", 1 grew"), "one byte deflated grows: \(line)")
    // a.gz gets header, one stored block, trailer; b.gz (over 65,535 bytes) one block more.
    let pattern = #/, 2 already compressed, stored \(\+\d+ B to \d+ B each\)/#
    #expect(line.contains(pattern), "\(line)")
    let object = try #require(
      JSONSerialization.jsonObject(with: Data(plain.stdout)) as? [String: Any])
    let files = try #require(object["files"] as? [String: Any])
    #expect(files["stored"] as? Int == 2)
    #expect(files["grown"] as? Int == 3, "grown keeps counting every larger output")
    // The files restore as they were.
    #expect(try SystemGzip.decompress(folder.url("out/a.gz.gz")).count > 0)

    try FileManager.default.removeItem(atPath: folder.url("out"))
    let verbose = try Self.run(["-v", "-o", folder.url("out"), folder.url("in/")])
    #expect(verbose.status == 0, "\(verbose.stderrText)")
    let lines = verbose.stderrText.split(separator: "\n").map(String.init)
    let stored = try #require(lines.first { $0.contains("a.gz: ") })
    #expect(stored.contains(", already compressed, stored (+"), "\(stored)")
    #expect(!stored.contains("grew"), "\(stored)")
    let grew = try #require(lines.first { $0.contains("/one: ") })
    #expect(grew.contains(", grew by "), "\(grew)")
  }

  @Test func aRealRunsChromeTraceHasEveryEventValidForItsKind() throws {
    let folder = TemporaryFolder("words-trace")
    try folder.write("in/good.txt", TestData.text(400_000, seed: 7))
    #expect(try Self.run([folder.url("in/good.txt")]).status == 0)
    var damaged = try folder.read("in/good.txt.gz")
    damaged[damaged.count / 2] ^= 0xFF
    try folder.write("in/bad.txt.gz", damaged)
    try FileManager.default.removeItem(atPath: folder.url("in/good.txt"))
    let log = folder.url("run.jsonl")
    // Restoring one good and one damaged file, with the main actor made to hang: slices,
    // counters, a failure on a task's track and a hang on the process's.
    let run = try Self.run(
      ["-d", "--task-log", log, folder.url("in")], extra: Self.stall)
    #expect(run.status == 1, "the damaged file fails: \(run.stderrText)")
    let drawn = try SqueezeBinary.run(["timeline", log, "-o", folder.url("trace.json")])
    #expect(drawn.status == 0, "\(drawn.stderrText)")
    let report = try TraceEventRules.check(
      String(decoding: try folder.read("trace.json"), as: UTF8.self))
    #expect(Array(report.problems.prefix(10)) == [], "\(report.problems.count) problems")
    for kind in ["M", "X", "C", "i"] {
      #expect(report.kinds[kind, default: 0] > 0, "no \(kind) event: \(report.kinds)")
    }
    let instants = report.events.filter { $0["ph"] as? String == "i" }
    #expect(
      instants.contains {
        $0["s"] as? String == "p" && ($0["name"] as? String)?.hasPrefix("hang") == true
      })
    #expect(
      instants.contains {
        $0["s"] as? String == "t" && ($0["name"] as? String)?.hasPrefix("failed") == true
      })
  }
}
