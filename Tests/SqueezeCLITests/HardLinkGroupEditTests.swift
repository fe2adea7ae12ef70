import Foundation
import Glibc
import TestSupport
import Testing

/// A name of a hard-link group replaced by a new file (an editor saving by rename, a package
/// upgrade): its output in the mirror is the group's output, whose header names another
/// member. A re-run replaces it, `--check` says the next run will, and a file squeeze did
/// not make is still never overwritten.
@Suite struct HardLinkGroupEditTests {
  /// How the re-run can tell the left-behind output is squeeze's.
  enum Proof: String, CaseIterable, CustomTestStringConvertible {
    /// The mirror's manifest lists it as a further name of the group.
    case manifest
    /// No manifest: it is the very inode of the group's other output.
    case sharedInode

    var testDescription: String { rawValue }
  }

  /// True when `a` and `b` are one inode.
  static func sameFile(_ a: String, _ b: String) -> Bool {
    var first = stat()
    var second = stat()
    return lstat(a, &first) == 0 && lstat(b, &second) == 0 && first.st_ino == second.st_ino
      && first.st_dev == second.st_dev
  }

  /// `S/a` and `S/b` one file, mirrored into `M`; then `S/b` replaced by a new file.
  static func groupWithOneNameReplaced(in folder: TemporaryFolder) throws {
    try folder.write("S/a", text: (1...100).map(String.init).joined(separator: "\n") + "\n")
    try #require(link(folder.url("S/a"), folder.url("S/b")) == 0)
    let first = try SqueezeBinary.run(["-q", "-o", folder.url("M"), folder.url("S/")])
    try #require(first.status == 0, "\(first.stderrText)")
    try #require(sameFile(folder.url("M/a.gz"), folder.url("M/b.gz")))
    unlink(folder.url("S/b"))
    try folder.write("S/b", text: "new content\n")
  }

  /// `-f` writes every output anew, the group's too, under a new inode: its further names
  /// are linked to that one in the same run (the dry run says so), so the mirror still
  /// restores the group as one file.
  @Test func aForcedRunKeepsAGroupsNamesOneFile() throws {
    let folder = TemporaryFolder("group-force")
    try folder.write("S/a", text: "one file, two names\n")
    try folder.write("S/d/keep", text: "another file\n")
    try #require(link(folder.url("S/a"), folder.url("S/d/b")) == 0)
    let first = try SqueezeBinary.run(["-q", "-o", folder.url("M"), folder.url("S/")])
    try #require(first.status == 0, "\(first.stderrText)")
    try #require(Self.sameFile(folder.url("M/a.gz"), folder.url("M/d/b.gz")))
    let planned = try SqueezeBinary.run([
      "-f", "--dry-run", "--json", "-o", folder.url("M"), folder.url("S/"),
    ])
    let plan = try #require(
      JSONSerialization.jsonObject(with: Data(planned.stdout)) as? [String: Any])
    #expect((plan["files"] as? [String: Any])?["hardLinked"] as? Int == 1, "\(planned.stdoutText)")
    let forced = try SqueezeBinary.run(["-f", "--json", "-o", folder.url("M"), folder.url("S/")])
    #expect(forced.status == 0, "\(forced.stderrText)")
    let summary = try #require(
      JSONSerialization.jsonObject(with: Data(forced.stdout)) as? [String: Any])
    #expect(
      (summary["files"] as? [String: Any])?["hardLinked"] as? Int == 1, "\(forced.stdoutText)")
    #expect(
      Self.sameFile(folder.url("M/a.gz"), folder.url("M/d/b.gz")),
      "the group's names are one output after -f")
    let restored = try SqueezeBinary.run(["-q", "-d", "-o", folder.url("R"), folder.url("M/")])
    #expect(restored.status == 0, "\(restored.stderrText)")
    #expect(Self.sameFile(folder.url("R/a"), folder.url("R/d/b")), "restored as one file")
    // A forced restore over it writes the group's file anew and links its other name again.
    let again = try SqueezeBinary.run(["-q", "-f", "-d", "-o", folder.url("R"), folder.url("M/")])
    #expect(again.status == 0, "\(again.stderrText)")
    #expect(Self.sameFile(folder.url("R/a"), folder.url("R/d/b")), "still one file after -f -d")
  }

  @Test(arguments: Proof.allCases)
  func aReplacedNameIsBackedUpAgainWithoutTouchingTheGroupsOutput(proof: Proof) throws {
    let folder = TemporaryFolder("group-edit")
    try Self.groupWithOneNameReplaced(in: folder)
    if proof == .sharedInode {
      try #require(unlink(folder.url("M/" + TemporaryFolder.mirrorManifest)) == 0)
    }
    let before = try folder.read("M/a.gz")
    let check = try SqueezeBinary.run(["--check", "-o", folder.url("M"), folder.url("S/")])
    #expect(
      check.stdoutText.contains("\(folder.url("S/b")): out of date")
        || check.stderrText.contains("\(folder.url("S/b")): out of date"),
      "\(check.stdoutText)\n\(check.stderrText)")
    #expect(!(check.stdoutText + check.stderrText).contains("not squeeze's backup"))
    for night in 0..<2 {
      let run = try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")])
      #expect(run.status == 0, "night \(night): \(run.stderrText)")
      #expect(run.stderrText.isEmpty, "night \(night): \(run.stderrText)")
    }
    // Replaced under a new inode: the group's output kept its bytes.
    #expect(!Self.sameFile(folder.url("M/a.gz"), folder.url("M/b.gz")))
    #expect(try folder.read("M/a.gz") == before)
    #expect(try SystemGzip.decompress(folder.url("M/b.gz")) == Array("new content\n".utf8))
    #expect(try SystemGzip.decompress(folder.url("M/a.gz")) == (try folder.read("S/a")))
    let after = try SqueezeBinary.run(["--check", "-o", folder.url("M"), folder.url("S/")])
    #expect(after.status == 0, "\(after.stdoutText)\n\(after.stderrText)")
    let restored = try SqueezeBinary.run(["-d", "-o", folder.url("R"), folder.url("M/")])
    #expect(restored.status == 0, "\(restored.stderrText)")
    let differences = TreeSnapshot(folder.url("S")).differences(
      from: TreeSnapshot(folder.url("R")))
    #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
  }

  @Test(arguments: Proof.allCases)
  func aHandMadeLinkOfAnotherGzipFileIsStillNotOverwritten(proof: Proof) throws {
    let folder = TemporaryFolder("group-edit-foreign")
    try Self.groupWithOneNameReplaced(in: folder)
    if proof == .sharedInode {
      try #require(unlink(folder.url("M/" + TemporaryFolder.mirrorManifest)) == 0)
    }
    // A gzip file of the user's whose header names `a` too, with two names, put where
    // b's output goes: neither recorded by squeeze nor the group's output.
    try folder.write("X/a", text: "the user's own a\n")
    let gzip = try Shell.sh(
      "gzip -c \(Shell.quote(folder.url("X/a"))) > \(Shell.quote(folder.url("M/own.gz")))")
    try #require(gzip.status == 0)
    unlink(folder.url("M/b.gz"))
    try #require(link(folder.url("M/own.gz"), folder.url("M/b.gz")) == 0)
    let run = try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")])
    #expect(run.status == 1)
    #expect(run.stderrText.contains("already exists"), "\(run.stderrText)")
    #expect(Self.sameFile(folder.url("M/own.gz"), folder.url("M/b.gz")))
    #expect(try SystemGzip.decompress(folder.url("M/b.gz")) == Array("the user's own a\n".utf8))
  }
}
