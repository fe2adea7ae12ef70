import Foundation
import Glibc
import TestSupport
import Testing

/// `-d`, `-t` and `-l` on files made by gzip, pigz and squeeze.
@Suite struct ModesTests {
  static func mtime(_ path: String) -> timespec {
    var status = stat()
    stat(path, &status)
    return status.st_mtim
  }

  static func setTime(_ path: String, seconds: Int) {
    var times = [
      timespec(tv_sec: seconds, tv_nsec: 123_456_789),
      timespec(tv_sec: seconds, tv_nsec: 123_456_789),
    ]
    utimensat(AT_FDCWD, path, &times, 0)
  }

  @Test(.tags(.system), .systemTier)
  func decompressesGzipPigzAndConcatenatedMembers() throws {
    let folder = TemporaryFolder("decompress")
    let one = TestData.text(200_000, seed: 1)
    let two = TestData.random(70_000, seed: 2)
    try folder.write("src/one.txt", one)
    try folder.write("src/two.bin", two)
    try folder.makeFolder("gz")
    try Shell.sh(
      "gzip -9 -c \(Shell.quote(folder.url("src/one.txt"))) > \(Shell.quote(folder.url("gz/by-gzip.txt.gz")))"
    )
    try Shell.sh(
      "pigz -p 2 -c \(Shell.quote(folder.url("src/one.txt"))) > \(Shell.quote(folder.url("gz/by-pigz.txt.gz")))"
    )
    try Shell.sh(
      "(gzip -c \(Shell.quote(folder.url("src/one.txt"))); gzip -c \(Shell.quote(folder.url("src/two.bin")))) > \(Shell.quote(folder.url("gz/both.bin.gz")))"
    )
    Self.setTime(folder.url("gz/by-gzip.txt.gz"), seconds: 1_500_000_000)
    chmod(folder.url("gz/by-gzip.txt.gz"), 0o640)
    let result = try SqueezeBinary.run([
      "-d", "-j", "3", "-o", folder.url("out"), folder.url("gz/"),
    ])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(try folder.read("out/by-gzip.txt") == one)
    #expect(try folder.read("out/by-pigz.txt") == one)
    #expect(try folder.read("out/both.bin") == one + two)
    // Mode and time come from the .gz file, as gzip restores them.
    var status = stat()
    stat(folder.url("out/by-gzip.txt"), &status)
    #expect(status.st_mode & 0o777 == 0o640)
    #expect(status.st_mtim.tv_sec == 1_500_000_000 && status.st_mtim.tv_nsec == 123_456_789)
    #expect(
      FileManager.default.fileExists(atPath: folder.url("gz/by-gzip.txt.gz")), "inputs are kept")
  }

  @Test func aSqueezeRoundTripRestoresBytesModeAndNanosecondTime() throws {
    let folder = TemporaryFolder("roundtrip-d")
    let bytes = TestData.text(400_000, seed: 9)
    try folder.write("in/deep/file.txt", bytes)
    chmod(folder.url("in/deep/file.txt"), 0o604)
    Self.setTime(folder.url("in/deep/file.txt"), seconds: 1_234_567_890)
    #expect(try SqueezeBinary.run(["-o", folder.url("gz"), folder.url("in/")]).status == 0)
    #expect(try SqueezeBinary.run(["-d", "-o", folder.url("back"), folder.url("gz/")]).status == 0)
    #expect(try folder.read("back/deep/file.txt") == bytes)
    var status = stat()
    stat(folder.url("back/deep/file.txt"), &status)
    #expect(status.st_mode & 0o777 == 0o604)
    #expect(status.st_mtim.tv_sec == 1_234_567_890 && status.st_mtim.tv_nsec == 123_456_789)
  }

  @Test func nameAndTimeComeFromTheHeaderWithCapitalN() throws {
    let folder = TemporaryFolder("capital-n")
    try folder.write("in/original name.txt", Array("payload".utf8))
    Self.setTime(folder.url("in/original name.txt"), seconds: 1_400_000_000)
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    try folder.makeFolder("renamed")
    try FileManager.default.moveItem(
      atPath: folder.url("in/original name.txt.gz"), toPath: folder.url("renamed/x.gz"))
    #expect(try SqueezeBinary.run(["-d", "-N", folder.url("renamed")]).status == 0)
    #expect(try folder.read("renamed/original name.txt") == Array("payload".utf8))
    #expect(Self.mtime(folder.url("renamed/original name.txt")).tv_sec == 1_400_000_000)
  }

  /// With `-N` two files collide when their headers name one file, not when their suffixes
  /// do: `x.gz` and `x.z` whose headers say `a` and `b` both restore (they were refused as
  /// both restoring to `x`), and two files whose headers both say `same` are a collision
  /// for the later one (the later was counted up to date when both had one size and time).
  @Test func withCapitalNOutputsCollideByTheNamesInTheirHeaders() throws {
    let folder = TemporaryFolder("capital-n-collide")
    for (name, text) in [("a", "one"), ("b", "two")] {
      try folder.write("made/\(name)", Array(text.utf8))
      Self.setTime(folder.url("made/\(name)"), seconds: 1_400_000_000)
    }
    #expect(try SqueezeBinary.run([folder.url("made")]).status == 0)
    try folder.makeFolder("distinct")
    try FileManager.default.copyItem(
      atPath: folder.url("made/a.gz"), toPath: folder.url("distinct/x.gz"))
    try FileManager.default.copyItem(
      atPath: folder.url("made/b.gz"), toPath: folder.url("distinct/x.z"))
    let distinct = try SqueezeBinary.run(["-d", "-N", folder.url("distinct")])
    #expect(distinct.status == 0, "\(distinct.stderrText)")
    #expect((try? folder.read("distinct/a")) == Array("one".utf8))
    #expect((try? folder.read("distinct/b")) == Array("two".utf8))

    // Two headers naming one file: the same size and header time, as two versions of one
    // file saved within a second have.
    try folder.write("v/same", Array("one".utf8))
    Self.setTime(folder.url("v/same"), seconds: 1_400_000_000)
    #expect(try SqueezeBinary.run([folder.url("v")]).status == 0)
    try folder.makeFolder("same")
    try FileManager.default.moveItem(
      atPath: folder.url("v/same.gz"), toPath: folder.url("same/one.gz"))
    try folder.write("v/same", Array("two".utf8))
    Self.setTime(folder.url("v/same"), seconds: 1_400_000_000)
    #expect(try SqueezeBinary.run([folder.url("v")]).status == 0)
    try FileManager.default.moveItem(
      atPath: folder.url("v/same.gz"), toPath: folder.url("same/two.gz"))
    let same = try SqueezeBinary.run(["-d", "-N", folder.url("same")])
    #expect(same.status == 1, "\(same.stderrText)")
    #expect(
      same.stderrText.contains(
        "squeeze: \(folder.url("same/two.gz")): output '\(folder.url("same/same"))' is also the output of '\(folder.url("same/one.gz"))'; not written"
      ), "\(same.stderrText)")
    #expect(try folder.read("same/same") == Array("one".utf8))
  }

  /// `-d -N` on two files where one's header names the other (`a.gz` says `b.gz`): a
  /// collision within the run, named as one (without `-f` it read as if an earlier run's
  /// output were in the way; with `-f` the output replaced `b.gz`, a file the run had still
  /// to read). `b.gz` restores; `a.gz` fails; both `.gz` files stay. The same by suffix:
  /// `b.gz.gz` listed with `b.gz`.
  @Test(arguments: [false, true])
  func aRestoreWhoseOutputIsAnotherInputIsACollisionWithinTheRun(force: Bool) throws {
    let folder = TemporaryFolder("output-is-input")
    // a.gz's header names b.gz (-c takes any name); b.gz's names b.
    try folder.write("made/b.gz", Array("one".utf8))
    try folder.write("made/b", Array("two".utf8))
    try folder.write("in/a.gz", try SqueezeBinary.run(["-c", folder.url("made/b.gz")]).stdout)
    try folder.write("in/b.gz", try SqueezeBinary.run(["-c", folder.url("made/b")]).stdout)
    let first = try folder.read("in/a.gz")
    let second = try folder.read("in/b.gz")
    let run = try SqueezeBinary.run(
      ["-d", "-N"] + (force ? ["-f"] : []) + [folder.url("in/a.gz"), folder.url("in/b.gz")])
    #expect(run.status == 1, "\(run.stderrText)")
    #expect(
      run.stderrText
        == "squeeze: \(folder.url("in/a.gz")): output '\(folder.url("in/b.gz"))' is another file this run restores; not written (it would replace it)\n"
    )
    #expect(try folder.read("in/a.gz") == first)
    #expect(try folder.read("in/b.gz") == second)
    #expect(try folder.read("in/b") == Array("two".utf8))
    try FileManager.default.moveItem(
      atPath: folder.url("in/a.gz"), toPath: folder.url("in/b.gz.gz"))
    let bySuffix = try SqueezeBinary.run(
      ["-d", "-f", folder.url("in/b.gz.gz"), folder.url("in/b.gz")])
    #expect(bySuffix.status == 1, "\(bySuffix.stderrText)")
    #expect(
      bySuffix.stderrText.contains("another file this run restores"), "\(bySuffix.stderrText)")
    #expect(try folder.read("in/b.gz") == second)
  }

  /// A restore never replaces the `.gz` file it reads, not even with `-f`: a header that
  /// names its own file (`gzip -d -N -f` restores it there, then removes its input: both
  /// gone), the same name reached through `-o` with `..` or a linked folder, a hard link of
  /// it or a symbolic link to it at the output path. Each is refused by name, status 1,
  /// the `.gz` file untouched; the dry run says the same.
  @Test func aRestoreNeverReplacesItsOwnSource() throws {
    let folder = TemporaryFolder("own-source")
    // A file named a.gz compressed (-c takes any name): a header that names a.gz.
    try folder.write("made/a.gz", Array("payload".utf8))
    let compressed = try SqueezeBinary.run(["-c", folder.url("made/a.gz")])
    #expect(compressed.status == 0)
    try folder.makeFolder("in/sub")
    try folder.write("in/a.gz", compressed.stdout)
    let original = try folder.read("in/a.gz")
    try FileManager.default.createSymbolicLink(
      atPath: folder.url("here"), withDestinationPath: folder.url("in"))
    let ways: [(arguments: [String], output: String)] = [
      (["-d", "-N", "-f", folder.url("in/a.gz")], folder.url("in/a.gz")),
      (["-d", "-N", folder.url("in/a.gz")], folder.url("in/a.gz")),
      (["-d", "-N", "-f", "--dry-run", folder.url("in/a.gz")], folder.url("in/a.gz")),
      (
        ["-d", "-N", "-f", "-o", folder.url("in/sub/.."), folder.url("in/a.gz")],
        folder.url("in/sub/../a.gz")
      ),
      (
        ["-d", "-N", "-f", "-o", folder.url("here"), folder.url("in/a.gz")], folder.url("here/a.gz")
      ),
    ]
    for way in ways {
      let run = try SqueezeBinary.run(way.arguments)
      #expect(run.status == 1, "\(way.arguments): \(run.stderrText)")
      #expect(
        (run.stderrText + run.stdoutText).contains(
          "\(folder.url("in/a.gz")): its output '\(way.output)' is this file itself; not restored, even with --force"
        ), "\(way.arguments): \(run.stderrText)\(run.stdoutText)")
      #expect(try folder.read("in/a.gz") == original, "\(way.arguments)")
    }
    // A hard link of it, and a symbolic link to it, where it restores (-N and by suffix).
    try FileManager.default.moveItem(atPath: folder.url("in/a.gz"), toPath: folder.url("in/b.gz"))
    try FileManager.default.linkItem(atPath: folder.url("in/b.gz"), toPath: folder.url("in/a.gz"))
    try FileManager.default.linkItem(atPath: folder.url("in/b.gz"), toPath: folder.url("in/b"))
    for arguments in [["-d", "-N", "-f"], ["-d", "-f"]] {
      let run = try SqueezeBinary.run(arguments + [folder.url("in/b.gz")])
      #expect(run.status == 1, "\(arguments): \(run.stderrText)")
      #expect(run.stderrText.contains("is this file itself"), "\(run.stderrText)")
      #expect(try folder.read("in/b.gz") == original)
    }
    try FileManager.default.removeItem(atPath: folder.url("in/a.gz"))
    try FileManager.default.createSymbolicLink(
      atPath: folder.url("in/a.gz"), withDestinationPath: "b.gz")
    let linked = try SqueezeBinary.run(["-d", "-N", "-f", folder.url("in/b.gz")])
    #expect(linked.status == 1, "\(linked.stderrText)")
    #expect(
      linked.stderrText.contains(
        "its output '\(folder.url("in/a.gz"))' is this file itself"), "\(linked.stderrText)")
    #expect(try folder.read("in/b.gz") == original)
    #expect(
      (try? FileManager.default.destinationOfSymbolicLink(atPath: folder.url("in/a.gz")))
        == "b.gz")
  }

  /// `-d -N --dry-run` plans the restore the run makes: under the name in the header, and
  /// failing where the run fails (a file already there, a header that cannot be read).
  @Test func aDryRunWithCapitalNNamesTheOutputFromTheHeader() throws {
    let folder = TemporaryFolder("capital-n-dry")
    try folder.write("in/original.txt", Array("payload".utf8))
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    try folder.makeFolder("renamed")
    try FileManager.default.moveItem(
      atPath: folder.url("in/original.txt.gz"), toPath: folder.url("renamed/x.gz"))
    try folder.write("renamed/bad.gz", Array("not gzip".utf8))
    let planned = try SqueezeBinary.run(["-d", "-N", "--dry-run", folder.url("renamed")])
    #expect(planned.status == 1, "\(planned.stderrText)")
    #expect(
      planned.stdoutText.contains(
        "would decompress: \(folder.url("renamed/x.gz")) → \(folder.url("renamed/original.txt"))\n"
      ), "\(planned.stdoutText)")
    #expect(
      planned.stdoutText.contains("would fail: \(folder.url("renamed/bad.gz")): "),
      "\(planned.stdoutText)")
    #expect(TemporaryFolder.files(in: folder.url("renamed")).sorted() == ["bad.gz", "x.gz"])
    // With the header's name taken, the dry run fails it as the run does.
    try folder.write("renamed/original.txt", Array("mine".utf8))
    let taken = try SqueezeBinary.run(["-d", "-N", "--dry-run", folder.url("renamed/x.gz")])
    #expect(taken.status == 1)
    #expect(
      taken.stdoutText.contains(
        "would fail: \(folder.url("renamed/x.gz")): '\(folder.url("renamed/original.txt"))' already exists"
      ), "\(taken.stdoutText)")
    let run = try SqueezeBinary.run(["-d", "-N", folder.url("renamed/x.gz")])
    #expect(run.status == 1)
    #expect(try folder.read("renamed/original.txt") == Array("mine".utf8))
  }

  @Test func corruptOrTruncatedInputFailsByNameAndLeavesNoOutput() throws {
    let folder = TemporaryFolder("corrupt")
    let good = try Shell.run("/bin/gzip", ["-c"], input: TestData.text(100_000, seed: 4)).stdout
    try folder.write("gz/good.txt.gz", good)
    try folder.write("gz/truncated.txt.gz", Array(good.prefix(good.count / 2)))
    var flipped = good
    flipped[good.count / 2] ^= 0x40
    try folder.write("gz/flipped.txt.gz", flipped)
    try folder.write("gz/notgzip.txt.gz", Array("plain text".utf8))
    let result = try SqueezeBinary.run(["-d", folder.url("gz")])
    #expect(result.status == 1)
    #expect(result.stderrText.contains("truncated.txt.gz: unexpected end of file at byte"))
    #expect(result.stderrText.contains("notgzip.txt.gz: not in gzip format (bad magic number)"))
    #expect(result.stderrText.contains("flipped.txt.gz: "))
    #expect(
      TemporaryFolder.files(in: folder.url("gz")).sorted() == [
        "flipped.txt.gz", "good.txt", "good.txt.gz", "notgzip.txt.gz", "truncated.txt.gz",
      ])
  }

  @Test func decompressingNeverOverwritesWithoutForce() throws {
    let folder = TemporaryFolder("no-overwrite")
    try folder.write("in/a.txt", Array("new".utf8))
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    try folder.write("in/a.txt", Array("precious".utf8))
    let refused = try SqueezeBinary.run(["-d", folder.url("in/a.txt.gz")])
    #expect(refused.status == 1)
    #expect(
      refused.stderrText.contains(
        "'\(folder.url("in/a.txt"))' already exists; not overwritten (use --force)"))
    #expect(try folder.read("in/a.txt") == Array("precious".utf8))
    #expect(try SqueezeBinary.run(["-d", "-f", folder.url("in/a.txt.gz")]).status == 0)
    #expect(try folder.read("in/a.txt") == Array("new".utf8))
  }

  /// A symbolic link where a restore beside the sources goes is the user's entry, as it is
  /// where compression's output goes: left alone with an error unless `-f`, which replaces
  /// the link itself (never its target), as `gzip -d` refuses it. Named directly and found
  /// by walking the folder alike, and with `-N` (the name from the header).
  @Test(arguments: [(false, false), (true, false), (false, true)])
  func decompressingLeavesALinkAtTheOutputAloneWithoutForce(walked: Bool, headerName: Bool)
    throws
  {
    let folder = TemporaryFolder("restore-link")
    try folder.write("in/a.txt", Array("new".utf8))
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    try FileManager.default.removeItem(atPath: folder.url("in/a.txt"))
    try folder.write("in/target", Array("precious".utf8))
    #expect(symlink("target", folder.url("in/a.txt")) == 0)
    let argument = walked ? folder.url("in") : folder.url("in/a.txt.gz")
    let mode = headerName ? ["-d", "-N"] : ["-d"]
    let refused = try SqueezeBinary.run(mode + [argument])
    #expect(refused.status == 1, "\(refused.stderrText)")
    #expect(
      refused.stderrText.contains(
        "'\(folder.url("in/a.txt"))' already exists; not overwritten (use --force)"),
      "\(refused.stderrText)")
    var status = stat()
    #expect(lstat(folder.url("in/a.txt"), &status) == 0 && status.st_mode & S_IFMT == S_IFLNK)
    #expect(try folder.read("in/target") == Array("precious".utf8))
    let forced = try SqueezeBinary.run(mode + ["-f", argument])
    #expect(forced.status == 0, "\(forced.stderrText)")
    #expect(lstat(folder.url("in/a.txt"), &status) == 0 && status.st_mode & S_IFMT == S_IFREG)
    #expect(try folder.read("in/a.txt") == Array("new".utf8))
    #expect(try folder.read("in/target") == Array("precious".utf8), "not written through")
  }

  @Test func testModeNamesEachBadFileAndWritesNothing() throws {
    let folder = TemporaryFolder("test-mode")
    let data = TestData.text(300_000, seed: 5)
    let good = try Shell.run("/bin/gzip", ["-c"], input: data).stdout
    try folder.write("gz/good.gz", good)
    try DamagedGzip.writeCopies(of: good, in: folder, under: "gz")
    var flipped = good
    flipped[good.count / 3] ^= 0x10
    try folder.write("gz/flipped.gz", flipped)
    try folder.write("gz/padded.gz", good + [0, 0, 0, 0])
    let before = TemporaryFolder.files(in: folder.url("gz"))
    let result = try SqueezeBinary.run(["-t", folder.url("gz")])
    #expect(result.status == 1)
    let text = result.stderrText
    #expect(text.contains("truncated.gz: unexpected end of file at byte"))
    #expect(text.contains("flipped.gz: "))
    #expect(text.contains("crc.gz: CRC-32 mismatch: trailer says"))
    #expect(text.contains("size.gz: length mismatch: ISIZE says"))
    #expect(
      text.contains("garbage.gz: trailing garbage after the last gzip member at byte \(good.count)")
    )
    #expect(!text.contains("good.gz:"))
    #expect(!text.contains("padded.gz:"), "zero padding is accepted, as gzip does")
    #expect(TemporaryFolder.files(in: folder.url("gz")) == before, "-t writes nothing")
    #expect(
      try SqueezeBinary.run(["-t", folder.url("gz/good.gz"), folder.url("gz/padded.gz")]).status
        == 0)
  }

  @Test func listPrintsGzipsTableAndTotals() throws {
    let folder = TemporaryFolder("list")
    try folder.write("in/a.txt", Array("hello\n".utf8))
    try folder.write("in/b.txt", TestData.text(10_000, seed: 6))
    // The zlib engine, whose 6-byte output is a known 32 bytes with the header.
    #expect(try SqueezeBinary.run(["--engine", "zlib", folder.url("in")]).status == 0)
    let result = try SqueezeBinary.run(["-l", folder.url("in")])
    #expect(result.status == 0)
    let lines = result.stdoutText.split(separator: "\n").map(String.init)
    #expect(lines[0] == "         compressed        uncompressed  ratio uncompressed_name")
    #expect(lines[1] == "                 32                   6 -33.3% \(folder.url("in/a.txt"))")
    #expect(lines[2].hasSuffix("% \(folder.url("in/b.txt"))") && lines[2].contains(" 10000 "))
    #expect(lines[3].hasSuffix("% (totals)"))
    let json = try SqueezeBinary.run(["-l", "--json", folder.url("in")])
    let object = try #require(
      JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
    let files = try #require(object["files"] as? [[String: Any]])
    #expect(files.count == 2)
    #expect((files[0]["uncompressed"] as? NSNumber)?.intValue == 6)
    #expect(((object["totals"] as? [String: Any])?["compressed"] as? NSNumber)?.intValue ?? 0 > 32)
  }
}

/// What the first new-user tryout found in the modes, kept as tests.
@Suite struct ModesEdgeTests {
  @Test func listDecodesWholeFilesLikeGzip112() throws {
    let folder = TemporaryFolder("list-exact")
    let one = try Shell.run("/bin/gzip", ["-c"], input: Array("one\n".utf8)).stdout
    let two = try Shell.run("/bin/gzip", ["-c"], input: Array("second member\n".utf8)).stdout
    try folder.write("both.gz", one + two)
    let listed = try SqueezeBinary.run(["-l", folder.url("both.gz")])
    #expect(listed.status == 0)
    #expect(
      listed.stdoutText.split(separator: "\n")[1].contains(" 18 "),
      "both members counted: \(listed.stdoutText)")
    let long = try Shell.run("/bin/gzip", ["-c"], input: TestData.text(100_000, seed: 1)).stdout
    try folder.write("cut.gz", Array(long.prefix(20_000)))
    let cut = try SqueezeBinary.run(["-l", folder.url("cut.gz")])
    #expect(cut.status == 1)
    #expect(cut.stderrText.contains("cut.gz: unexpected end of file"))
  }

  /// `-t` and `-l` read what an argument names, as gzip -t and -l (and squeeze -dc) do:
  /// bash's `<(cmd)` (`/dev/fd/63`, a link to a pipe) and a symbolic link to a `.gz` file.
  /// A link met while walking a folder is still not followed, and `-d` still refuses a
  /// link argument.
  @Test func testAndListReadALinkOrPipeNamedAsAnArgument() throws {
    let folder = TemporaryFolder("named-links")
    try folder.write("in/a.txt", Array("payload".utf8))
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    try folder.makeFolder("walk")
    symlink(folder.url("in/a.txt.gz"), folder.url("walk/l.gz"))
    symlink(folder.url("in/a.txt.gz"), folder.url("l.gz"))
    try folder.write("bad.gz", Array("not gzip".utf8))
    func bash(_ script: String) throws -> Shell.Result {
      try Shell.run(
        "/bin/bash",
        ["-c", script, "bash", SqueezeBinary.path, folder.url("in/a.txt.gz"), folder.url("bad.gz")])
    }
    let tested = try bash(#""$1" -tv <(cat "$2")"#)
    #expect(tested.status == 0, "\(tested.stderrText)")
    #expect(tested.stderrText.hasPrefix("/dev/fd/"), "\(tested.stderrText)")
    #expect(tested.stderrText.contains(": OK\n"), "\(tested.stderrText)")
    let listed = try bash(#""$1" -l <(cat "$2")"#)
    #expect(listed.status == 0, "\(listed.stderrText)")
    #expect(listed.stdoutText.contains("                  7 "), "\(listed.stdoutText)")
    #expect(listed.stdoutText.contains("% /dev/fd/"), "\(listed.stdoutText)")
    let bad = try bash(#""$1" -t <(cat "$3")"#)
    #expect(bad.status == 1)
    #expect(bad.stderrText.contains(": not in gzip format"), "\(bad.stderrText)")
    let link = try SqueezeBinary.run(["-tv", folder.url("l.gz")])
    #expect(link.status == 0, "\(link.stderrText)")
    #expect(link.stderrText.contains("\(folder.url("l.gz")): OK"), "\(link.stderrText)")
    let linkListed = try SqueezeBinary.run(["-l", folder.url("l.gz")])
    #expect(linkListed.status == 0, "\(linkListed.stderrText)")
    #expect(linkListed.stdoutText.hasSuffix("% \(folder.url("l"))\n"), "\(linkListed.stdoutText)")
    // Walking: the link inside is not followed, so nothing is tested.
    let walked = try SqueezeBinary.run(["-tv", folder.url("walk")])
    #expect(walked.status == 0)
    #expect(!walked.stderrText.contains("OK"), "\(walked.stderrText)")
    let restored = try SqueezeBinary.run(["-d", "-k", folder.url("l.gz")])
    #expect(restored.status == 1)
    #expect(restored.stderrText.contains("is a symbolic link, not followed"))
  }

  @Test func quietListPrintsOnlyTheRowsAsGzipDoes() throws {
    let folder = TemporaryFolder("list-quiet")
    try folder.write("in/a.txt", Array("hello\n".utf8))
    try folder.write("in/b.txt", TestData.text(10_000, seed: 6))
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    let full = try SqueezeBinary.run(["-l", folder.url("in")])
    let quiet = try SqueezeBinary.run(["-lq", folder.url("in")])
    #expect(quiet.status == 0)
    let rows = full.stdoutText.split(separator: "\n").dropFirst().dropLast()
    #expect(rows.count == 2)
    #expect(quiet.stdoutText == rows.joined(separator: "\n") + "\n", "\(quiet.stdoutText)")
    let gzip = try Shell.run(
      "/bin/gzip", ["-lq", folder.url("in/a.txt.gz"), folder.url("in/b.txt.gz")])
    #expect(
      quiet.stdoutText.split(separator: "\n").count == gzip.stdoutText.split(separator: "\n").count,
      "gzip -lq: \(gzip.stdoutText)")
  }

  /// A name with a bidirectional control (U+202E makes `evil\u{202E}txt.exe` show as
  /// `evilexe.txt`) reaches no output as it is: `-v`'s line, `-l`'s row, `-t -v`'s line, a
  /// failure's message and `--json` show it escaped, as control characters are.
  @Test func bidirectionalControlsInNamesAreEscapedInEveryOutput() throws {
    let folder = TemporaryFolder("bidi-names")
    try folder.write("in/evil\u{202E}txt.exe", Array("data".utf8))
    try folder.write("in/bad\u{2067}.gz", Array("not gzip".utf8))
    let shown = "evil\\xe2\\x80\\xaetxt.exe"
    let runs: [(arguments: [String], shows: String)] = [
      (["-v", folder.url("in")], shown),
      (["-l", folder.url("in/evil\u{202E}txt.exe.gz")], shown),
      (["-t", "-v", folder.url("in/evil\u{202E}txt.exe.gz")], shown + ".gz: OK"),
      (["-t", folder.url("in/bad\u{2067}.gz")], "bad\\xe2\\x81\\xa7.gz: "),
      (["--json", "-f", "-v", folder.url("in")], shown),
    ]
    for run in runs {
      let result = try SqueezeBinary.run(run.arguments)
      let output = result.stdoutText + result.stderrText
      #expect(output.contains(run.shows), "\(run.arguments): \(output)")
      #expect(
        !output.unicodeScalars.contains { [0x202E, 0x2067].contains($0.value) },
        "\(run.arguments): \(output)")
    }
  }

  @Test func aFileNamedOnlyASuffixIsSkippedByARestoreAsGzipDoes() throws {
    let folder = TemporaryFolder("suffix-only")
    let member = try Shell.run("/bin/gzip", ["-c"], input: Array("a\n".utf8)).stdout
    try folder.write("gz/.gz", member)
    try folder.write("gz/x.gz.gz", member)
    let walked = try SqueezeBinary.run(["-d", "--json", folder.url("gz")])
    #expect(walked.status == 0, "\(walked.stderrText)")
    let object = try #require(
      JSONSerialization.jsonObject(with: Data(walked.stdout)) as? [String: Any])
    let files = try #require(object["files"] as? [String: Any])
    #expect((files["decompressed"] as? NSNumber)?.intValue == 1)
    let skipped = (files["skipped"] as? [String: Any])?["byReason"] as? [String: Any]
    #expect((skipped?["notCompressed"] as? NSNumber)?.intValue == 1)
    #expect(try folder.read("gz/x.gz") == Array("a\n".utf8), "x.gz.gz restores to x.gz")
    let named = try SqueezeBinary.run(["-d", folder.url("gz/.gz")])
    #expect(named.status == 0)
    #expect(named.stderrText.contains(".gz: unknown suffix; ignored"), "\(named.stderrText)")
    #expect(TemporaryFolder.files(in: folder.url("gz")).count == 3, "nothing written for .gz")
  }

  @Test func resultsThatCannotBeWrittenAreAFailure() throws {
    let folder = TemporaryFolder("dev-full")
    try folder.write("in/a.txt", Array("a".utf8))
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    let list = try Shell.sh(
      "\(Shell.quote(SqueezeBinary.path)) -l \(Shell.quote(folder.url("in"))) > /dev/full")
    // /dev/full fails every write with ENOSPC, as a full disk does: status 74.
    #expect(list.status == 74)
    #expect(
      list.stderrText
        == "squeeze: /dev: no space left on device: cannot write the list to standard output: No space left on device (errno 28)\n"
    )
    let json = try Shell.sh(
      "\(Shell.quote(SqueezeBinary.path)) --json -o \(Shell.quote(folder.url("out"))) \(Shell.quote(folder.url("in/"))) > /dev/full"
    )
    #expect(json.status == 74)
    #expect(json.stderrText.contains("cannot write the --json summary to standard output"))
  }

  @Test func streamsBehaveLikeGzipsAndZcats() throws {
    let folder = TemporaryFolder("streams-like-gzip")
    try folder.write("plain.txt", Array("not compressed\n".utf8))
    let passThrough = try SqueezeBinary.run(["-dcf", folder.url("plain.txt")])
    #expect(passThrough.status == 0)
    #expect(
      passThrough.stdout == Array("not compressed\n".utf8),
      "-dcf passes other data through, as zcat -f")
    try folder.write("x.gz", try Shell.run("/bin/gzip", ["-c"], input: Array("x".utf8)).stdout)
    let twice = try SqueezeBinary.run(["-c", folder.url("x.gz")])
    #expect(
      try Shell.run("/bin/gzip", ["-dc"], input: twice.stdout).stdout == (try folder.read("x.gz")),
      "-c compresses a .gz file, as gzip -c")
    #expect(
      try SqueezeBinary.run(["-r", "-o", folder.url("out"), folder.url("plain.txt")]).status == 0,
      "-r is accepted")
  }

  @Test func testChecksFilesThatWouldRestoreToOneName() throws {
    let folder = TemporaryFolder("t-collide")
    let member = try Shell.run("/bin/gzip", ["-c"], input: Array("x\n".utf8)).stdout
    try folder.write("in/x.gz", member)
    try folder.write("in/x.GZ", member)
    let tested = try SqueezeBinary.run(["-t", folder.url("in")])
    #expect(tested.status == 0, "-t writes nothing, so both are tested: \(tested.stderrText)")
    let restored = try SqueezeBinary.run(["-d", folder.url("in")])
    #expect(restored.status == 1)
    #expect(
      restored.stderrText.contains("is also the output of")
        && restored.stderrText.contains("; not written"))
  }

  @Test func dcfPassesPipedDataThroughAndDecodesPipedGzip() throws {
    // Through a pipe, as `cmd | squeeze -dcf`: the head cannot be peeked, only read.
    let plain = TestData.text(200_000, seed: 5)
    let passed = try SqueezeBinary.run(["-dcf"], input: plain)
    #expect(passed.status == 0, "\(passed.stderrText)")
    #expect(passed.stdout == plain, "-dcf passes piped data that is not gzip through")
    let one = try SqueezeBinary.run(["-dcf"], input: Array("x".utf8))
    #expect(one.status == 0 && one.stdout == Array("x".utf8))
    let empty = try SqueezeBinary.run(["-dcf"], input: [])
    #expect(empty.status == 0 && empty.stdout.isEmpty, "empty input is empty output, as gzip -dcf")
    let compressed = try Shell.run("/bin/gzip", ["-c"], input: plain).stdout
    let decoded = try SqueezeBinary.run(["-dcf"], input: compressed + compressed)
    #expect(decoded.status == 0, "\(decoded.stderrText)")
    #expect(decoded.stdout == plain + plain, "piped gzip members are decoded")
    let strict = try SqueezeBinary.run(["-dc"], input: [])
    #expect(strict.status == 1, "without -f, empty input is an error, as gzip -dc")
    // Data after the last member is copied with -f, as gzip -dcf does; without -f it is
    // trailing garbage.
    let trailed = compressed + Array("after the member\n".utf8)
    let copied = try SqueezeBinary.run(["-dcf"], input: trailed)
    #expect(copied.status == 0)
    #expect(copied.stdout == (try Shell.run("/bin/gzip", ["-dcf"], input: trailed).stdout))
    #expect(copied.stdout == plain + Array("after the member\n".utf8))
    let refused = try SqueezeBinary.run(["-dc"], input: trailed)
    #expect(refused.status == 1)
    #expect(refused.stderrText.contains("trailing garbage after the last gzip member"))
  }

  @Test func aPseudoFileCompressesThroughTheFolderPathToo() throws {
    let folder = TemporaryFolder("proc")
    let result = try SqueezeBinary.run(["-o", folder.url("out"), "/proc/self/status"])
    #expect(result.status == 0, "\(result.stderrText)")
    let text = String(
      decoding: try SystemGzip.decompress(folder.url("out/status.gz")), as: UTF8.self)
    #expect(text.hasPrefix("Name:"))
  }

  @Test func theOutputFolderAsTheInputIsAFailure() throws {
    let folder = TemporaryFolder("same-folder")
    try folder.write("d/a", Array("a".utf8))
    let result = try SqueezeBinary.run(["-o", folder.url("d"), folder.url("d")])
    #expect(result.status == 1)
    #expect(result.stderrText.contains("is the output folder (-o); nothing in it is compressed"))
  }

  @Test func aNamedPipeOrDeviceArgumentIsIgnoredWithAWarning() throws {
    let folder = TemporaryFolder("fifo-arg")
    mkfifo(folder.url("pipe"), 0o644)
    let result = try SqueezeBinary.run([folder.url("pipe")])
    #expect(result.status == 0)
    #expect(
      result.stderrText.contains("pipe: is a named pipe, not a regular file or folder; ignored"))
  }

  @Test func whatSitsAtTheOutputPathIsNamedClearly() throws {
    let folder = TemporaryFolder("in-the-way")
    try folder.write("in/y", Array("y".utf8))
    try folder.makeFolder("in/y.gz")
    let folderInTheWay = try SqueezeBinary.run(["-f", folder.url("in")])
    #expect(folderInTheWay.status == 1)
    #expect(
      folderInTheWay.stderrText.contains("'\(folder.url("in/y.gz"))' is a folder; not replaced"))
    try folder.write("src/sub/q", Array("q".utf8))
    try folder.makeFolder("elsewhere")
    try folder.makeFolder("out")
    symlink(folder.url("elsewhere"), folder.url("out/sub"))
    // In a mirror a link where a folder goes is replaced by the folder (the source changed
    // kind), never written through.
    let linked = try SqueezeBinary.run(["-o", folder.url("out"), folder.url("src/")])
    #expect(linked.status == 0, "\(linked.stderrText)")
    var status = stat()
    #expect(lstat(folder.url("out/sub"), &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
    #expect(try SystemGzip.decompress(folder.url("out/sub/q.gz")) == Array("q".utf8))
    #expect(
      TemporaryFolder.files(in: folder.url("elsewhere")).isEmpty, "nothing written through the link"
    )
  }
}
