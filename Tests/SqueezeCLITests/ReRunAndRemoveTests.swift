import Foundation
import Glibc
import TestSupport
import Testing

/// Re-runs and `--rm`.
@Suite struct ReRunAndRemoveTests {
  static func identity(_ path: String) -> (inode: UInt, seconds: Int, nanoseconds: Int, change: Int)
  {
    var status = stat()
    stat(path, &status)
    return (status.st_ino, status.st_mtim.tv_sec, status.st_mtim.tv_nsec, status.st_ctim.tv_nsec)
  }

  @Test func aSecondRunOverAnUnchangedFolderWritesNothing() throws {
    let folder = TemporaryFolder("rerun")
    for index in 0..<20 {
      try folder.write("in/d\(index % 3)/f\(index).txt", TestData.text(3000 + index * 100))
    }
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    let outputs = TemporaryFolder.files(in: folder.url("in")).filter { $0.hasSuffix(".gz") }
    #expect(outputs.count == 20)
    let before = outputs.map { Self.identity(folder.url("in/\($0)")) }
    let again = try SqueezeBinary.run(["--json", folder.url("in")])
    #expect(again.status == 0)
    let after = outputs.map { Self.identity(folder.url("in/\($0)")) }
    #expect(before.map(\.inode) == after.map(\.inode), "no output was replaced")
    #expect(before.map(\.change) == after.map(\.change), "no output was touched")
    let summary = try #require(
      JSONSerialization.jsonObject(with: Data(again.stdout)) as? [String: Any])
    let files = try #require(summary["files"] as? [String: Any])
    #expect((files["upToDate"] as? NSNumber)?.intValue == 20)
    #expect((files["compressed"] as? NSNumber)?.intValue == 0)
  }

  @Test func aStaleOutputIsReplacedAndAForeignOneLeftAlone() throws {
    let folder = TemporaryFolder("stale")
    try folder.write("in/changes.txt", Array("first version".utf8))
    try folder.write("in/other.txt", Array("other".utf8))
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    try folder.write("in/changes.txt", Array("second, longer version".utf8))
    // Something that is not the output of other.txt sits at its output path.
    try folder.write("in/other.txt.gz", Array("my own file".utf8))
    let result = try SqueezeBinary.run([folder.url("in")])
    #expect(result.status == 1)
    #expect(
      result.stderrText.contains(
        "'\(folder.url("in/other.txt.gz"))' already exists and is not squeeze's output of this file; not overwritten (use --force)"
      ))
    #expect(
      try SystemGzip.decompress(folder.url("in/changes.txt.gz"))
        == Array("second, longer version".utf8))
    #expect(try folder.read("in/other.txt.gz") == Array("my own file".utf8))
    #expect(try SqueezeBinary.run(["-f", folder.url("in")]).status == 0)
    #expect(try SystemGzip.decompress(folder.url("in/other.txt.gz")) == Array("other".utf8))
  }

  /// `-n` writes no name and no time in the header, so a re-run with `-n` judges its own
  /// outputs by ISIZE and the file's own time: unchanged files are left alone (a nightly
  /// `-n` job must not fail on its own outputs); beside the sources a changed file's
  /// nameless output could be another file's, so it needs `--force` as with gzip; in a
  /// mirror, squeeze's own tree, it is written anew.
  @Test func aRerunWithNoNameLeavesItsOwnOutputsAndJudgesChangedOnes() throws {
    let folder = TemporaryFolder("rerun-n")
    for index in 0..<6 { try folder.write("in/f\(index).txt", TestData.text(2000 + index * 700)) }
    #expect(try SqueezeBinary.run(["-n", folder.url("in")]).status == 0)
    #expect(
      try SqueezeBinary.run(["-n", "-o", folder.url("mirror"), folder.url("in")]).status == 0)
    let kept = Self.identity(folder.url("in/f0.txt.gz"))
    let again = try SqueezeBinary.run(["-n", "--json", folder.url("in")])
    #expect(again.status == 0, "\(again.stderrText)")
    let summary = try #require(
      JSONSerialization.jsonObject(with: Data(again.stdout)) as? [String: Any])
    let files = try #require(summary["files"] as? [String: Any])
    #expect((files["upToDate"] as? NSNumber)?.intValue == 6)
    #expect(Self.identity(folder.url("in/f0.txt.gz")).inode == kept.inode)
    let mirrorAgain = try SqueezeBinary.run(["-n", "-o", folder.url("mirror"), folder.url("in")])
    #expect(mirrorAgain.status == 0, "\(mirrorAgain.stderrText)")

    // A source changes: beside the sources its nameless output is refused, with why.
    try folder.write("in/f1.txt", Array("a new version".utf8))
    let changed = try SqueezeBinary.run(["-n", folder.url("in")])
    #expect(changed.status == 1)
    #expect(
      changed.stderrText.contains(
        "'\(folder.url("in/f1.txt.gz"))' already exists and is not an up-to-date output of this file; with -n no header names its file"
      ), "\(changed.stderrText)")
    #expect(try SystemGzip.decompress(folder.url("in/f1.txt.gz")) == TestData.text(2700))
    #expect(try SqueezeBinary.run(["-n", "-f", folder.url("in")]).status == 0)
    #expect(try SystemGzip.decompress(folder.url("in/f1.txt.gz")) == Array("a new version".utf8))
    // In the mirror it is replaced without --force; the unchanged ones stay.
    let mirrorKept = Self.identity(folder.url("mirror/in/f2.txt.gz"))
    let mirrored = try SqueezeBinary.run(["-n", "-o", folder.url("mirror"), folder.url("in")])
    #expect(mirrored.status == 0, "\(mirrored.stderrText)")
    #expect(
      try SystemGzip.decompress(folder.url("mirror/in/f1.txt.gz")) == Array("a new version".utf8))
    #expect(Self.identity(folder.url("mirror/in/f2.txt.gz")).inode == mirrorKept.inode)
    // A nameless gzip file that is not current stays another file's to a run that stores
    // names (as before -n's rule).
    try folder.write("in/f3.txt", Array("changed too".utf8))
    let named = try SqueezeBinary.run([folder.url("in")])
    #expect(named.status == 1)
    #expect(named.stderrText.contains("is not squeeze's output of this file"))
  }

  @Test func removeDeletesOriginalsOnlyAfterAVerifiedOutputAndKeepsFailures() throws {
    let folder = TemporaryFolder("rm")
    try folder.write("in/a.log", TestData.text(50_000, seed: 1))
    try folder.write("in/sub/b.log", TestData.text(500_000, seed: 2))
    try folder.write("in/blocked.log", Array("blocked".utf8))
    // A foreign file at blocked.log's output path makes that one file fail.
    try folder.write("in/blocked.log.gz", Array("not an output".utf8))
    let result = try SqueezeBinary.run(["--rm", "--block-size", "64K", "-v", folder.url("in")])
    #expect(result.status == 1)
    #expect(!FileManager.default.fileExists(atPath: folder.url("in/a.log")))
    #expect(!FileManager.default.fileExists(atPath: folder.url("in/sub/b.log")))
    #expect(try SystemGzip.decompress(folder.url("in/a.log.gz")) == TestData.text(50_000, seed: 1))
    #expect(
      try SystemGzip.decompress(folder.url("in/sub/b.log.gz")) == TestData.text(500_000, seed: 2))
    #expect(
      try folder.read("in/blocked.log") == Array("blocked".utf8), "a failed file keeps its original"
    )
    #expect(result.stderrText.contains("in/a.log: removed"))
  }

  @Test func hardLinkedOriginalsAreKeptUnlessForced() throws {
    let folder = TemporaryFolder("rm-links")
    try folder.write("in/linked.txt", Array("shared".utf8))
    try folder.makeFolder("elsewhere")
    link(folder.url("in/linked.txt"), folder.url("elsewhere/second-name.txt"))
    let kept = try SqueezeBinary.run(["--rm", folder.url("in")])
    #expect(kept.status == 0)
    #expect(
      kept.stderrText.contains("in/linked.txt: has 2 hard links; kept (use --force to remove it)"))
    #expect(FileManager.default.fileExists(atPath: folder.url("in/linked.txt")))
    #expect(try SystemGzip.decompress(folder.url("in/linked.txt.gz")) == Array("shared".utf8))
    // A warning, not a failure: -q hides the line and keeps the status (0: the file is done).
    unlink(folder.url("in/linked.txt.gz"))
    let quiet = try SqueezeBinary.run(["-q", "--rm", folder.url("in")])
    #expect(quiet.status == kept.status)
    #expect(quiet.stderrText.isEmpty, "\(quiet.stderrText)")
    #expect(FileManager.default.fileExists(atPath: folder.url("in/linked.txt")))
    let forced = try SqueezeBinary.run(["--rm", "-f", folder.url("in")])
    #expect(forced.status == 0)
    #expect(!FileManager.default.fileExists(atPath: folder.url("in/linked.txt")))
    #expect(try folder.read("elsewhere/second-name.txt") == Array("shared".utf8))
  }

  @Test func decompressWithRemoveDeletesTheGzipFiles() throws {
    let folder = TemporaryFolder("d-rm")
    try folder.write("in/a.txt", Array("aaa".utf8))
    #expect(try SqueezeBinary.run(["--rm", folder.url("in")]).status == 0)
    #expect(TemporaryFolder.files(in: folder.url("in")) == ["a.txt.gz"])
    #expect(try SqueezeBinary.run(["-d", "--rm", folder.url("in")]).status == 0)
    #expect(TemporaryFolder.files(in: folder.url("in")) == ["a.txt"])
    #expect(try folder.read("in/a.txt") == Array("aaa".utf8))
  }

  @Test func dryRunChangesNothing() throws {
    let folder = TemporaryFolder("dry")
    try folder.write("in/a.txt", Array("a".utf8))
    try folder.write("in/b.txt", Array("b".utf8))
    #expect(try SqueezeBinary.run([folder.url("in/a.txt")]).status == 0)
    let before = (try FileManager.default.subpathsOfDirectory(atPath: folder.path)).sorted()
    let inodes = before.map { ReRunAndRemoveTests.identity(folder.url($0)) }
    let result = try SqueezeBinary.run([
      "--dry-run", "--rm", "-o", folder.url("mirror"), folder.url("in/"),
    ])
    #expect(result.status == 0)
    // The plan is the result, on stdout; its summary is a message, on stderr.
    #expect(
      result.stdoutText.contains(
        "would compress: \(folder.url("in/a.txt")) → \(folder.url("mirror/a.txt.gz"))\n"))
    #expect(result.stdoutText.contains("would remove: \(folder.url("in/b.txt"))\n"))
    // A mirror wraps a compressed name instead of skipping it.
    #expect(
      result.stdoutText.contains(
        "would compress: \(folder.url("in/a.txt.gz")) → \(folder.url("mirror/a.txt.gz.gz"))\n"))
    #expect(!result.stdoutText.contains("squeeze:"))
    #expect(
      result.stderrText
        == "squeeze: dry run: 3 would be compressed, 0 up to date, 0 skipped, 3 would be removed; nothing was changed\n"
    )
    let after = (try FileManager.default.subpathsOfDirectory(atPath: folder.path)).sorted()
    #expect(before == after)
    #expect(
      inodes.map(\.change) == after.map { ReRunAndRemoveTests.identity(folder.url($0)).change })
    let beside = try SqueezeBinary.run(["--dry-run", folder.url("in")])
    #expect(beside.stdoutText.contains("up to date: \(folder.url("in/a.txt"))\n"))
    #expect(
      beside.stdoutText.contains(
        "would compress: \(folder.url("in/b.txt")) → \(folder.url("in/b.txt.gz"))\n"))
    // -q keeps the plan (the result) and drops the summary (a message).
    let quiet = try SqueezeBinary.run(["--dry-run", "-q", folder.url("in")])
    #expect(quiet.stdout == beside.stdout)
    #expect(quiet.stderr.isEmpty)
  }

  @Test func dryRunWithJsonPutsThePlanInsideTheObject() throws {
    let folder = TemporaryFolder("dry-json")
    try folder.write("in/a.txt", Array("a".utf8))
    try folder.write("in/b.txt", Array("b".utf8))
    try folder.write("in/c.gz", Array("c".utf8))
    #expect(try SqueezeBinary.run([folder.url("in/a.txt")]).status == 0)
    let result = try SqueezeBinary.run(["--dry-run", "--json", folder.url("in")])
    #expect(result.status == 0, "\(result.stderrText)")
    let object = try #require(
      JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    #expect(object["dryRun"] as? Bool == true)
    #expect(object["schema"] as? Int == 2)
    let plan = try #require(object["plan"] as? [[String: String]])
    #expect(
      plan.sorted { $0["path"]! < $1["path"]! } == [
        // a.txt.gz is a.txt's output: counted once, as a.txt's, not also as a skip.
        ["action": "upToDate", "path": folder.url("in/a.txt")],
        [
          "action": "compress", "path": folder.url("in/b.txt"),
          "output": folder.url("in/b.txt.gz"),
        ],
        ["action": "skip", "path": folder.url("in/c.gz"), "reason": "alreadyCompressed"],
      ])
    #expect(
      result.stderrText.contains("squeeze: dry run: 1 would be compressed, 1 up to date, 1 skipped")
    )
  }

  @Test func aDryRunCountsAndFailsWhatTheRunWouldFail() throws {
    // A file and a folder named like its output (a clash), and an output path taken by a
    // file squeeze did not make: the run fails both; the dry run must say so and exit 1.
    let folder = TemporaryFolder("dry-fails")
    try folder.write("S/clash", text: "a file\n")
    try folder.write("S/clash.gz/inside.txt", text: "a folder named like its output\n")
    try folder.write("S/ok.txt", TestData.text(2_000))
    try folder.write("S/taken.txt", TestData.text(2_000))
    try folder.write("M/taken.txt.gz", text: "someone else's\n")
    let arguments = ["--json", "-o", folder.url("M"), folder.url("S/")]
    let dry = try SqueezeBinary.run(["--dry-run"] + arguments)
    let run = try SqueezeBinary.run(arguments)
    #expect(run.status == 1, "\(run.stderrText)")
    #expect(dry.status == run.status, "\(dry.stderrText)")
    func failedPaths(_ result: Shell.Result) throws -> [String] {
      let object = try #require(
        JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
      let failed = try #require((object["files"] as? [String: Any])?["failed"] as? [String: Any])
      let list = try #require(failed["list"] as? [[String: String]])
      #expect((failed["count"] as? Int) == list.count)
      return list.compactMap { $0["path"] }.sorted()
    }
    let expected = [folder.url("S/clash"), folder.url("S/taken.txt")]
    #expect(try failedPaths(run) == expected)
    #expect(try failedPaths(dry) == expected)
  }
}

/// Metadata carried to outputs.
@Suite(.tags(.system), .systemTier) struct MetadataTests {
  @Test(.enabled(if: TestMachine.isRoot, "needs root to give a file to another owner"))
  func ownerAndGroupAreCarriedAsRootWithSetuidAndSetgid() throws {
    let folder = TemporaryFolder("owner")
    try folder.write("in/owned.txt", Array("owned by nobody".utf8))
    chown(folder.url("in/owned.txt"), 65534, 65534)
    chmod(folder.url("in/owned.txt"), 0o6754)
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    var status = stat()
    stat(folder.url("in/owned.txt.gz"), &status)
    #expect(status.st_uid == 65534 && status.st_gid == 65534)
    #expect(status.st_mode & 0o7777 == 0o6754, "setuid and setgid are kept with the owner")
    try FileManager.default.removeItem(atPath: folder.url("in/owned.txt"))
    #expect(try SqueezeBinary.run(["-d", folder.url("in")]).status == 0)
    stat(folder.url("in/owned.txt"), &status)
    #expect(status.st_uid == 65534 && status.st_gid == 65534)
    #expect(status.st_mode & 0o7777 == 0o6754)
  }

  /// As root a mirror keeps set-user-ID, set-group-ID and sticky bits, as `rsync -a` does:
  /// the outputs and the restore carry them, `--check` and a re-run compare them, and a
  /// restore re-run finds the restored files up to date.
  @Test(.enabled(if: TestMachine.isRoot, "needs root to keep set-user-ID on another's file"))
  func aMirrorKeepsSetuidSetgidAndStickyBitsAsRoot() throws {
    let folder = TemporaryFolder("special-bits")
    let bits: [(name: String, mode: mode_t)] = [("su", 0o4755), ("sg", 0o2750), ("st", 0o1644)]
    for (name, mode) in bits {
      try folder.write("S/\(name)", TestData.text(3_000))
      #expect(chown(folder.url("S/\(name)"), 65534, 65534) == 0)
      #expect(chmod(folder.url("S/\(name)"), mode) == 0)
    }
    func mode(_ path: String) -> mode_t {
      var status = stat()
      stat(folder.url(path), &status)
      return status.st_mode & 0o7777
    }
    #expect(try SqueezeBinary.run(["-q", "-o", folder.url("M"), folder.url("S/")]).status == 0)
    for (name, bits) in bits { #expect(mode("M/\(name).gz") == bits, "M/\(name).gz") }
    let check = try SqueezeBinary.run(["--check", "-o", folder.url("M"), folder.url("S/")])
    #expect(check.status == 0, "\(check.stdoutText) \(check.stderrText)")
    // The output lost its set-user-ID bit: out of date for --check, written anew by a re-run.
    #expect(chmod(folder.url("M/su.gz"), 0o755) == 0)
    let changed = try SqueezeBinary.run(["--check", "-o", folder.url("M"), folder.url("S/")])
    #expect(changed.status == 1)
    #expect(changed.stdoutText.contains("S/su: out of date"), "\(changed.stdoutText)")
    #expect(try SqueezeBinary.run(["-q", "-o", folder.url("M"), folder.url("S/")]).status == 0)
    #expect(mode("M/su.gz") == 0o4755)
    #expect(
      try SqueezeBinary.run(["-q", "-d", "-o", folder.url("R"), folder.url("M/")]).status == 0)
    for (name, bits) in bits { #expect(mode("R/\(name)") == bits, "R/\(name)") }
    let again = try SqueezeBinary.run(["--json", "-d", "-o", folder.url("R"), folder.url("M/")])
    #expect(again.status == 0, "\(again.stderrText)")
    let files = try #require(
      (JSONSerialization.jsonObject(with: Data(again.stdout)) as? [String: Any])?["files"]
        as? [String: Any])
    #expect((files["upToDate"] as? NSNumber)?.intValue == 3, "\(files)")
  }

  /// A user who is not root cannot give a file its owner: a restored file belongs to that
  /// user, and set-user-ID or set-group-ID bits would lend the user's identity to a program
  /// someone else wrote, so they are dropped (the sticky bit stays), and a re-run finds the
  /// files up to date by the same rule.
  @Test(.enabled(if: TestMachine.isRoot, "needs root to run squeeze as the user nobody"))
  func aRestoreByAnotherUserDropsSetuidAndSetgid() throws {
    let folder = TemporaryFolder("special-bits-nobody")
    let binary = try SqueezeBinary.publicCopy(in: folder)
    for name in ["su", "sg", "st"] { try folder.write("S/\(name)", TestData.text(2_000)) }
    chmod(folder.url("S/su"), 0o4755)
    chmod(folder.url("S/sg"), 0o2755)
    chmod(folder.url("S/st"), 0o1644)
    #expect(try SqueezeBinary.run(["-q", "-o", folder.url("M"), folder.url("S/")]).status == 0)
    try FileManager.default.createDirectory(
      atPath: folder.url("R"), withIntermediateDirectories: true)
    for path in ["M", "R"] { chmod(folder.url(path), 0o777) }
    let restore = try SqueezeBinary.runAsNobody(
      binary, ["-d", "-o", folder.url("R/x"), folder.url("M/")])
    #expect(restore.status == 0, "\(restore.stderrText)")
    for (name, bits) in [("su", mode_t(0o755)), ("sg", 0o755), ("st", 0o1644)] {
      var status = stat()
      stat(folder.url("R/x/\(name)"), &status)
      #expect(status.st_uid == 65534, "R/x/\(name)")
      #expect(status.st_mode & 0o7777 == bits, "R/x/\(name)")
    }
    let again = try SqueezeBinary.runAsNobody(
      binary, ["-d", "-o", folder.url("R/x"), folder.url("M/")])
    #expect(again.status == 0, "up to date by the same rule: \(again.stderrText)")
  }

  /// A restore re-run as root takes a file for up to date only when it has the `.gz` file's
  /// owner and group too, as a mirror re-run takes an output only with its source's: a
  /// restored file given away since (or whose source changed owner after the restore) is
  /// reported and left alone, and `-f` gives it the backup's owner.
  @Test(.enabled(if: TestMachine.isRoot, "needs root to give a file to another owner"))
  func aRestoreReRunDoesNotCallAFileOfAnotherOwnerUpToDate() throws {
    let folder = TemporaryFolder("restore-owner")
    try folder.write("S/f.txt", TestData.text(5_000))
    try folder.write("S/other.txt", TestData.text(3_000))
    #expect(try SqueezeBinary.run(["-q", "-o", folder.url("M"), folder.url("S/")]).status == 0)
    #expect(
      try SqueezeBinary.run(["-q", "-d", "-o", folder.url("R"), folder.url("M/")]).status == 0)
    #expect(chown(folder.url("R/f.txt"), 1234, 5678) == 0)
    let again = try SqueezeBinary.run(["-d", "-o", folder.url("R"), folder.url("M/")])
    #expect(again.status == 1, "\(again.stderrText)")
    #expect(
      again.stderrText.contains(
        "'\(folder.url("R/f.txt"))' already exists; not overwritten (use --force)"),
      "\(again.stderrText)")
    #expect(!again.stderrText.contains("other.txt"), "\(again.stderrText)")
    let forced = try SqueezeBinary.run(["-q", "-f", "-d", "-o", folder.url("R"), folder.url("M/")])
    #expect(forced.status == 0, "\(forced.stderrText)")
    var status = stat()
    stat(folder.url("R/f.txt"), &status)
    #expect(status.st_uid == getuid() && status.st_gid == getgid())
    #expect(
      try SqueezeBinary.run(["-q", "-d", "-o", folder.url("R"), folder.url("M/")]).status == 0)
  }

  /// What a mirror re-run and `--check` make of a change to one attribute of a source (or
  /// of its output in the mirror) that keeps its contents and times.
  enum AttributeChange: String, CaseIterable, CustomTestStringConvertible {
    case sourceMode, outputMode, sourceOwner, sourceGroup
    var testDescription: String { rawValue }
  }

  @Test(arguments: [AttributeChange.sourceMode, .outputMode])
  func aMirrorReRunCarriesAModeChangeAndCheckFindsIt(change: AttributeChange) throws {
    try Self.expectCarried(change)
  }

  @Test(
    .enabled(if: TestMachine.isRoot, "needs root to give a file to another owner"),
    arguments: [AttributeChange.sourceOwner, .sourceGroup])
  func aMirrorReRunCarriesAnOwnerChangeAndCheckFindsIt(change: AttributeChange) throws {
    try Self.expectCarried(change)
  }

  /// Mirrors a folder, makes `change`, and expects `--check` to call the one output out of
  /// date, a re-run to write it anew with the source's attributes, and the mirror to restore.
  static func expectCarried(_ change: AttributeChange) throws {
    let folder = TemporaryFolder("mirror-attributes")
    try folder.write("S/f.txt", TestData.text(20_000))
    try folder.write("S/other.txt", TestData.text(3_000))
    #expect(try SqueezeBinary.run(["-q", "-o", folder.url("M"), folder.url("S/")]).status == 0)
    let source = folder.url("S/f.txt")
    switch change {
    case .sourceMode: #expect(chmod(source, 0o640) == 0)
    case .outputMode: #expect(chmod(folder.url("M/f.txt.gz"), 0o600) == 0)
    case .sourceOwner: #expect(chown(source, 1234, UInt32.max) == 0)
    case .sourceGroup: #expect(chown(source, UInt32.max, 5678) == 0)
    }
    let check = try SqueezeBinary.run(["--check", "-o", folder.url("M"), folder.url("S/")])
    #expect(check.status == 1, "\(check.stderrText)")
    #expect(check.stdoutText.contains("S/f.txt: out of date"), "\(check.stdoutText)")
    #expect(!check.stdoutText.contains("other.txt:"), "\(check.stdoutText)")
    let rerun = try SqueezeBinary.run(["--json", "-o", folder.url("M"), folder.url("S/")])
    #expect(rerun.status == 0, "\(rerun.stderrText)")
    let files = try #require(
      (JSONSerialization.jsonObject(with: Data(rerun.stdout)) as? [String: Any])?["files"]
        as? [String: Any])
    #expect((files["compressed"] as? NSNumber)?.intValue == 1, "\(files)")
    #expect((files["upToDate"] as? NSNumber)?.intValue == 1, "\(files)")
    var want = stat()
    var got = stat()
    stat(source, &want)
    stat(folder.url("M/f.txt.gz"), &got)
    #expect(got.st_mode & 0o7777 == want.st_mode & 0o1777)
    #expect(got.st_uid == want.st_uid && got.st_gid == want.st_gid)
    let again = try SqueezeBinary.run(["--check", "-o", folder.url("M"), folder.url("S/")])
    #expect(again.status == 0, "\(again.stderrText)")
    try SnapshotTests.expectRestores(
      folder.url("M"), to: folder.url("R"), equal: TreeSnapshot(folder.url("S")))
  }
}
