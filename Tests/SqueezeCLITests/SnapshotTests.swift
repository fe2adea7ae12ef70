import Foundation
import Glibc
import TestSupport
import Testing

/// Snapshots with history (`-o NEW --link-dest DIR`): unchanged files' outputs are hard links
/// of the earlier snapshot's, anything else is compressed anew, the earlier snapshot is never
/// changed, and every night restores exactly.
@Suite struct SnapshotTests {
  /// The JSON summary of a run.
  static func json(_ result: Shell.Result) throws -> [String: Any] {
    try #require(
      JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any],
      "\(result.stdoutText)\n\(result.stderrText)")
  }

  /// `files.<key>` of a JSON summary.
  static func count(_ summary: [String: Any], _ key: String) -> Int? {
    ((summary["files"] as? [String: Any])?[key] as? NSNumber)?.intValue
  }

  /// `lstat` of `path`.
  static func status(_ path: String) throws -> stat {
    var status = stat()
    try #require(lstat(path, &status) == 0, "lstat '\(path)': errno \(errno)")
    return status
  }

  /// True when `a` and `b` are one inode.
  static func sameFile(_ a: String, _ b: String) throws -> Bool {
    let (first, second) = (try status(a), try status(b))
    return first.st_ino == second.st_ino && first.st_dev == second.st_dev
  }

  /// Runs a Python script in `folder`.
  static func python(_ script: String, in folder: TemporaryFolder) throws {
    let result = try Shell.run(
      "/usr/bin/env", ["python3", "-c", script], currentDirectory: folder.path)
    try #require(result.status == 0, "\(result.stderrText)")
  }

  /// Restores `snapshot` into `restore` and expects it to equal `source` entry by entry.
  static func expectRestores(
    _ snapshot: String, to restore: String, equal source: TreeSnapshot,
    _ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let restored = try SqueezeBinary.run(["-d", "-o", restore, snapshot + "/"])
    #expect(
      restored.status == 0, "\(comment) \(restored.stderrText)", sourceLocation: sourceLocation)
    // FIFOs are skipped, not mirrored.
    let differences = source.differences(from: TreeSnapshot(restore), ignoringKinds: ["other"])
    #expect(
      differences.isEmpty, "\(comment)\n\(differences.joined(separator: "\n"))",
      sourceLocation: sourceLocation)
  }

  /// Every entry of a tree as `lstat` shows it that a run might change (kind, bits, owner,
  /// size, modification time, inode) and its contents: what "never modified" compares.
  /// The link count and change time of a shared inode are left out: linking it (the point of
  /// `--link-dest`) changes both, as any hard link does.
  static func fingerprint(_ root: String) -> [String: String] {
    let snapshot = TreeSnapshot(root)
    var lines: [String: String] = [:]
    for (path, entry) in snapshot.entries {
      let identity = snapshot.identities[path]
      lines[String(decoding: path, as: UTF8.self)] =
        "\(entry.description) inode \(identity?.inode ?? 0) bytes \(entry.contents.map { Array($0).hashValue } ?? 0)"
    }
    return lines
  }

  /// What each case does to the source file (or to its output in the earlier snapshot)
  /// between the two nights, and whether the new output can still be a link.
  enum Change: String, CaseIterable, CustomTestStringConvertible {
    case nothing, contents, modificationTime, mode, earlierOutputMode, earlierOutputForeign
    case earlierOutputMissing

    var testDescription: String { rawValue }
    var linked: Bool { self == .nothing }
  }

  @Test(arguments: Change.allCases)
  func anOutputIsLinkedOnlyWhenEveryAttributeMatches(change: Change) throws {
    let folder = TemporaryFolder("link-attribute")
    let file = folder.url("S/f.txt")
    try folder.write("S/f.txt", TestData.text(20_000))
    try folder.write("S/other.txt", text: "unchanged\n")
    #expect(try SqueezeBinary.run(["-o", folder.url("N1"), folder.url("S/")]).status == 0)
    let earlier = folder.url("N1/f.txt.gz")
    switch change {
    case .nothing: break
    case .contents:
      try folder.write("S/f.txt", TestData.text(20_001))
    case .modificationTime:
      let status = try Self.status(file)
      var times = [status.st_atim, status.st_mtim]
      times[1].tv_nsec = (times[1].tv_nsec + 1) % 1_000_000_000
      #expect(utimensat(AT_FDCWD, file, &times, 0) == 0)
    case .mode:
      #expect(chmod(file, 0o600) == 0)
    case .earlierOutputMode:
      #expect(chmod(earlier, 0o600) == 0)
    case .earlierOutputForeign:
      // A gzip file by that name that is not this source's output (another FNAME).
      let bytes = try folder.read("N1/other.txt.gz")
      let status = try Self.status(earlier)
      unlink(earlier)
      try folder.write("N1/f.txt.gz", bytes)
      var times = [status.st_atim, status.st_mtim]
      #expect(utimensat(AT_FDCWD, earlier, &times, 0) == 0)
    case .earlierOutputMissing:
      unlink(earlier)
    }
    let source = TreeSnapshot(folder.url("S"))
    let night = try SqueezeBinary.run([
      "--json", "-o", folder.url("N2"), "--link-dest", folder.url("N1"), folder.url("S/"),
    ])
    #expect(night.status == 0, "\(night.stderrText)")
    let summary = try Self.json(night)
    #expect(Self.count(summary, "linked") == (change.linked ? 2 : 1), "\(summary)")
    #expect(Self.count(summary, "compressed") == (change.linked ? 0 : 1), "\(summary)")
    #expect(Self.count(summary, "linkFallbacks") == 0)
    #expect(try Self.sameFile(folder.url("N1/other.txt.gz"), folder.url("N2/other.txt.gz")))
    if change != .earlierOutputMissing {
      #expect(try Self.sameFile(earlier, folder.url("N2/f.txt.gz")) == change.linked)
    }
    #expect(try SystemGzip.decompress(folder.url("N2/f.txt.gz")) == (try folder.read("S/f.txt")))
    #expect(!FileManager.default.fileExists(atPath: folder.url("N2/.squeeze-snapshot")))
    try Self.expectRestores(folder.url("N2"), to: folder.url("R"), equal: source)
  }

  @Test(.enabled(if: TestMachine.isRoot, "giving a file away needs root"))
  func anOutputWhoseOwnerDiffersIsWrittenAnew() throws {
    let folder = TemporaryFolder("link-owner")
    try folder.write("S/mine.txt", TestData.text(5_000))
    try folder.write("S/given.txt", TestData.text(6_000))
    #expect(try SqueezeBinary.run(["-o", folder.url("N1"), folder.url("S/")]).status == 0)
    #expect(chown(folder.url("S/given.txt"), 1234, 5678) == 0)
    let night = try SqueezeBinary.run([
      "--json", "-o", folder.url("N2"), "--link-dest", folder.url("N1"), folder.url("S/"),
    ])
    #expect(night.status == 0, "\(night.stderrText)")
    #expect(try Self.sameFile(folder.url("N1/mine.txt.gz"), folder.url("N2/mine.txt.gz")))
    #expect(!(try Self.sameFile(folder.url("N1/given.txt.gz"), folder.url("N2/given.txt.gz"))))
    #expect(try Self.status(folder.url("N2/given.txt.gz")).st_uid == 1234)
    #expect(try Self.status(folder.url("N1/given.txt.gz")).st_uid == 0, "the earlier one kept")
  }

  @Test func aChangeThatKeepsSizeAndTimeIsLinkedAsAReRunWouldKeepIt() throws {
    // The re-run rules look at the header's name, time and size and the output's own time,
    // not at the bytes (as rsync's quick check): such a change is carried over from the
    // earlier snapshot. Reading every source against its backup (--check) is what finds it.
    let folder = TemporaryFolder("link-same-size")
    try folder.write("S/f.txt", text: "version one\n")
    #expect(try SqueezeBinary.run(["-o", folder.url("N1"), folder.url("S/")]).status == 0)
    let status = try Self.status(folder.url("S/f.txt"))
    try folder.write("S/f.txt", text: "version two\n")
    var times = [status.st_atim, status.st_mtim]
    #expect(utimensat(AT_FDCWD, folder.url("S/f.txt"), &times, 0) == 0)
    let night = try SqueezeBinary.run([
      "-o", folder.url("N2"), "--link-dest", "../N1", folder.url("S/"),
    ])
    #expect(night.status == 0, "\(night.stderrText)")
    #expect(try Self.sameFile(folder.url("N1/f.txt.gz"), folder.url("N2/f.txt.gz")))
    #expect(try SystemGzip.decompress(folder.url("N2/f.txt.gz")) == Array("version one\n".utf8))
  }

  /// A tree of every kind of entry (the mirror round trip's), for nights that change it.
  static let everyKind = MirrorRoundTripTests.everyKind

  /// Night two's changes to `everyKind`: a file changed, one deleted, one added, a mode
  /// changed, a link retargeted, a hard-link group grown, a folder emptied and one added.
  static let nightTwo = """
    import os
    open('S/regular.txt', 'ab').write(b'one more line\\n')
    os.remove('S/empty.txt')
    open('S/added.txt', 'wb').write(b'new tonight\\n')
    os.chmod('S/random.bin', 0o600)
    os.remove('S/link-to-file'); os.symlink('sub/deeper/leaf.txt', 'S/link-to-file')
    os.link('S/sub/deeper/leaf.txt', 'S/leaf-twin')
    os.makedirs('S/new-empty')
    os.remove('S/private/secret')
    """

  @Test(.tags(.system), .systemTier)
  func theEarlierSnapshotIsNeverModifiedAndEveryNightRestores() throws {
    let folder = TemporaryFolder("link-never-modified")
    try Self.python(Self.everyKind, in: folder)
    let nightOne = TreeSnapshot(folder.url("S"))
    let first = try SqueezeBinary.run(["-o", folder.url("N1"), folder.url("S/")])
    #expect(first.status == 0, "\(first.stderrText)")
    let before = Self.fingerprint(folder.url("N1"))
    try Self.python(Self.nightTwo, in: folder)
    let nightTwo = TreeSnapshot(folder.url("S"))
    let second = try SqueezeBinary.run([
      "--json", "--delete", "-o", folder.url("N2"), "--link-dest", "../N1", folder.url("S/"),
    ])
    #expect(second.status == 0, "\(second.stderrText)")
    let summary = try Self.json(second)
    // data.gz, backup.tgz, the raw-named file and the file in the raw-named folder.
    #expect(Self.count(summary, "linked") == 4, "\(summary)")
    #expect(Self.fingerprint(folder.url("N1")) == before, "the earlier snapshot changed")
    #expect(try Self.sameFile(folder.url("N1/data.gz.gz"), folder.url("N2/data.gz.gz")))
    #expect(!(try Self.sameFile(folder.url("N1/random.bin.gz"), folder.url("N2/random.bin.gz"))))
    try Self.expectRestores(
      folder.url("N1"), to: folder.url("R1"), equal: nightOne, "night one",
      sourceLocation: #_sourceLocation)
    try Self.expectRestores(
      folder.url("N2"), to: folder.url("R2"), equal: nightTwo, "night two",
      sourceLocation: #_sourceLocation)
    #expect(Self.fingerprint(folder.url("N1")) == before, "restoring changed the snapshot")
    // -t and -l read a snapshot as any folder of .gz files.
    let tested = try SqueezeBinary.run(["-t", folder.url("N2")])
    #expect(tested.status == 0, "\(tested.stderrText)")
    let listed = try SqueezeBinary.run(["-l", folder.url("N2")])
    #expect(listed.status == 0, "\(listed.stderrText)")
    #expect(listed.stdoutText.contains("regular.txt"))
  }

  @Test func hardLinkGroupsCarryAcrossNightsAndNeverJoinOtherFiles() throws {
    let folder = TemporaryFolder("link-groups")
    try folder.write("S/a.txt", TestData.text(3_000))
    try folder.makeFolder("S/x")
    try folder.makeFolder("S/y")
    #expect(link(folder.url("S/a.txt"), folder.url("S/x/b.txt")) == 0)
    // Two files that are one group tonight, with the same name in two folders.
    try folder.write("S/x/same.txt", TestData.text(4_000, seed: 7))
    #expect(link(folder.url("S/x/same.txt"), folder.url("S/y/same.txt")) == 0)
    let nights = [
      "", "ln S/a.txt S/c.txt",
      // The group of same.txt is broken into two files with equal bytes, times and bits.
      "cp -p S/x/same.txt S/y/tmp && mv S/y/tmp S/y/same.txt",
    ]
    for (index, step) in nights.enumerated() {
      if !step.isEmpty { _ = try Shell.sh(step, currentDirectory: folder.path) }
      let source = TreeSnapshot(folder.url("S"))
      var arguments = ["-o", folder.url("N\(index)")]
      if index > 0 { arguments += ["--link-dest", "../N\(index - 1)"] }
      let run = try SqueezeBinary.run(arguments + [folder.url("S/")])
      #expect(run.status == 0, "night \(index): \(run.stderrText)")
      try Self.expectRestores(
        folder.url("N\(index)"), to: folder.url("R\(index)"), equal: source, "night \(index)",
        sourceLocation: #_sourceLocation)
    }
    #expect(try Self.sameFile(folder.url("N0/a.txt.gz"), folder.url("N2/c.txt.gz")))
    #expect(try Self.sameFile(folder.url("N1/x/same.txt.gz"), folder.url("N1/y/same.txt.gz")))
    #expect(!(try Self.sameFile(folder.url("N2/x/same.txt.gz"), folder.url("N2/y/same.txt.gz"))))
  }

  @Test func aFolderThatIsNotEmptyIsRefusedAndAFinishedSnapshotToo() throws {
    let folder = TemporaryFolder("link-not-empty")
    try folder.write("S/f.txt", text: "x\n")
    #expect(try SqueezeBinary.run(["-o", folder.url("N1"), folder.url("S/")]).status == 0)
    try folder.write("N2/someone-elses.txt", text: "keep\n")
    let refused = try SqueezeBinary.run([
      "-o", folder.url("N2"), "--link-dest", "../N1", folder.url("S/"),
    ])
    #expect(refused.status == 1)
    #expect(
      refused.stderrText
        == "squeeze: '\(folder.url("N2"))' is not empty and is not an unfinished snapshot (it has no '.squeeze-snapshot'): --link-dest makes each snapshot in a new folder; nothing was done\n"
    )
    #expect(TemporaryFolder.files(in: folder.url("N2")) == ["someone-elses.txt"])
    let made = try SqueezeBinary.run([
      "-o", folder.url("N3"), "--link-dest", "../N1", folder.url("S/"),
    ])
    #expect(made.status == 0)
    let again = try SqueezeBinary.run([
      "-o", folder.url("N3"), "--link-dest", "../N1", folder.url("S/"),
    ])
    #expect(again.status == 1, "a finished snapshot is not made again")
    let itself = try SqueezeBinary.run([
      "-o", folder.url("N4"), "--link-dest", ".", folder.url("S/"),
    ])
    #expect(itself.status == 1)
    #expect(itself.stderrText.contains("is the --output folder itself"), "\(itself.stderrText)")
    let missing = try SqueezeBinary.run([
      "-o", folder.url("N5"), "--link-dest", "../nope", folder.url("S/"),
    ])
    #expect(
      missing.stderrText
        == "squeeze: cannot open --link-dest folder '\(folder.url("nope"))': No such file or directory (errno 2); nothing was done\n"
    )
    #expect(!FileManager.default.fileExists(atPath: folder.url("N5")), "nothing is made")
    #expect(!FileManager.default.fileExists(atPath: folder.url("N4")), "nothing is made")
  }

  /// A run refused for its `--link-dest` makes nothing: neither the `-o` folder nor any of
  /// its parents (`mkdir -p`), whatever the reason.
  @Test func aRunRefusedForItsLinkDestLeavesNoFolderBehind() throws {
    let folder = TemporaryFolder("link-refused-nothing")
    try folder.write("S/f.txt", text: "x\n")
    try folder.write("not-a-folder", text: "x\n")
    try folder.makeFolder("S/.snap")
    #expect(try SqueezeBinary.run(["-o", folder.url("S/.snap/N1"), folder.url("S/")]).status == 0)
    let refusals: [(linkDestination: String, cause: String)] = [
      ("../../nope", "cannot open --link-dest folder"),
      (folder.url("not-a-folder"), "cannot open --link-dest folder"),
      (folder.url("S/.snap/N1"), "lies inside the source"),
      (".", "is the --output folder itself"),
      ("../N", "is the --output folder itself"),
    ]
    for (linkDestination, cause) in refusals {
      let refused = try SqueezeBinary.run([
        "-o", folder.url("new/N"), "--link-dest", linkDestination, folder.url("S/"),
      ])
      #expect(refused.status == 1, "\(linkDestination)")
      #expect(refused.stderrText.contains(cause), "\(linkDestination): \(refused.stderrText)")
      #expect(
        !FileManager.default.fileExists(atPath: folder.url("new")),
        "\(linkDestination) left a folder")
    }
  }

  /// A relative `--link-dest` into an `-o` folder not made yet is found where it will be
  /// from that folder once made: the first `..` out of the folder to be made, the rest on
  /// disk (here through a symbolic link to a folder elsewhere).
  @Test func aRelativeLinkDestIsFoundFromTheFolderToBeMadeThroughALinkedParent() throws {
    let folder = TemporaryFolder("link-relative-new")
    try folder.write("S/f.txt", TestData.text(3_000))
    try folder.makeFolder("real/nights/new")
    symlink(folder.url("real/nights"), folder.url("nights"))
    #expect(try SqueezeBinary.run(["-o", folder.url("real/N1"), folder.url("S/")]).status == 0)
    // From nights/new/N2, `../../..` is real/, where N1 is (not the folder holding the link).
    let made = try SqueezeBinary.run([
      "-o", folder.url("nights/new/N2"), "--link-dest", "../../../N1", folder.url("S/"),
    ])
    #expect(made.status == 0, "\(made.stderrText)")
    #expect(
      try Self.sameFile(folder.url("real/N1/f.txt.gz"), folder.url("real/nights/new/N2/f.txt.gz")))
  }

  @Test func aLinkDestInsideTheSourceIsRefusedBeforeAnythingIsWritten() throws {
    let folder = TemporaryFolder("link-inside")
    try folder.write("S/f.txt", TestData.text(3_000))
    try folder.makeFolder("S/.snap")
    #expect(try SqueezeBinary.run(["-o", folder.url("S/.snap/N1"), folder.url("S/")]).status == 0)
    for linkDestination in [folder.url("S/.snap/N1"), folder.url("S")] {
      let refused = try SqueezeBinary.run([
        "-o", folder.url("N2"), "--link-dest", linkDestination, folder.url("S/"),
      ])
      #expect(refused.status == 1)
      #expect(
        refused.stderrText
          == "squeeze: --link-dest folder '\(linkDestination)' lies inside the source '\(folder.url("S/"))': keep snapshots outside the tree they back up; nothing was done\n"
      )
      #expect(!FileManager.default.fileExists(atPath: folder.url("N2")), "no folder is made")
    }
  }

  @Test func restoringOrTestingAnUnfinishedSnapshotSaysItIsUnfinished() throws {
    let folder = TemporaryFolder("link-unfinished-restore")
    try folder.write("S/f.txt", TestData.text(3_000))
    #expect(try SqueezeBinary.run(["-o", folder.url("N1"), folder.url("S/")]).status == 0)
    let finished = try SqueezeBinary.run(["-d", "-o", folder.url("R1"), folder.url("N1/")])
    #expect(finished.status == 0 && finished.stderr.isEmpty, "\(finished.stderrText)")
    // What a stopped run leaves: its marker at the top.
    try folder.write("N1/.squeeze-snapshot", text: "unfinished\n")
    let warning =
      "squeeze: \(folder.url("N1/")): an unfinished snapshot (it holds '.squeeze-snapshot'): the run that made it stopped before the end, so files it had not reached are missing\n"
    for arguments in [["-d", "-o", folder.url("R2")], ["-t"]] {
      let result = try SqueezeBinary.run(arguments + [folder.url("N1/")])
      #expect(result.status == 0, "\(result.stderrText)")
      #expect(result.stderrText == warning, "\(arguments)")
    }
  }

  @Test func forceWritesEveryOutputAnewInsteadOfLinking() throws {
    // `-f` is how a backup that `--check` found to differ is replaced: it trusts no earlier
    // output, so it links none.
    let folder = TemporaryFolder("link-force")
    try folder.write("S/a.txt", TestData.text(5_000))
    try folder.write("S/b.txt", TestData.text(7_000))
    #expect(try SqueezeBinary.run(["-o", folder.url("N1"), folder.url("S/")]).status == 0)
    let arguments = [
      "-f", "--json", "-o", folder.url("N2"), "--link-dest", "../N1", folder.url("S/"),
    ]
    let dry = try Self.json(try SqueezeBinary.run(["--dry-run"] + arguments))
    let night = try SqueezeBinary.run(arguments)
    #expect(night.status == 0, "\(night.stderrText)")
    let run = try Self.json(night)
    #expect(Self.count(run, "linked") == 0 && Self.count(dry, "linked") == 0, "\(run)\n\(dry)")
    #expect(Self.count(run, "compressed") == 2 && Self.count(dry, "compressed") == 2)
    for name in ["a.txt.gz", "b.txt.gz"] {
      #expect(!(try Self.sameFile(folder.url("N1/\(name)"), folder.url("N2/\(name)"))))
    }
    try Self.expectRestores(
      folder.url("N2"), to: folder.url("R"), equal: TreeSnapshot(folder.url("S")))
  }

  @Test func theDryRunCountsWhatTheRunLinks() throws {
    let folder = TemporaryFolder("link-dry-run")
    try Self.python(Self.everyKind, in: folder)
    #expect(try SqueezeBinary.run(["-o", folder.url("N1"), folder.url("S/")]).status == 0)
    try Self.python(Self.nightTwo, in: folder)
    let arguments = ["--json", "-o", folder.url("N2"), "--link-dest", "../N1", folder.url("S/")]
    let dry = try Self.json(try SqueezeBinary.run(["--dry-run"] + arguments))
    #expect(!FileManager.default.fileExists(atPath: folder.url("N2")), "a dry run makes nothing")
    let run = try Self.json(try SqueezeBinary.run(arguments))
    #expect(Self.count(dry, "linked") == Self.count(run, "linked"), "\(dry)\n\(run)")
    #expect(Self.count(dry, "compressed") == Self.count(run, "compressed"), "\(dry)\n\(run)")
    let steps = (dry["plan"] as? [[String: Any]]) ?? []
    let linkSteps = steps.filter { $0["action"] as? String == "linkFromSnapshot" }
    #expect(linkSteps.count == Self.count(run, "linked"))
    #expect(
      linkSteps.contains {
        $0["path"] as? String == folder.url("S/data.gz")
          && $0["output"] as? String == folder.url("N2/data.gz.gz")
          && $0["of"] as? String == folder.url("N1/data.gz.gz")
      }, "\(linkSteps)")
  }

  @Test(
    .enabled(
      if: SnapshotTests.differentFileSystems("/dev/shm", "/var/tmp"),
      "needs /dev/shm and /var/tmp on different file systems"))
  func anEarlierSnapshotOnAnotherFileSystemFallsBackToCompressing() throws {
    let earlier = TemporaryFolder("link-exdev", base: "/dev/shm")
    let folder = TemporaryFolder("link-exdev", base: "/var/tmp")
    try folder.write("S/a.txt", TestData.text(9_000))
    try folder.write("S/b.txt", TestData.text(7_000, seed: 3))
    let source = TreeSnapshot(folder.url("S"))
    #expect(try SqueezeBinary.run(["-o", earlier.url("N1"), folder.url("S/")]).status == 0)
    let night = try SqueezeBinary.run([
      "--json", "-v", "-o", folder.url("N2"), "--link-dest", earlier.url("N1"),
      folder.url("S/"),
    ])
    #expect(night.status == 0, "\(night.stderrText)")
    let summary = try Self.json(night)
    #expect(Self.count(summary, "linkFallbacks") == 2, "\(summary)")
    #expect(Self.count(summary, "compressed") == 2)
    #expect(Self.count(summary, "linked") == 0)
    #expect(night.stderrText.contains("Invalid cross-device link (errno 18); compressed"))
    try Self.expectRestores(folder.url("N2"), to: folder.url("R"), equal: source)
  }

  @Test(.tags(.slow), .systemTier)
  func anOutputAtItsLinkLimitFallsBackToCompressing() throws {
    // ext4 allows 65,000 names per inode: the earlier output is brought to the limit.
    let folder = TemporaryFolder("link-emlink", base: "/var/tmp")
    try folder.write("S/a.txt", TestData.text(9_000))
    try folder.write("S/b.txt", TestData.text(8_000, seed: 5))
    let source = TreeSnapshot(folder.url("S"))
    #expect(try SqueezeBinary.run(["-o", folder.url("N1"), folder.url("S/")]).status == 0)
    let script = """
      import os, errno
      os.makedirs('many')
      made = 0
      while True:
          try:
              os.link('N1/a.txt.gz', 'many/%d' % made)
          except OSError as error:
              assert error.errno == errno.EMLINK, error
              break
          made += 1
      print(made)
      """
    let filled = try Shell.run(
      "/usr/bin/env", ["python3", "-c", script], currentDirectory: folder.path)
    try #require(filled.status == 0, "\(filled.stderrText)")
    let night = try SqueezeBinary.run([
      "--json", "-o", folder.url("N2"), "--link-dest", "../N1", folder.url("S/"),
    ])
    #expect(night.status == 0, "\(night.stderrText)")
    let summary = try Self.json(night)
    #expect(Self.count(summary, "linkFallbacks") == 1, "\(summary)")
    #expect(Self.count(summary, "linked") == 1)
    #expect(try Self.sameFile(folder.url("N1/b.txt.gz"), folder.url("N2/b.txt.gz")))
    _ = try Shell.run("/bin/rm", ["-rf", folder.url("many")])
    try Self.expectRestores(folder.url("N2"), to: folder.url("R"), equal: source)
  }

  @Test(.tags(.system, .slow), .systemTier)
  func killNineDuringASnapshotThenARerunFinishesIt() throws {
    let folder = TemporaryFolder("link-kill")
    for index in 0..<800 {
      try folder.write(
        "S/d\(index % 8)/f\(index).txt", TestData.text(2_000 + index * 5, seed: UInt64(index)))
    }
    #expect(try SqueezeBinary.run(["-o", folder.url("N1"), folder.url("S/")]).status == 0)
    let before = Self.fingerprint(folder.url("N1"))
    for index in stride(from: 0, to: 800, by: 3) {
      try folder.write("S/d\(index % 8)/f\(index).txt", TestData.text(3_000, seed: UInt64(index)))
    }
    let source = TreeSnapshot(folder.url("S"))
    let marker = folder.url("N2/.squeeze-snapshot")
    var generator = SystemRandomNumberGenerator()
    // A resumed snapshot with little left to do can finish before the kill lands (its marker
    // is removed last): it is then done, and a further run into it is refused by design.
    var finished = false
    for round in 0..<3 where !finished {
      let delay = UInt32.random(in: 0...150_000, using: &generator)
      _ = try SqueezeBinary.run([
        "-j", "2", "-o", folder.url("N2"), "--link-dest", "../N1", folder.url("S/"),
      ]) { pid in
        // Killed once the snapshot is under way (its marker written), at a random point.
        var waited = 0
        while access(marker, F_OK) != 0 && waited < 20_000 {
          usleep(500)
          waited += 1
        }
        usleep(delay)
        kill(pid, SIGKILL)
      }
      #expect(Self.fingerprint(folder.url("N1")) == before, "round \(round)")
      // Whatever is under a final name is whole.
      for name in TemporaryFolder.files(in: folder.url("N2")) where name.hasSuffix(".gz") {
        let restored = try SystemGzip.decompress(folder.url("N2/" + name))
        #expect(
          restored == (try folder.read("S/" + name.dropLast(3))), "round \(round): \(name)")
      }
      // No marker over written outputs: finished (killed before its marker, it wrote none).
      finished =
        access(marker, F_OK) != 0 && !TemporaryFolder.files(in: folder.url("N2")).isEmpty
    }
    if !finished {
      let last = try SqueezeBinary.run([
        "--json", "-o", folder.url("N2"), "--link-dest", "../N1", folder.url("S/"),
      ])
      #expect(last.status == 0, "\(last.stderrText)")
    }
    #expect(access(marker, F_OK) != 0, "the finished snapshot has no marker")
    #expect(Self.fingerprint(folder.url("N1")) == before)
    try Self.expectRestores(folder.url("N2"), to: folder.url("R"), equal: source)
    #expect(try Self.sameFile(folder.url("N1/d1/f1.txt.gz"), folder.url("N2/d1/f1.txt.gz")))
  }

  @Test(.tags(.system, .slow), .systemTier)
  func aResumedSnapshotDropsWhatTheSourceLostSinceTheKilledRun() throws {
    let folder = TemporaryFolder("link-resume-lost")
    for index in 0..<400 {
      try folder.write("S/d\(index % 4)/f\(index).txt", TestData.text(20_000, seed: UInt64(index)))
    }
    try folder.write("S/a-gone/inner.txt", text: "in a folder the source loses")
    try folder.makeFolder("S/a-gone/empty")
    for name in ["f1", "many1", "many2"] { try folder.write("S/\(name)", text: name) }
    symlink("f1", folder.url("S/to-f1"))
    #expect(try SqueezeBinary.run(["-q", "-o", folder.url("N1"), folder.url("S/")]).status == 0)
    // Tonight the big files are new: the snapshot compresses them, slowly enough to be killed.
    for index in 0..<400 {
      try folder.write(
        "S/d\(index % 4)/f\(index).txt", TestData.text(20_000, seed: UInt64(1_000 + index)))
    }
    let marker = folder.url("N2/.squeeze-snapshot")
    let made = ["N2/a-gone/inner.txt.gz", "N2/f1.gz", "N2/many1.gz", "N2/many2.gz"].map {
      folder.url($0)
    }
    _ = try SqueezeBinary.run([
      "-9", "-j", "1", "-o", folder.url("N2"), "--link-dest", "../N1", folder.url("S/"),
    ]) { pid in
      // Killed once the entries the source is about to lose are in the snapshot.
      var waited = 0
      while !made.allSatisfy({ access($0, F_OK) == 0 }) && waited < 40_000 {
        usleep(500)
        waited += 1
      }
      kill(pid, SIGKILL)
    }
    try #require(access(marker, F_OK) == 0, "the killed snapshot is unfinished")
    try #require(made.allSatisfy { access($0, F_OK) == 0 }, "the killed run made them")
    for name in ["f1", "many1", "many2"] { unlink(folder.url("S/\(name)")) }
    _ = try Shell.run("/bin/rm", ["-r", folder.url("S/a-gone")])
    let source = TreeSnapshot(folder.url("S"))
    let resumed = try SqueezeBinary.run([
      "-o", folder.url("N2"), "--link-dest", "../N1", folder.url("S/"),
    ])
    #expect(resumed.status == 0, "\(resumed.stderrText)")
    #expect(access(marker, F_OK) != 0, "the finished snapshot has no marker")
    for gone in ["a-gone", "f1.gz", "many1.gz", "many2.gz"] {
      #expect(access(folder.url("N2/\(gone)"), F_OK) != 0, "\(gone) left in the snapshot")
    }
    let check = try SqueezeBinary.run(["--check", "-o", folder.url("N2"), folder.url("S/")])
    #expect(check.status == 0, "\(check.stdoutText)\n\(check.stderrText)")
    try Self.expectRestores(folder.url("N2"), to: folder.url("R"), equal: source)
  }

  /// True when `a` and `b` exist on different file systems.
  static func differentFileSystems(_ a: String, _ b: String) -> Bool {
    var first = stat()
    var second = stat()
    return stat(a, &first) == 0 && stat(b, &second) == 0 && first.st_dev != second.st_dev
  }
}
