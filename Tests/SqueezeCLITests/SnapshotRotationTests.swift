import Foundation
import Glibc
import TestSupport
import Testing

/// The rotation recipe in `scripts/deploy/` (`squeeze-snapshots.sh` and its systemd service
/// and timer): the units pass `systemd-analyze verify`, and two simulated weeks of nights
/// (the date given by `SNAPSHOT_DATE`, no waiting), one of them failing, keep exactly the
/// daily and weekly snapshots asked for, each restoring the tree of its night.
@Suite(.tags(.system), .systemTier) struct SnapshotRotationTests {
  static let script = Deployment.folder.appendingPathComponent("squeeze-snapshots.sh").path

  @Test func snapshotUnitsPassSystemdAnalyzeVerify() throws {
    let serviceText = try Deployment.file("squeeze-snapshots.service")
    let timerText = try Deployment.file("squeeze-snapshots.timer")
    let service = Deployment.unitSettings(serviceText)
    let timer = Deployment.unitSettings(timerText)
    #expect(service["Service.Type"] == ["oneshot"])
    let execStart = try #require(service["Service.ExecStart"]?.first)
    #expect(execStart == "/usr/local/bin/squeeze-snapshots /data/ /backup/snapshots")
    #expect(service["Service.SuccessExitStatus"] == nil, "only 0 is a success")
    #expect(timer["Timer.Persistent"] == ["true"])
    #expect(timer["Install.WantedBy"] == ["timers.target"])

    let folder = TemporaryFolder("snapshot-units")
    let prefix = folder.url("prefix")
    try Deployment.install(into: prefix)
    try folder.makeFolder("units")
    try folder.write(
      "units/squeeze-snapshots.service",
      text: serviceText.replacingOccurrences(
        of: "/usr/local/bin/squeeze-snapshots", with: Self.script
      ).replacingOccurrences(of: "/usr/local/bin/squeeze", with: prefix + "/bin/squeeze"))
    try folder.write("units/squeeze-snapshots.timer", text: timerText)
    let verified = try Shell.run(
      "/usr/bin/systemd-analyze",
      [
        "verify", folder.url("units/squeeze-snapshots.service"),
        folder.url("units/squeeze-snapshots.timer"),
      ],
      environment: ["PATH": "/usr/bin:/bin", "MANPATH": prefix + "/share/man"])
    #expect(verified.status == 0, "\(verified.stdoutText)\(verified.stderrText)")
    #expect(
      verified.stdout.isEmpty && verified.stderr.isEmpty, "no warning: \(verified.stderrText)")
  }

  /// The snapshots a thinning keeps: the newest `daily`, and the newest of each of the
  /// `weekly` most recent ISO weeks (computed here, not taken from the script).
  static func expectedKept(_ names: [String], daily: Int, weekly: Int) -> [String] {
    let calendar = Calendar(identifier: .iso8601)
    let formatter = DateFormatter()
    formatter.dateFormat = "yyyy-MM-dd"
    formatter.timeZone = TimeZone(identifier: "UTC")
    var kept = Set(names.sorted(by: >).prefix(daily))
    var weeks: [String] = []
    for name in names.sorted(by: >) {
      guard let date = formatter.date(from: name) else { continue }
      var utc = calendar
      utc.timeZone = TimeZone(identifier: "UTC")!
      let parts = utc.dateComponents([.yearForWeekOfYear, .weekOfYear], from: date)
      let week = "\(parts.yearForWeekOfYear ?? 0)-\(parts.weekOfYear ?? 0)"
      if !weeks.contains(week) {
        weeks.append(week)
        if weeks.count <= weekly { kept.insert(name) }
      }
    }
    return kept.sorted()
  }

  @Test func twoWeeksOfNightsKeepDailyAndWeeklySnapshotsAndSurviveAFailedNight() throws {
    let folder = TemporaryFolder("snapshot-rotation")
    for index in 0..<30 {
      try folder.write("S/f\(index).txt", TestData.text(1_000 + index * 13, seed: UInt64(index)))
    }
    let backup = folder.url("B")
    let environment = [
      "PATH": "/usr/bin:/bin", "SQUEEZE": SqueezeBinary.path, "KEEP_DAILY": "3",
      "KEEP_WEEKLY": "2",
    ]
    var made: [String] = []
    var trees: [String: TreeSnapshot] = [:]
    let failingNight = 9
    // Monday 16 November 2026 to Sunday 29 November.
    for day in 0..<14 {
      let name = String(format: "2026-11-%02d", 16 + day)
      try folder.write("S/f\(day).txt", TestData.text(2_000 + day, seed: UInt64(100 + day)))
      try folder.write("S/new\(day).txt", text: "added on \(name)\n")
      unlink(folder.url("S/f\(29 - day).txt"))
      let source = day == failingNight ? folder.url("S-not-there/") : folder.url("S/")
      var nightEnvironment = environment
      nightEnvironment["SNAPSHOT_DATE"] = name
      let night = try Shell.run(
        "/bin/bash", [Self.script, source, backup], environment: nightEnvironment)
      let before = made
      if day == failingNight {
        #expect(night.status == 1, "the failed night's status is squeeze's")
        #expect(night.stderrText.contains("\(made.last ?? "") stays the newest"))
        let names = try FileManager.default.contentsOfDirectory(atPath: backup)
        #expect(names.filter { !$0.hasPrefix(".") }.sorted() == before, "nothing removed")
        continue
      }
      #expect(night.status == 0 && night.stderr.isEmpty, "\(name): \(night.stderrText)")
      trees[name] = TreeSnapshot(folder.url("S"))
      made = Self.expectedKept(made + [name], daily: 3, weekly: 2)
      let names = try FileManager.default.contentsOfDirectory(atPath: backup).sorted()
      #expect(names == made, "\(name)")
      if day == failingNight + 1 {
        // The night after the failure linked against the night before it.
        let previous = String(format: "2026-11-%02d", 16 + failingNight - 1)
        var first = stat()
        var second = stat()
        #expect(lstat(folder.url("B/\(previous)/new0.txt.gz"), &first) == 0)
        #expect(lstat(folder.url("B/\(name)/new0.txt.gz"), &second) == 0)
        #expect(first.st_ino == second.st_ino)
      }
    }
    #expect(made == ["2026-11-22", "2026-11-27", "2026-11-28", "2026-11-29"])
    // Stopped between squeeze's end and the rename: the finished night is renamed, not
    // made again (squeeze would refuse a finished snapshot).
    #expect(rename(folder.url("B/2026-11-29"), folder.url("B/.unfinished-2026-11-29")) == 0)
    var again = environment
    again["SNAPSHOT_DATE"] = "2026-11-29"
    let renamed = try Shell.run(
      "/bin/bash", [Self.script, folder.url("S/"), backup], environment: again)
    #expect(renamed.status == 0, "\(renamed.stderrText)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: backup).sorted() == made)
    for name in made {
      let restore = folder.url("R-\(name)")
      let restored = try SqueezeBinary.run(["-d", "-o", restore, folder.url("B/\(name)/")])
      #expect(restored.status == 0, "\(restored.stderrText)")
      let differences = try #require(trees[name]).differences(from: TreeSnapshot(restore))
      #expect(differences.isEmpty, "\(name): \(differences.joined(separator: "\n"))")
    }
  }

  /// BACKUP is made when missing, never its parents: with the backup disk not mounted, the
  /// night fails instead of filling the file system below its mount point.
  @Test func aBackupFolderWhoseParentIsMissingFailsTheNightAndMakesNothing() throws {
    let folder = TemporaryFolder("snapshot-unmounted")
    try folder.write("S/f.txt", TestData.text(2_000))
    let environment = [
      "PATH": "/usr/bin:/bin", "SQUEEZE": SqueezeBinary.path, "SNAPSHOT_DATE": "2026-11-01",
    ]
    let unmounted = try Shell.run(
      "/bin/bash", [Self.script, folder.url("S/"), folder.url("disk/snapshots")],
      environment: environment)
    #expect(unmounted.status != 0, "\(unmounted.stderrText)")
    #expect(!FileManager.default.fileExists(atPath: folder.url("disk")), "nothing is made")
    try folder.makeFolder("disk")
    let mounted = try Shell.run(
      "/bin/bash", [Self.script, folder.url("S/"), folder.url("disk/snapshots")],
      environment: environment)
    #expect(mounted.status == 0, "\(mounted.stderrText)")
    #expect(
      FileManager.default.fileExists(atPath: folder.url("disk/snapshots/2026-11-01/f.txt.gz")))
  }

  /// An empty source (a disk not mounted) makes no snapshot and removes nothing: a few such
  /// nights would otherwise thin the real history away. ALLOW_EMPTY_SOURCE=1 overrides.
  @Test func anEmptySourceMakesNoSnapshotAndRemovesNothing() throws {
    let folder = TemporaryFolder("snapshot-empty-source")
    try folder.write("S/f.txt", TestData.text(2_000))
    let backup = folder.url("B")
    func night(_ name: String, _ extra: [String: String] = [:]) throws -> Shell.Result {
      try Shell.run(
        "/bin/bash", [Self.script, folder.url("S/"), backup],
        environment: [
          "PATH": "/usr/bin:/bin", "SQUEEZE": SqueezeBinary.path, "SNAPSHOT_DATE": name,
          "KEEP_DAILY": "1", "KEEP_WEEKLY": "0",
        ].merging(extra) { _, new in new })
    }
    #expect(try night("2026-11-01").status == 0)
    unlink(folder.url("S/f.txt"))
    let empty = try night("2026-11-02")
    #expect(empty.status == 1)
    #expect(
      empty.stderrText.contains("the source '\(folder.url("S/"))' is empty (not mounted?)"),
      "\(empty.stderrText)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: backup) == ["2026-11-01"])
    #expect(FileManager.default.fileExists(atPath: folder.url("B/2026-11-01/f.txt.gz")))
    let allowed = try night("2026-11-03", ["ALLOW_EMPTY_SOURCE": "1"])
    #expect(allowed.status == 0, "\(allowed.stderrText)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: backup) == ["2026-11-03"])
  }

  @Test func aNightWithAFailingFileIsKeptAsPartialAndLaterNightsLinkAgainstIt() throws {
    // One file that fails every night (a file and a folder both named for its output) must
    // not stop the history of the others.
    let folder = TemporaryFolder("snapshot-partial")
    for index in 0..<5 {
      try folder.write("S/f\(index).txt", TestData.text(2_000 + index, seed: UInt64(index)))
    }
    let backup = folder.url("B")
    func night(_ name: String) throws -> Shell.Result {
      try Shell.run(
        "/bin/bash", [Self.script, folder.url("S/"), backup],
        environment: [
          "PATH": "/usr/bin:/bin", "SQUEEZE": SqueezeBinary.path, "SNAPSHOT_DATE": name,
        ])
    }
    func names() throws -> [String] {
      try FileManager.default.contentsOfDirectory(atPath: backup).sorted()
    }
    #expect(try night("2026-11-01").status == 0)
    try folder.write("S/f1.txt", text: "changed on the second night\n")
    try folder.write("S/clash", text: "a file\n")
    try folder.write("S/clash.gz/x", text: "and a folder named for its output\n")
    let second = try night("2026-11-02")
    #expect(second.status == 1)
    #expect(
      second.stderrText.contains("kept without them as 2026-11-02-partial"), "\(second.stderrText)")
    #expect(try names() == ["2026-11-01", "2026-11-02-partial"])
    // Everything but the failed file is in the partial night.
    #expect(
      try SystemGzip.decompress(folder.url("B/2026-11-02-partial/f1.txt.gz"))
        == (try folder.read("S/f1.txt")))
    let third = try night("2026-11-03")
    #expect(third.status == 1)
    #expect(try names() == ["2026-11-01", "2026-11-02-partial", "2026-11-03-partial"])
    // The third night linked the second's change, not a new copy of it.
    #expect(
      try SnapshotTests.sameFile(
        folder.url("B/2026-11-02-partial/f1.txt.gz"), folder.url("B/2026-11-03-partial/f1.txt.gz")))
    unlink(folder.url("S/clash"))
    let fourth = try night("2026-11-03")
    #expect(fourth.status == 0, "the same night again, fixed: \(fourth.stderrText)")
    #expect(
      try names() == ["2026-11-01", "2026-11-02-partial", "2026-11-03"], "the partial superseded")
    #expect(
      try SnapshotTests.sameFile(
        folder.url("B/2026-11-02-partial/f1.txt.gz"), folder.url("B/2026-11-03/f1.txt.gz")))
    try SnapshotTests.expectRestores(
      folder.url("B/2026-11-03"), to: folder.url("R"), equal: TreeSnapshot(folder.url("S")))
  }
}
