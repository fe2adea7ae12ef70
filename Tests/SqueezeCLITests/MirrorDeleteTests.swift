import Foundation
import Glibc
import TestSupport
import Testing

/// `--delete`: prunes what mirrors nothing, within each argument's destination,
/// never foreign files, nothing after a walk error, never an overlapping run's work.
@Suite struct MirrorDeleteTests {
  static func files(_ summary: [String: Any], _ key: String) -> Int? {
    ((summary["files"] as? [String: Any])?[key] as? NSNumber)?.intValue
  }

  @Test func prunesRemovedFilesFoldersAndLinksAndKeepsForeignAndExcludedOnes() throws {
    let folder = TemporaryFolder("delete")
    try folder.write("S/keep.txt", text: "keep")
    try folder.write("S/gone.txt", text: "gone")
    try folder.write("S/old/inner.txt", text: "inner")
    try folder.write("S/old/deep/x.txt", text: "x")
    try folder.write("S/thing", text: "a file that becomes a folder")
    try folder.write("S/app.log", text: "excluded next time")
    symlink("keep.txt", folder.url("S/ln"))
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    try folder.write("M/notes.txt", text: "the user's own notes")
    try folder.write("M/foreign.txt.gz", text: "not a gzip file at all")
    try folder.write("M/old/mine.gz", text: "a foreign file in a pruned folder")
    unlink(folder.url("S/gone.txt"))
    unlink(folder.url("S/ln"))
    _ = try Shell.run("/bin/rm", ["-r", folder.url("S/old")])
    unlink(folder.url("S/thing"))
    try folder.write("S/thing/inside.txt", text: "now a folder")
    let result = try SqueezeBinary.run([
      "--delete", "--json", "-v", "--exclude", "*.log", "-o", folder.url("M"), folder.url("S/"),
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    let summary = try #require(
      JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    // gone.txt.gz, ln, old/inner.txt.gz, old/deep/x.txt.gz, old/deep, thing.gz; old stays
    // for the foreign file in it.
    #expect(Self.files(summary, "deleted") == 6, "\(summary)")
    #expect(Self.files(summary, "keptForeign") == 3, "\(summary)")
    #expect(summary["deletionsSkipped"] as? Bool == false)
    #expect(
      TemporaryFolder.files(in: folder.url("M")) == [
        "app.log.gz", "foreign.txt.gz", "keep.txt.gz", "notes.txt", "old/mine.gz",
        "thing/inside.txt.gz",
      ])
    var status = stat()
    #expect(lstat(folder.url("M/ln"), &status) != 0, "the link is gone")
    #expect(result.stderrText.contains("\(folder.url("M/gone.txt.gz")): deleted"))
    #expect(
      result.stderrText.contains("\(folder.url("M/notes.txt")): kept (not written by squeeze)"))
  }

  /// `--max-delete=N`, rsync's option: an empty (or unmounted) source would empty the mirror;
  /// with the limit `--delete` removes at most N entries, keeps the rest and fails the run
  /// naming how many it kept (as rsync stops deleting and exits non-zero), even under `-q`;
  /// a dry run shows the same limit as a warning. 0 deletes nothing.
  @Test func maxDeleteStopsDeletionsAtTheLimitAndFailsTheRun() throws {
    let folder = TemporaryFolder("max-delete")
    for index in 0..<5 { try folder.write("S/f\(index).txt", text: "file \(index)") }
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    for index in 0..<5 { unlink(folder.url("S/f\(index).txt")) }
    let arguments = ["--delete", "-o", folder.url("M"), folder.url("S/")]
    let dry = try SqueezeBinary.run(["--dry-run", "--max-delete=2"] + arguments)
    #expect(dry.status == 0, "\(dry.stderrText)")
    #expect(
      dry.stdoutText.split(separator: "\n").filter { $0.hasPrefix("would delete:") }.count == 2)
    #expect(
      dry.stderrText.contains(
        "squeeze: deletions would stop at --max-delete=2: 3 entries whose source is gone would be kept\n"
      ),
      "\(dry.stderrText)")
    #expect(TemporaryFolder.files(in: folder.url("M")).count == 5, "a dry run changes nothing")
    let none = try SqueezeBinary.run(["-q", "--max-delete", "0"] + arguments)
    #expect(none.status == 1)
    #expect(
      none.stderrText
        == "squeeze: deletions stopped at --max-delete=0: 5 entries whose source is gone were kept\n"
    )
    #expect(TemporaryFolder.files(in: folder.url("M")).count == 5)
    let limited = try SqueezeBinary.run(["-q", "--json", "--max-delete=2"] + arguments)
    #expect(limited.status == 1)
    #expect(
      limited.stderrText
        == "squeeze: deletions stopped at --max-delete=2: 3 entries whose source is gone were kept\n"
    )
    let summary = try #require(
      JSONSerialization.jsonObject(with: Data(limited.stdout)) as? [String: Any])
    #expect(Self.files(summary, "deleted") == 2, "\(summary)")
    #expect((summary["deletionsOverLimit"] as? NSNumber)?.intValue == 3, "\(summary)")
    #expect(TemporaryFolder.files(in: folder.url("M")).count == 3)
    let enough = try SqueezeBinary.run(["--max-delete=3"] + arguments)
    #expect(enough.status == 0, "\(enough.stderrText)")
    #expect(TemporaryFolder.files(in: folder.url("M")).isEmpty)
  }

  @Test func twoBackupSetsInOneMirrorNeverPruneEachOther() throws {
    let folder = TemporaryFolder("two-sets")
    try folder.write("a/x/one.txt", text: "one")
    try folder.write("b/y/two.txt", text: "two")
    for _ in 0..<2 {
      #expect(
        try SqueezeBinary.run(["--delete", "-o", folder.url("M"), folder.url("a/x")]).status == 0)
      #expect(
        try SqueezeBinary.run(["--delete", "-o", folder.url("M"), folder.url("b/y")]).status == 0)
    }
    #expect(TemporaryFolder.files(in: folder.url("M")) == ["x/one.txt.gz", "y/two.txt.gz"])
    unlink(folder.url("a/x/one.txt"))
    #expect(
      try SqueezeBinary.run(["--delete", "-o", folder.url("M"), folder.url("a/x")]).status == 0)
    #expect(TemporaryFolder.files(in: folder.url("M")) == ["y/two.txt.gz"])
  }

  @Test func aMirrorThatRemoveMovedFilesIntoIsRefused() throws {
    let folder = TemporaryFolder("archive")
    try folder.write("S/a.log", TestData.text(2000))
    #expect(try SqueezeBinary.run(["--rm", "-o", folder.url("M"), folder.url("S/")]).status == 0)
    try folder.write("S/b.log", TestData.text(1000))
    let refused = try SqueezeBinary.run(["--delete", "-o", folder.url("M"), folder.url("S/")])
    #expect(refused.status == 1)
    #expect(refused.stderrText.contains("is an archive"))
    #expect(refused.stderrText.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 1)
    #expect(TemporaryFolder.files(in: folder.url("M")).contains("a.log.gz"))
    #expect(!FileManager.default.fileExists(atPath: folder.url("M/b.log.gz")), "nothing was done")
    // Restores ignore the marker.
    let restored = try SqueezeBinary.run(["--json", "-d", "-o", folder.url("R"), folder.url("M/")])
    #expect(restored.status == 0, "\(restored.stderrText)")
    #expect(TemporaryFolder.files(in: folder.url("R")) == ["a.log"])
    let summary = try #require(
      JSONSerialization.jsonObject(with: Data(restored.stdout)) as? [String: Any])
    let skipped = (summary["files"] as? [String: Any])?["skipped"] as? [String: Any]
    #expect((skipped?["total"] as? NSNumber)?.intValue == 0)
  }

  @Test(
    .tags(.system), .systemTier,
    .enabled(if: TestMachine.isRoot, "needs root to run squeeze as the user nobody"))
  func anUnreadableSourceFolderMeansNothingIsDeleted() throws {
    let folder = TemporaryFolder("walk-error")
    let binary = try SqueezeBinary.publicCopy(in: folder)
    try folder.write("S/gone.txt", text: "gone")
    try folder.write("S/locked/inside.txt", text: "inside")
    try folder.makeFolder("M")
    _ = try Shell.run("/bin/chown", ["-R", "nobody:nogroup", folder.url("S"), folder.url("M")])
    #expect(
      try SqueezeBinary.runAsNobody(binary, ["-o", folder.url("M"), folder.url("S/")]).status == 0)
    unlink(folder.url("S/gone.txt"))
    chmod(folder.url("S/locked"), 0)
    let result = try SqueezeBinary.runAsNobody(
      binary, ["--delete", "-o", folder.url("M"), folder.url("S/")])
    #expect(result.status == 1)
    #expect(result.stderrText.contains("deletions skipped: 1 walk error"), "\(result.stderrText)")
    #expect(
      TemporaryFolder.files(in: folder.url("M")) == ["gone.txt.gz", "locked/inside.txt.gz"])
  }

  @Test(.tags(.slow), .systemTier)
  func anOverlappingRunsNewOutputIsKept() throws {
    let folder = TemporaryFolder("overlap-delete")
    try folder.write("S/small.txt", text: "small")
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    // Seconds of work at -9 on one core, so the output below appears while this run works.
    try folder.write("S/big.txt", TestData.text(24_000_000, seed: 5))
    try folder.write("elsewhere/late.txt", text: "another run's file")
    let late = folder.url("M/late.txt.gz")
    let result = try SqueezeBinary.run([
      "--delete", "-9", "-j", "1", "-o", folder.url("M"), folder.url("S/"),
    ]) { _ in
      usleep(400_000)
      // What an overlapping run over another copy of the source leaves: an output naming
      // late.txt, a source this run never saw.
      _ = try? Shell.sh(
        "gzip -c -N \(Shell.quote(folder.url("elsewhere/late.txt"))) > \(Shell.quote(late))")
    }
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(FileManager.default.fileExists(atPath: late), "changed after the run started: kept")
    // The next run started after it: pruned (so only the time kept it).
    #expect(
      try SqueezeBinary.run(["--delete", "-o", folder.url("M"), folder.url("S/")]).status == 0)
    #expect(!FileManager.default.fileExists(atPath: late))
  }

  /// `S/x/f` and `S/h` one file; then `S/h2` joins the group and `S/x` goes (and with
  /// `replacedByFile`, a file takes the folder's name).
  static func groupLosingOneNameAndGainingAnother(
    in folder: TemporaryFolder, replacedByFile: Bool
  ) throws {
    try folder.write("S/x/f", text: (1...100).map(String.init).joined(separator: "\n") + "\n")
    try #require(link(folder.url("S/x/f"), folder.url("S/h")) == 0)
    let first = try SqueezeBinary.run(["-q", "-o", folder.url("M"), folder.url("S/")])
    try #require(first.status == 0, "\(first.stderrText)")
    try #require(link(folder.url("S/h"), folder.url("S/h2")) == 0)
    _ = try Shell.run("/bin/rm", ["-r", folder.url("S/x")])
    if replacedByFile { try folder.write("S/x", text: "nowfile\n") }
  }

  @Test func theRunsOwnHardLinkOfADeletedOutputDoesNotKeepIt() throws {
    let folder = TemporaryFolder("delete-own-link")
    try Self.groupLosingOneNameAndGainingAnother(in: folder, replacedByFile: true)
    let result = try SqueezeBinary.run([
      "--delete", "-v", "-o", folder.url("M"), folder.url("S/"),
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(!result.stderrText.contains("kept"), "\(result.stderrText)")
    #expect(result.stderrText.contains("\(folder.url("M/x/f.gz")): deleted"))
    #expect(
      TemporaryFolder.files(in: folder.url("M")) == ["h.gz", "h2.gz", "x.gz"],
      "\(TemporaryFolder.files(in: folder.url("M")))")
    let restored = try SqueezeBinary.run(["-d", "-o", folder.url("R"), folder.url("M/")])
    #expect(restored.status == 0, "\(restored.stderrText)")
    let differences = TreeSnapshot(folder.url("S")).differences(
      from: TreeSnapshot(folder.url("R")))
    #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
  }

  /// Every name of a hard-link group gone: removing the first name's output changes the
  /// change time of the inode the other names share, and that change is the run's own, so
  /// they go in the same run (as the dry run says) rather than one name a night.
  @Test func aGroupWhoseNamesAreAllGoneIsDeletedInOneRun() throws {
    let folder = TemporaryFolder("delete-whole-group")
    try folder.write("S/a", text: "one file, two names\n")
    try folder.write("S/sub/keep", text: "keeps the folder\n")
    try #require(link(folder.url("S/a"), folder.url("S/sub/b")) == 0)
    let first = try SqueezeBinary.run(["-q", "-o", folder.url("M"), folder.url("S/")])
    try #require(first.status == 0, "\(first.stderrText)")
    #expect(unlink(folder.url("S/a")) == 0 && unlink(folder.url("S/sub/b")) == 0)
    let planned = try SqueezeBinary.run([
      "--delete", "--dry-run", "--json", "-o", folder.url("M"), folder.url("S/"),
    ])
    let plan = try #require(
      JSONSerialization.jsonObject(with: Data(planned.stdout)) as? [String: Any])
    #expect(Self.files(plan, "deleted") == 2, "\(planned.stdoutText)")
    let result = try SqueezeBinary.run([
      "--delete", "-v", "--json", "-o", folder.url("M"), folder.url("S/"),
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(!result.stderrText.contains("kept"), "\(result.stderrText)")
    let summary = try #require(
      JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    #expect(Self.files(summary, "deleted") == 2, "\(result.stderrText)")
    #expect(
      TemporaryFolder.files(in: folder.url("M")) == ["sub/keep.gz"],
      "\(TemporaryFolder.files(in: folder.url("M")))")
  }

  @Test(.tags(.slow), .systemTier)
  func aChangeByAnotherProcessToALinkedOutputStillKeepsIt() throws {
    let folder = TemporaryFolder("delete-changed-link")
    try Self.groupLosingOneNameAndGainingAnother(in: folder, replacedByFile: false)
    // Seconds of work at -9 on one core, so the change below comes while this run works
    // and before it links h2.
    try folder.write("S/big.txt", TestData.text(24_000_000, seed: 5))
    let shared = folder.url("M/h.gz")
    let result = try SqueezeBinary.run([
      "--delete", "-v", "-9", "-j", "1", "-o", folder.url("M"), folder.url("S/"),
    ]) { _ in
      usleep(400_000)
      // Another process changes the inode x/f.gz shares with h.gz (its st_ctime moves): its
      // access time only, so no attribute a mirror re-run compares differs (a chmod would
      // make h.gz stale, and the next run's replacement of it would move the old inode's
      // change time again).
      var status = stat()
      stat(shared, &status)
      var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), status.st_mtim]
      utimensat(AT_FDCWD, shared, &times, 0)
    }
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(
      result.stderrText.contains(
        "\(folder.url("M/x/f.gz")): kept (changed since this run started)"),
      "\(result.stderrText)")
    #expect(FileManager.default.fileExists(atPath: folder.url("M/x/f.gz")))
    // The next run started after the change: pruned (so only the change kept it).
    let next = try SqueezeBinary.run(["--delete", "-o", folder.url("M"), folder.url("S/")])
    #expect(next.status == 0, "\(next.stderrText)")
    #expect(!FileManager.default.fileExists(atPath: folder.url("M/x")))
  }

  @Test(.tags(.system, .slow), .systemTier)
  func killNineDuringADeleteRunLosesNothing() throws {
    let folder = TemporaryFolder("kill-delete")
    var contents: [String: [UInt8]] = [:]
    for index in 0..<600 {
      let path = "S/d\(index % 8)/f\(index).txt"
      contents[path] = TestData.text(3000 + index * 7, seed: UInt64(index))
      try folder.write(path, contents[path]!)
    }
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    for index in stride(from: 0, to: 600, by: 2) {
      let path = "S/d\(index % 8)/f\(index).txt"
      unlink(folder.url(path))
      contents[path] = nil
    }
    for index in 0..<300 {
      let path = "S/n\(index % 5)/new\(index).txt"
      contents[path] = TestData.text(4000 + index, seed: UInt64(10_000 + index))
      try folder.write(path, contents[path]!)
    }
    var generator = SystemRandomNumberGenerator()
    for round in 0..<4 {
      let delay = UInt32.random(in: 30_000...400_000, using: &generator)
      _ = try SqueezeBinary.run(["--delete", "-j", "2", "-o", folder.url("M"), folder.url("S/")]) {
        pid in
        usleep(delay)
        kill(pid, SIGKILL)
      }
      for (path, bytes) in contents {
        let output = folder.url("M" + path.dropFirst(1) + ".gz")
        guard path.contains("/d") || FileManager.default.fileExists(atPath: output) else {
          continue
        }
        #expect(
          try SystemGzip.decompress(output) == bytes, "round \(round): \(path) lost or damaged")
      }
    }
    let final = try SqueezeBinary.run(["--delete", "-o", folder.url("M"), folder.url("S/")])
    #expect(final.status == 0, "\(final.stderrText)")
    let expected = contents.keys.map { String($0.dropFirst(2)) + ".gz" }.sorted()
    #expect(TemporaryFolder.files(in: folder.url("M")) == expected)
  }

  @Test func aDryRunListsDeletionsAndDeletesNothing() throws {
    let folder = TemporaryFolder("delete-dry")
    try folder.write("S/keep.txt", text: "keep")
    try folder.write("S/gone.txt", text: "gone")
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    unlink(folder.url("S/gone.txt"))
    // A file of the user's in the mirror: the dry run says it stays, as the run's summary
    // does ("1 foreign kept").
    try folder.write("M/mine.txt", text: "mine")
    let before = TreeSnapshot(folder.url("M"))
    let result = try SqueezeBinary.run([
      "--delete", "--dry-run", "-o", folder.url("M"), folder.url("S/"),
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(result.stdoutText.contains("would delete: \(folder.url("M/gone.txt.gz"))\n"))
    #expect(
      result.stderrText.contains("1 would be deleted, 1 foreign kept;"), "\(result.stderrText)")
    let json = try SqueezeBinary.run([
      "--delete", "--dry-run", "--json", "-o", folder.url("M"), folder.url("S/"),
    ])
    let summary = try #require(
      JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
    #expect(Self.files(summary, "deleted") == 1)
    let steps = summary["plan"] as? [[String: String]] ?? []
    #expect(
      steps.contains { $0["action"] == "delete" && $0["path"] == folder.url("M/gone.txt.gz") })
    #expect(TreeSnapshot(folder.url("M")).identities == before.identities)
  }

  @Test(arguments: [
    ["-d"], ["-c"], ["-t"], ["-l"], ["--rm"], ["--shard", "1/2"], ["-n"],
  ])
  func deleteWithAnOptionThatWouldMisuseItIsAUsageError(extra: [String]) throws {
    let folder = TemporaryFolder("delete-usage")
    try folder.write("S/a.txt", text: "a")
    var arguments = ["--delete"] + extra
    // -c, -t and -l are refused with -o on their own: --delete is refused without it too.
    if !["-c", "-t", "-l"].contains(extra[0]) { arguments += ["-o", folder.url("M")] }
    let result = try SqueezeBinary.run(arguments + [folder.url("S/")])
    #expect(result.status == 64, "\(extra): \(result.stderrText)")
    #expect(result.stderrText.hasPrefix("Error: '--delete' cannot be used with"))
    #expect(!FileManager.default.fileExists(atPath: folder.url("M")))
    let alone = try SqueezeBinary.run(["--delete", folder.url("S/")])
    #expect(alone.status == 64)
    #expect(alone.stderrText.hasPrefix("Error: '--delete' requires '--output'"))
  }
}
