import Foundation
import Glibc
import SqueezeSystem
import TestSupport
import Testing

/// `--check`: a mirror compared with its source without restoring it; and `--dry-run` and
/// `-v` saying the same numbers as the run they stand for.
@Suite struct BackupCheckTests {
  static func json(_ result: Shell.Result) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
  }

  static func number(_ object: [String: Any], _ path: String) -> Int? {
    var value: Any? = object
    for key in path.split(separator: ".") { value = (value as? [String: Any])?[String(key)] }
    return (value as? NSNumber)?.intValue
  }

  /// Writes `contents` over the file at `path`, keeping its size and both its times: what a
  /// tool that restores modification times (or a disk that rots) leaves behind.
  static func overwriteKeepingSizeAndTimes(_ path: String, _ contents: [UInt8]) throws {
    var status = stat()
    #expect(lstat(path, &status) == 0)
    #expect(Int(status.st_size) == contents.count)
    try Data(contents).write(to: URL(fileURLWithPath: path))
    var times = [status.st_atim, status.st_mtim]
    #expect(utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW) == 0)
  }

  /// A source with every entry kind a mirror keeps: files in nested folders, an empty
  /// folder, a compressed file, relative and dangling links, a hard-link group of three
  /// names, and a fifo (skipped).
  static func makeSource(in folder: TemporaryFolder) throws {
    try folder.write("S/a.txt", TestData.text(20_000, seed: 1))
    try folder.write("S/sub/b.txt", TestData.text(3_000, seed: 2))
    try folder.write("S/sub/deep/c.bin", TestData.random(5_000, seed: 3))
    try folder.write("S/packed.gz", TestData.random(700, seed: 4))
    try folder.write("S/group/one", TestData.text(4_000, seed: 5))
    link(folder.url("S/group/one"), folder.url("S/group/two"))
    link(folder.url("S/group/one"), folder.url("S/three"))
    try folder.makeFolder("S/empty")
    symlink("a.txt", folder.url("S/to-a"))
    symlink("/nonexistent/target", folder.url("S/sub/dangling"))
    mkfifo(folder.url("S/fifo"), 0o644)
  }

  /// The dry run's `--json` counts, its plan, the run's `--json` counts and the run's `-v`
  /// lines, all for the same state of `S` and the mirror (`M`, or `output`), compared kind
  /// by kind: files, symbolic links, hard links, folders, deletions.
  ///
  /// - Returns: the run's `--json` object.
  @discardableResult
  static func expectDryRunAgreesWithRun(
    _ folder: TemporaryFolder, extra: [String] = [], output: String = "M", _ comment: Comment
  ) throws -> [String: Any] {
    let arguments = extra + ["--json", "-o", folder.url(output), folder.url("S/")]
    let dry = try SqueezeBinary.run(["--dry-run"] + arguments)
    #expect(dry.status == 0, "\(dry.stderrText)")
    let run = try SqueezeBinary.run(["-v"] + arguments)
    #expect(run.status == 0, "\(run.stderrText)")
    let planned = try json(dry)
    let done = try json(run)
    for key in [
      "files.selected", "files.compressed", "files.upToDate", "files.hardLinked",
      "files.symbolicLinks.written", "files.symbolicLinks.upToDate", "files.deleted",
      "files.keptForeign", "files.skipped.total", "files.failed.count", "files.linked",
      "files.folders.made", "files.folders.updated", "files.folders.upToDate",
    ] {
      #expect(number(planned, key) == number(done, key), "\(key), \(comment)")
    }
    let plan = try #require(planned["plan"] as? [[String: Any]])
    func steps(_ action: String) -> Int { plan.count { $0["action"] as? String == action } }
    let upToDate =
      (number(done, "files.upToDate") ?? -1) + (number(done, "files.symbolicLinks.upToDate") ?? -1)
      + (number(done, "files.folders.upToDate") ?? -1)
    #expect(steps("compress") == number(done, "files.compressed"), "\(comment)")
    #expect(steps("makeFolder") == number(done, "files.folders.made"), "\(comment)")
    #expect(steps("updateFolder") == number(done, "files.folders.updated"), "\(comment)")
    #expect(steps("upToDate") == upToDate, "\(comment)")
    #expect(steps("link") == number(done, "files.symbolicLinks.written"), "\(comment)")
    #expect(steps("hardLink") == number(done, "files.hardLinked"), "\(comment)")
    #expect(steps("delete") == number(done, "files.deleted"), "\(comment)")
    // -v names every entry it counts: a line per file compressed, per entry up to date, per
    // link written, per further name hard-linked, per folder made or updated.
    let lines = run.stderrText.split(separator: "\n")
    let compressedLines = lines.count {
      !$0.hasPrefix("squeeze: ") && $0.contains(" → ") && !$0.contains(": link → ")
        && !$0.contains(": hard link of ") && !$0.contains(": folder ")
        && !$0.contains(": linked ")
    }
    #expect(
      lines.count { $0.contains(": folder made → ") } == number(done, "files.folders.made"),
      "\(comment)")
    #expect(
      lines.count { $0.contains(": folder updated → ") } == number(done, "files.folders.updated"),
      "\(comment)")
    #expect(compressedLines == number(done, "files.compressed"), "\(comment)")
    #expect(lines.count { $0.hasSuffix(": up to date") } == upToDate, "\(comment)")
    #expect(
      lines.count { $0.contains(": link → ") } == number(done, "files.symbolicLinks.written"),
      "\(comment)")
    #expect(
      lines.count { $0.contains(": hard link of ") } == number(done, "files.hardLinked"),
      "\(comment)")
    // The summary lines say the folders made and updated, the run's as the dry run's.
    for (key, verb) in [("made", "made"), ("updated", "updated")] {
      let count = number(done, "files.folders.\(key)") ?? -1
      let folders = count == 1 ? "1 folder" : "\(count) folders"
      #expect(run.stderrText.contains(", \(folders) \(verb)") == (count > 0), "\(comment)")
      #expect(dry.stderrText.contains(", \(folders) would be \(verb)") == (count > 0), "\(comment)")
    }
    return done
  }

  /// The run's folder counts: made, updated, up to date.
  static func folders(_ done: [String: Any]) -> [Int?] {
    ["made", "updated", "upToDate"].map { number(done, "files.folders.\($0)") }
  }

  @Test func dryRunCountsEqualTheRunsForAMirrorWithEveryEntryKind() throws {
    let folder = TemporaryFolder("dry-agrees")
    try Self.makeSource(in: folder)
    // sub, sub/deep, group and empty; the top (M itself) is not counted.
    let fresh = try Self.expectDryRunAgreesWithRun(folder, "a new mirror")
    #expect(Self.folders(fresh) == [4, 0, 0])
    let again = try Self.expectDryRunAgreesWithRun(folder, "an up-to-date mirror")
    #expect(Self.folders(again) == [0, 0, 4])
    // Changes of every kind: a new file, a new link, a link retimed, a new hard-link name,
    // a file and a link gone (pruned with --delete).
    try folder.write("S/sub/new.txt", TestData.text(1_000, seed: 6))
    symlink("sub/b.txt", folder.url("S/to-b"))
    var times = [
      timespec(tv_sec: 1_600_000_000, tv_nsec: 0), timespec(tv_sec: 1_600_000_000, tv_nsec: 0),
    ]
    #expect(utimensat(AT_FDCWD, folder.url("S/to-a"), &times, AT_SYMLINK_NOFOLLOW) == 0)
    link(folder.url("S/group/one"), folder.url("S/sub/four"))
    unlink(folder.url("S/sub/deep/c.bin"))
    unlink(folder.url("S/sub/dangling"))
    let changed = try Self.expectDryRunAgreesWithRun(
      folder, extra: ["--delete"], "after changes of every kind")
    #expect(Self.folders(changed) == [0, 2, 2], "sub and sub/deep changed")
    try Self.expectDryRunAgreesWithRun(folder, extra: ["--delete"], "up to date again")
    // A folder's bits changed, one that was empty gained a folder: updated, not made. A file
    // rewritten in place leaves its folder's metadata as it was: the run writes the new
    // output into it (and gives it its time back), and the folder is still up to date.
    #expect(chmod(folder.url("S/sub/deep"), 0o750) == 0)
    try folder.makeFolder("S/empty/now-not")
    try folder.write("S/sub/b.txt", TestData.text(3_500, seed: 8))
    let folders = try Self.expectDryRunAgreesWithRun(
      folder, extra: ["--delete"], "folders changed")
    #expect(
      Self.folders(folders) == [1, 2, 2], "empty/now-not made; sub/deep and empty updated")
    #expect(Self.number(folders, "files.compressed") == 1, "sub/b.txt")
    // Tonight's snapshot of the same tree: every folder made anew, unchanged files linked.
    try folder.write("S/sub/new.txt", TestData.text(1_100, seed: 7))
    let snapshot = try Self.expectDryRunAgreesWithRun(
      folder, extra: ["--link-dest", "../M"], output: "N", "a snapshot with --link-dest")
    #expect(Self.folders(snapshot) == [5, 0, 0])
    #expect((Self.number(snapshot, "files.linked") ?? 0) > 0)
    // A restore counts its folders the same way, the dry run as the run.
    for expected in [[5, 0, 0], [0, 0, 5]] {
      let restore = ["--json", "-d", "-o", folder.url("R"), folder.url("N/")]
      let planned = try Self.json(try SqueezeBinary.run(["--dry-run"] + restore))
      let restored = try SqueezeBinary.run(restore)
      #expect(restored.status == 0, "\(restored.stderrText)")
      #expect(Self.folders(planned) == expected)
      #expect(Self.folders(try Self.json(restored)) == expected)
    }
  }

  @Test func aFolderTheRunCannotMakeIsAFailingStepOfTheDryRun() throws {
    let folder = TemporaryFolder("dry-folder-in-the-way")
    try folder.write("S/a.txt", TestData.text(2_000, seed: 1))
    try folder.write("S/sub/b.txt", TestData.text(2_000, seed: 2))
    try folder.write("M/sub", text: "someone's notes\n")
    let cause =
      "cannot make this mirror folder: a regular file that is not squeeze's is in the way; not replaced (use --force)"
    let dry = try SqueezeBinary.run(["--dry-run", "-o", folder.url("M"), folder.url("S/")])
    #expect(
      dry.stdoutText.contains("would fail: \(folder.url("S/sub")): \(cause)\n"), "\(dry.stdoutText)"
    )
    #expect(!dry.stdoutText.contains("would make folder"), "\(dry.stdoutText)")
    // What is in it is left out, by the dry run as by the run.
    #expect(!dry.stdoutText.contains("b.txt"), "\(dry.stdoutText)")
    #expect(dry.stderrText.contains(", 1 would fail;"), "\(dry.stderrText)")
    let run = try SqueezeBinary.run(["-v", "-o", folder.url("M"), folder.url("S/")])
    #expect(run.status == 1)
    #expect(!run.stderrText.contains("b.txt"), "\(run.stderrText)")
    #expect(
      run.stderrText.contains("squeeze: \(folder.url("M/sub")): \(cause)\n"), "\(run.stderrText)")
    #expect(try folder.read("M/sub") == Array("someone's notes\n".utf8))
  }

  @Test(.tags(.system), .systemTier)
  func aSourceChangedWithItsSizeAndTimeKeptIsFoundByCheckNotByARerun() throws {
    let folder = TemporaryFolder("check-same-time")
    try Self.makeSource(in: folder)
    let original = TestData.text(3_000, seed: 2)
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    let clean = try SqueezeBinary.run(["--check", "-o", folder.url("M"), folder.url("S/")])
    #expect(clean.status == 0, "\(clean.stdoutText) \(clean.stderrText)")
    #expect(clean.stdout.isEmpty)
    var changed = original
    changed[1_000] ^= 0x20
    try Self.overwriteKeepingSizeAndTimes(folder.url("S/sub/b.txt"), changed)
    // A re-run's rules call the stale output up to date and keep it.
    let rerun = try SqueezeBinary.run(["--json", "-o", folder.url("M"), folder.url("S/")])
    #expect(Self.number(try Self.json(rerun), "files.compressed") == 0)
    #expect(try SystemGzip.decompress(folder.url("M/sub/b.txt.gz")) == original)
    let check = try SqueezeBinary.run(["--check", "-o", folder.url("M"), folder.url("S/")])
    #expect(check.status == 1)
    let (changedSum, originalSum) = (try Self.crcHex(changed), try Self.crcHex(original))
    #expect(
      check.stdoutText
        == "\(folder.url("S/sub/b.txt")): differs: its backup '\(folder.url("M/sub/b.txt.gz"))' has the same size and modification time but other bytes (the source: CRC-32 \(changedSum), its backup's \(originalSum))\n"
    )
    // Something differs: the summary goes to stderr even when it is not a terminal.
    #expect(check.stderrText.contains(", 1 differs with the same size and time"))
    let summary = try Self.json(
      try SqueezeBinary.run(["--check", "--json", "-o", folder.url("M"), folder.url("S/")]))
    #expect(Self.number(summary, "counts.differs") == 1)
    // a.txt, c.bin, packed.gz and the hard-link group's first name; its other names are
    // links of that one output, and b.txt differs.
    #expect(Self.number(summary, "files.matching") == 4)
  }

  /// A backup the check cannot read (mode 000, checked by a user who does not own it) is a
  /// failure that names it and the cause, never a finding: nothing is known of what it holds.
  @Test(
    .tags(.system), .systemTier,
    .enabled(if: TestMachine.isRoot, "needs root to run squeeze as the user nobody"))
  func aBackupTheCheckCannotReadIsAFailureNamingItAndTheCause() throws {
    let folder = TemporaryFolder("check-unreadable")
    let binary = try SqueezeBinary.publicCopy(in: folder)
    try folder.write("S/a.txt", TestData.text(2_000, seed: 1))
    try folder.write("S/b.txt", TestData.text(3_000, seed: 2))
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    for path in ["S", "M"] { chmod(folder.url(path), 0o755) }
    for path in ["S/a.txt", "S/b.txt"] { chmod(folder.url(path), 0o644) }
    chmod(folder.url("M/a.txt.gz"), 0o000)
    let check = try SqueezeBinary.runAsNobody(
      binary, ["--check", "-o", folder.url("M"), folder.url("S/")])
    #expect(check.status == 1)
    #expect(check.stdout.isEmpty, "\(check.stdoutText)")
    #expect(
      check.stderrText.contains(
        "squeeze: \(folder.url("S/a.txt")): cannot read '\(folder.url("M/a.txt.gz"))': Permission denied (errno 13)\n"
      ), "\(check.stderrText)")
    #expect(check.stderrText.contains("1 file matches"), "\(check.stderrText)")
    #expect(check.stderrText.contains("1 failed"), "\(check.stderrText)")
    #expect(!check.stderrText.contains("out of date"), "\(check.stderrText)")
    let summary = try Self.json(
      try SqueezeBinary.runAsNobody(
        binary, ["--check", "--json", "-o", folder.url("M"), folder.url("S/")]))
    #expect(Self.number(summary, "files.failed.count") == 1)
    #expect(Self.number(summary, "files.matching") == 1)
    #expect((summary["findings"] as? [Any])?.isEmpty == true, "\(summary)")
  }

  /// The CRC-32 of `bytes` as the check prints it (8 hex digits), from the system's gzip.
  static func crcHex(_ bytes: [UInt8]) throws -> String {
    let folder = TemporaryFolder("crc")
    try folder.write("x", bytes)
    let compressed = try Shell.run("/bin/gzip", ["-c", folder.url("x")]).stdout
    let trailer = compressed.suffix(8)
    let crc = trailer.prefix(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    let hex = String(crc, radix: 16)
    return String(repeating: "0", count: 8 - hex.count) + hex
  }

  @Test func checkChangesNothingInEitherTree() throws {
    let folder = TemporaryFolder("check-nothing")
    try Self.makeSource(in: folder)
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    try folder.write("S/added.txt", text: "not in the backup yet")
    unlink(folder.url("S/a.txt"))
    // A killed run's temporary, of a writer in another PID namespace and two days old: a
    // run would remove it; a check leaves it.
    let me = ProcessIdentity.current
    let stale = "M/sub/.squeeze-\(me.hostHash)-\(me.bootID)-abd-1-1-2.tmp"
    try folder.write(stale, text: "a killed run's temporary")
    var old = [
      timespec(tv_sec: time(nil) - 2 * 86400, tv_nsec: 0),
      timespec(tv_sec: time(nil) - 2 * 86400, tv_nsec: 0),
    ]
    #expect(utimensat(AT_FDCWD, folder.url(stale), &old, 0) == 0)
    let source = TreeSnapshot(folder.url("S"))
    let mirror = TreeSnapshot(folder.url("M"))
    let check = try SqueezeBinary.run(["--check", "-v", "-o", folder.url("M"), folder.url("S/")])
    #expect(check.status == 1)
    #expect(check.stdoutText.contains("\(folder.url("S/added.txt")): missing"))
    #expect(check.stdoutText.contains("\(folder.url("M/a.txt.gz")): lost"))
    // A backup folder that is not there is an error, and is not made.
    let nowhere = try SqueezeBinary.run(["--check", "-o", folder.url("N"), folder.url("S/")])
    #expect(nowhere.status == 1)
    #expect(
      nowhere.stderrText
        == "squeeze: cannot check the backup '\(folder.url("N"))': cannot open it: No such file or directory (errno 2)\n"
    )
    #expect(!FileManager.default.fileExists(atPath: folder.url("N")))
    for (before, path) in [(source, "S"), (mirror, "M")] {
      let after = TreeSnapshot(folder.url(path))
      #expect(after.differences(from: before).isEmpty, "\(path)")
      #expect(after.identities == before.identities, "\(path): inodes and ctimes")
    }
  }

  /// `bytesRead` counts what the check read: every source it read, also one whose backup
  /// differs, and the backup it then decoded (it counted only sources that matched).
  @Test func bytesReadCountsEverySourceReadAndEveryBackupDecoded() throws {
    let folder = TemporaryFolder("check-bytes")
    let first = [UInt8]((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) })
    let second = [UInt8]((0..<200_000).map { UInt8(truncatingIfNeeded: $0 >> 3) })
    try folder.write("S/a.bin", first)
    try folder.write("S/b.bin", second)
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    let all = try Self.json(
      try SqueezeBinary.run(["--check", "--json", "-o", folder.url("M"), folder.url("S/")]))
    #expect(Self.number(all, "bytesRead") == 500_000, "\(all)")
    // The same size and time, other bytes: read whole, and its backup decoded whole.
    var changed = first
    changed[100] ^= 0xFF
    try Self.overwriteKeepingSizeAndTimes(folder.url("S/a.bin"), changed)
    let backupSize = try folder.read("M/a.bin.gz").count
    let result = try SqueezeBinary.run([
      "--check", "--json", "-o", folder.url("M"), folder.url("S/"),
    ])
    #expect(result.status == 1)
    let summary = try Self.json(result)
    #expect(Self.number(summary, "counts.differs") == 1, "\(summary)")
    #expect(Self.number(summary, "bytesRead") == 500_000 + backupSize, "\(summary)")
  }

  @Test func checkReportsEveryKindOfDifference() throws {
    let folder = TemporaryFolder("check-kinds")
    try Self.makeSource(in: folder)
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    try folder.write("S/a.txt", text: "a new version, another size")
    try folder.write("S/new.txt", text: "new")
    unlink(folder.url("S/to-a"))
    symlink("sub/b.txt", folder.url("S/to-a"))
    unlink(folder.url("S/sub/deep/c.bin"))
    unlink(folder.url("M/packed.gz.gz"))
    try folder.write("M/packed.gz.gz", text: "someone else's file")
    let result = try SqueezeBinary.run([
      "--check", "--json", "-o", folder.url("M"), folder.url("S/"),
    ])
    #expect(result.status == 1)
    let summary = try Self.json(result)
    #expect(Self.number(summary, "counts.outOfDate") == 2, "a.txt and the link to-a")
    #expect(Self.number(summary, "counts.missing") == 1, "new.txt")
    #expect(Self.number(summary, "counts.lost") == 1, "c.bin's output")
    #expect(Self.number(summary, "counts.notBackup") == 1, "packed.gz")
    #expect(Self.number(summary, "counts.differs") == 0)
    let findings = try #require(summary["findings"] as? [[String: Any]])
    #expect(
      findings.contains {
        $0["kind"] as? String == "lost"
          && $0["path"] as? String == folder.url("M/sub/deep/c.bin.gz")
      })
  }

  @Test(.tags(.system), .systemTier)
  func aBackupOfSeveralMembersIsDecodedBeforeItIsCalledDifferent() throws {
    let folder = TemporaryFolder("check-members")
    let contents = TestData.text(50_000, seed: 9)
    try folder.write("S/doc.txt", contents)
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    var status = stat()
    #expect(lstat(folder.url("S/doc.txt"), &status) == 0)
    // gzip's own output of the same file (name and time stored), after an empty member that
    // carries the source's name: two members, the last trailer covering every byte.
    try folder.write("work/doc.txt", [])
    var times = [status.st_atim, status.st_mtim]
    #expect(utimensat(AT_FDCWD, folder.url("work/doc.txt"), &times, 0) == 0)
    let empty = try Shell.run("/bin/gzip", ["-N", "-c", folder.url("work/doc.txt")]).stdout
    func publish(_ last: [UInt8]) throws {
      try folder.write("work/doc.txt", last)
      #expect(utimensat(AT_FDCWD, folder.url("work/doc.txt"), &times, 0) == 0)
      let member = try Shell.run("/bin/gzip", ["-N", "-c", folder.url("work/doc.txt")]).stdout
      try folder.write("M/doc.txt.gz", empty + member)
      #expect(utimensat(AT_FDCWD, folder.url("M/doc.txt.gz"), &times, 0) == 0)
    }
    try publish(contents)
    let matching = try SqueezeBinary.run(["--check", "-o", folder.url("M"), folder.url("S/")])
    #expect(matching.status == 0, "\(matching.stdoutText) \(matching.stderrText)")
    var other = contents
    other[10] ^= 1
    try publish(other)
    let differs = try SqueezeBinary.run(["--check", "-o", folder.url("M"), folder.url("S/")])
    #expect(differs.status == 1)
    #expect(differs.stdoutText.contains("(2 gzip members) has the same size and modification time"))
    // A trailer damaged in place: the CRC-32 no longer matches what the data decodes to.
    try publish(contents)
    var damaged = try folder.read("M/doc.txt.gz")
    damaged[damaged.count - 8] ^= 0xFF
    try folder.write("M/doc.txt.gz", damaged)
    #expect(utimensat(AT_FDCWD, folder.url("M/doc.txt.gz"), &times, 0) == 0)
    let broken = try SqueezeBinary.run(["--check", "-o", folder.url("M"), folder.url("S/")])
    #expect(broken.status == 1)
    #expect(broken.stdoutText.contains("doc.txt: damaged backup: "), "\(broken.stdoutText)")
  }

  /// Waits until process `pid` has `path` open (it is reading it), or is gone, or a minute
  /// has passed (a guard, not a measurement).
  static func waitUntilOpen(_ path: String, pid: Int32) {
    for _ in 0..<60_000 {
      let folder = "/proc/\(pid)/fd"
      let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
      for name in names
      where (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(name)"))
        == path
      {
        return
      }
      if kill(pid, 0) != 0 { return }
      usleep(1000)
    }
  }

  @Test(.tags(.slow), .systemTier)
  func aSignalStopsTheCheckWithoutFailingTheFilesItDidNotRead() throws {
    let folder = TemporaryFolder("check-signal")
    // A 64 GiB sparse source and an output the re-run rules call up to date (its header
    // names it with its time, its ISIZE is 64 GiB modulo 2^32, its own time is the
    // source's): reading it takes far longer than stopping does.
    try folder.write("S/small.txt", text: "small")
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    let big = try folder.write("S/big.img", [])
    #expect(truncate(big, 64 << 30) == 0)
    var status = stat()
    #expect(lstat(big, &status) == 0)
    let seconds = UInt32(status.st_mtim.tv_sec)
    var output: [UInt8] = [0x1F, 0x8B, 8, 0x08]
    output += withUnsafeBytes(of: seconds.littleEndian) { Array($0) }
    output += [0, 3] + Array("big.img".utf8) + [0]
    output += [3, 0] + [0, 0, 0, 0] + [0, 0, 0, 0]
    try folder.write("M/big.img.gz", output)
    var times = [status.st_atim, status.st_mtim]
    #expect(utimensat(AT_FDCWD, folder.url("M/big.img.gz"), &times, 0) == 0)
    let result = try SqueezeBinary.run([
      "--check", "-j", "1", "-o", folder.url("M"), folder.url("S/"),
    ]) {
      pid in
      Self.waitUntilOpen(big, pid: pid)
      kill(pid, SIGINT)
    }
    #expect(result.signal == SIGINT, "\(result.status) \(result.stderrText)")
    #expect(result.stderrText.contains("interrupted"), "\(result.stderrText)")
    #expect(!result.stderrText.contains("failed"), "\(result.stderrText)")
    #expect(result.stdout.isEmpty, "no file reported as differing")
  }
}
