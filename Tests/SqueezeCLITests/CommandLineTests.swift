import Foundation
import Glibc
import TestSupport
import Testing

/// The executable end to end: exit statuses, mirroring, skips, and no leftovers.
@Suite struct CommandLineTests {
  @Test func successIsStatusZeroAndSilentWhenNotATerminal() throws {
    let folder = TemporaryFolder("ok")
    try folder.write("in/a.txt", text: "alpha")
    let result = try SqueezeBinary.run([folder.url("in")])
    #expect(result.status == 0)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.isEmpty, "cron runs print nothing on success: \(result.stderrText)")
  }

  @Test func verbosePrintsALinePerFileAndTheSummary() throws {
    let folder = TemporaryFolder("verbose")
    try folder.write("in/a.txt", text: "alpha alpha alpha")
    try folder.write("in/b.txt", text: "beta")
    let result = try SqueezeBinary.run(["-v", folder.url("in")])
    #expect(result.status == 0)
    #expect(result.stderrText.contains("in/a.txt: 17 B → "))
    #expect(result.stderrText.contains("in/b.txt: 4 B → "))
    #expect(result.stderrText.contains("squeeze: 2 files compressed, 21 B → "))
  }

  @Test func aMissingPathIsStatusOneAndTheRestIsStillDone() throws {
    let folder = TemporaryFolder("missing")
    try folder.write("in/a.txt", text: "alpha")
    let result = try SqueezeBinary.run([folder.url("nope"), folder.url("in")])
    #expect(result.status == 1)
    #expect(
      result.stderrText.contains(
        "squeeze: \(folder.url("nope")): No such file or directory (errno 2)"))
    #expect(try SystemGzip.decompress(folder.url("in/a.txt.gz")) == Array("alpha".utf8))
  }

  @Test(arguments: [
    (arguments: ["--bogus"], message: "Error: Unknown option '--bogus'"),
    (arguments: ["-j", "zero"], message: "Error: The value 'zero' is invalid for '--jobs <n>'"),
    (arguments: ["--level"], message: "Error: Missing value for '--level <n>'"),
    (arguments: ["--rm", "-c", "x"], message: "Error: '--rm' cannot be used with '--stdout'"),
    // Options that would be ignored silently are refused instead.
    (
      arguments: ["--json"],
      message:
        "Error: '--json' needs a <path>: with none, standard input is compressed to standard output, where the JSON summary would be mixed into the data\nHelp:  <path>  "
    ),
    (arguments: ["--task-log", "l.jsonl"], message: "Error: '--task-log' needs a <path>: "),
    (
      arguments: ["--versoin"],
      message: "Error: Unknown option '--versoin'. Did you mean '--version'?"
    ),
    (
      arguments: ["--task-log", "l.jsonl", "-c", "x"],
      message: "Error: '--task-log' cannot be used with '--stdout'"
    ),
    (
      arguments: ["--task-log", "l.jsonl", "-l", "x"],
      message: "Error: '--task-log' cannot be used with '--list'"
    ),
    (
      arguments: ["--task-log", "l.jsonl", "--dry-run", "x"],
      message: "Error: '--task-log' cannot be used with '--dry-run'"
    ),
  ])
  func usageErrorsAreStatus64(arguments: [String], message: String) throws {
    let result = try SqueezeBinary.run(arguments)
    #expect(result.status == 64)
    #expect(result.stderrText.hasPrefix(message))
    #expect(result.stderrText.contains("See 'squeeze --help' for more information."))
    #expect(result.stdout.isEmpty)
  }

  @Test func helpAndVersionGoToStdout() throws {
    let help = try SqueezeBinary.run(["--help"])
    #expect(help.status == 0)
    #expect(help.stdoutText.hasPrefix("OVERVIEW: "))
    #expect(help.stderr.isEmpty)
    let version = try SqueezeBinary.run(["--version"])
    #expect(version.status == 0)
    #expect(version.stdoutText.hasPrefix("squeeze "))
    let short = try SqueezeBinary.run(["-V"])
    #expect(short.status == 0)
    #expect(short.stdout == version.stdout)
    // The help names the default engine, not zlib alone (a new user read "compressed with
    // zlib" there while libdeflate was compressing).
    #expect(help.stdoutText.contains("libdeflate by default"))
  }

  @Test func outputMapsArgumentsAsRsyncDoes() throws {
    let folder = TemporaryFolder("mirror")
    try folder.write("a/x.txt", text: "x")
    try folder.write("a/sub/y.txt", text: "y")
    try folder.write("b/z.txt", text: "z")
    try folder.write("c/single.txt", text: "s")
    try folder.makeFolder("out")
    // a: the folder itself; b/: its contents; c/single.txt: the file at the top.
    let result = try SqueezeBinary.run([
      "-o", folder.url("out/deep"), folder.url("a"), folder.url("b/"),
      folder.url("c/single.txt"),
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(
      TemporaryFolder.files(in: folder.url("out")) == [
        "deep/a/sub/y.txt.gz", "deep/a/x.txt.gz", "deep/single.txt.gz", "deep/z.txt.gz",
      ])
    #expect(try SystemGzip.decompress(folder.url("out/deep/a/sub/y.txt.gz")) == Array("y".utf8))
    #expect(
      !FileManager.default.fileExists(atPath: folder.url("a/x.txt.gz")),
      "nothing written beside the sources")
    #expect(try folder.read("a/x.txt") == Array("x".utf8))
  }

  /// `-o` makes the output folder, never its missing parents, as rsync makes only the last
  /// element of its destination: a backup disk not mounted fails loudly, naming what is
  /// missing, instead of filling the file system below. A restore and a snapshot alike.
  @Test(arguments: ["", "-d", "--link-dest"])
  func theOutputFolderIsMadeButNotItsMissingParents(mode: String) throws {
    let folder = TemporaryFolder("output-parents")
    try folder.write("S/f.txt", text: "x\n")
    #expect(
      try SqueezeBinary.run(["-q", "-o", folder.url("disk/N1"), folder.url("S/")]).status == 1)
    #expect(!FileManager.default.fileExists(atPath: folder.url("disk")))
    try folder.makeFolder("disk")
    #expect(
      try SqueezeBinary.run(["-q", "-o", folder.url("disk/N1"), folder.url("S/")]).status == 0)
    let source = mode == "-d" ? folder.url("disk/N1/") : folder.url("S/")
    let extra =
      switch mode {
      case "": [String]()
      case "--link-dest": ["--link-dest", folder.url("disk/N1")]
      default: [mode]
      }
    let output = folder.url("gone/host/N2")
    let refused = try SqueezeBinary.run(extra + ["-o", output, source])
    #expect(refused.status == 1)
    #expect(
      refused.stderrText
        == "squeeze: cannot create output folder '\(output)': '\(folder.url("gone/host"))' does not exist (squeeze makes only the last folder of --output, as rsync does)\n"
    )
    #expect(!FileManager.default.fileExists(atPath: folder.url("gone")), "nothing is made")
  }

  @Test func twoArgumentsThatMapToTheSameOutputAreAPerFileError() throws {
    let folder = TemporaryFolder("collide")
    try folder.write("a/same.txt", text: "from a")
    try folder.write("b/same.txt", text: "from b")
    try folder.write("b/other.txt", text: "other")
    // Both folders' contents go to the top of the mirror, as with rsync a/ b/ out.
    let result = try SqueezeBinary.run([
      "-o", folder.url("out"), folder.url("a/"), folder.url("b/"),
    ])
    #expect(result.status == 1)
    #expect(
      result.stderrText.contains(
        "b/same.txt: output '\(folder.url("out"))/same.txt.gz' is also the output of '\(folder.url("a"))/same.txt'"
      ))
    #expect(try SystemGzip.decompress(folder.url("out/same.txt.gz")) == Array("from a".utf8))
    #expect(try SystemGzip.decompress(folder.url("out/other.txt.gz")) == Array("other".utf8))
  }

  @Test func nonRegularFilesAreSkippedAndCountedByReason() throws {
    let folder = TemporaryFolder("skips")
    try folder.write("in/real.txt", text: "real")
    try folder.write("in/old.gz", text: "not really gzip")
    symlink("real.txt", folder.url("in/link.txt"))
    mkfifo(folder.url("in/pipe"), 0o644)
    let isRoot = geteuid() == 0
    // A character device like /dev/null: makedev(1, 3).
    if isRoot { mknod(folder.url("in/null-device"), S_IFCHR | 0o644, dev_t(1 << 8 | 3)) }
    let result = try SqueezeBinary.run(["-v", folder.url("in")])
    #expect(result.status == 0, "skips are not failures: \(result.stderrText)")
    let text = result.stderrText
    #expect(text.contains("in/link.txt: skipped: symbolic link, not followed"))
    #expect(text.contains("in/pipe: skipped: named pipe"))
    #expect(text.contains("in/old.gz: skipped: already has a compressed suffix"))
    if isRoot { #expect(text.contains("in/null-device: skipped: device file")) }
    #expect(text.contains(isRoot ? "4 skipped" : "3 skipped"))
    #expect(TemporaryFolder.files(in: folder.url("in")) == ["old.gz", "real.txt", "real.txt.gz"])
  }

  @Test func noTemporaryFilesAreLeftBehind() throws {
    let folder = TemporaryFolder("leftovers")
    for index in 0..<50 {
      try folder.write("in/d\(index % 5)/f\(index)", TestData.text(2000 + index))
    }
    #expect(try SqueezeBinary.run(["-j", "4", folder.url("in")]).status == 0)
    #expect(try SqueezeBinary.run(["-o", folder.url("out"), folder.url("in/")]).status == 0)
    let everything = (try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? []
    #expect(everything.filter(TemporaryFolder.isSqueezeTemporary).isEmpty)
    // 50 beside the sources, 50 in the mirror, and the mirror's wrapped copies of the 50
    // beside the sources.
    #expect(everything.filter { $0.hasSuffix(".gz") && !$0.hasSuffix(".gz.gz") }.count == 100)
    #expect(everything.filter { $0.hasSuffix(".gz.gz") }.count == 50)
  }

  @Test(
    .tags(.system), .systemTier,
    .enabled(if: TestMachine.isRoot, "needs root to run squeeze as the user nobody"))
  func anUnreadableFileFailsAloneWhenRunUnprivileged() throws {
    let folder = TemporaryFolder("unreadable")
    let binary = try SqueezeBinary.publicCopy(in: folder)
    try folder.write("in/a.txt", text: "readable a")
    try folder.write("in/secret.txt", text: "nobody may read this")
    try folder.write("in/sub/b.txt", text: "readable b")
    chmod(folder.url("in"), 0o777)
    chmod(folder.url("in/sub"), 0o777)
    chmod(folder.url("in/secret.txt"), 0o000)
    let result = try SqueezeBinary.runAsNobody(binary, [folder.url("in")])
    #expect(result.status == 1)
    #expect(
      result.stderrText.contains(
        "squeeze: \(folder.url("in/secret.txt")): cannot open: Permission denied (errno 13)"))
    #expect(try SystemGzip.decompress(folder.url("in/a.txt.gz")) == Array("readable a".utf8))
    #expect(try SystemGzip.decompress(folder.url("in/sub/b.txt.gz")) == Array("readable b".utf8))
    #expect(!FileManager.default.fileExists(atPath: folder.url("in/secret.txt.gz")))
  }
}
