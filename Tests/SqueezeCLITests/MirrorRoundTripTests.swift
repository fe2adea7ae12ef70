import Foundation
import Glibc
import TestSupport
import Testing

/// A mirror is a backup (issue 11): `squeeze -d -o R M/` after `squeeze -o M S/` gives S back
/// entry by entry, arguments map as rsync's, re-runs change nothing.
@Suite(.serialized) struct MirrorRoundTripTests {
  /// Runs a Python script in `folder` (raw names, FIFOs, nanosecond times, hard links).
  static func python(_ script: String, in folder: TemporaryFolder) throws {
    let result = try Shell.run(
      "/usr/bin/env", ["python3", "-c", script], currentDirectory: folder.path)
    try #require(result.status == 0, "\(result.stderrText)")
  }

  /// The JSON summary of a run.
  static func json(_ result: Shell.Result) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
  }

  /// `files.<key>` of a JSON summary.
  static func count(_ summary: [String: Any], _ key: String) -> Int? {
    ((summary["files"] as? [String: Any])?[key] as? NSNumber)?.intValue
  }

  /// A tree holding every kind of entry a mirror must give back, and a FIFO it must skip.
  static let everyKind = """
    import gzip, os, random
    rng = random.Random(11)
    os.makedirs('S/sub/deeper'); os.makedirs('S/empty'); os.makedirs('S/private')
    open('S/regular.txt', 'wb').write(b'a line of text\\n' * 500)
    open('S/empty.txt', 'wb').close()
    open('S/random.bin', 'wb').write(rng.randbytes(300000))
    open('S/data.gz', 'wb').write(gzip.compress(b'compressed already\\n' * 1000, mtime=0))
    open('S/backup.tgz', 'wb').write(gzip.compress(rng.randbytes(5000), mtime=0))
    open('S/sub/deeper/leaf.txt', 'wb').write(b'leaf\\n')
    os.symlink('regular.txt', 'S/link-to-file')
    os.symlink('sub', 'S/link-to-folder')
    os.symlink('no/such/thing', 'S/dangling')
    os.symlink('/etc/passwd', 'S/absolute')
    os.symlink('../..', 'S/sub/up')
    os.link('S/regular.txt', 'S/sub/hard-twin')
    open(b'S/not-utf8-\\xff\\xfe.txt', 'wb').write(b'raw name\\n')
    os.makedirs(b'S/folder-\\xc3\\x28')
    open(b'S/folder-\\xc3\\x28/inside', 'wb').write(b'in a raw folder\\n')
    open('S/private/secret', 'wb').write(b'secret\\n')
    os.mkfifo('S/pipe')
    os.chmod('S/random.bin', 0o640)
    os.chmod('S/sub/deeper/leaf.txt', 0o755)
    os.utime('S/regular.txt', ns=(1_500_000_000_123_456_789, 1_500_000_000_123_456_789))
    os.utime('S/link-to-file', ns=(1_400_000_000_000_000_007, 1_400_000_000_000_000_007), follow_symlinks=False)
    if os.geteuid() == 0:
        os.chown('S/random.bin', 1234, 5678)
        os.chown('S/dangling', 4321, 8765, follow_symlinks=False)
        os.chown('S/sub', 2222, 3333)
    os.chmod('S/private', 0o700)
    os.utime('S/private', ns=(1_000_000_000_000_000_001, 1_000_000_000_000_000_001))
    os.utime('S/sub/deeper', ns=(1_200_000_000_000_000_002, 1_200_000_000_000_000_002))
    os.utime('S/sub', ns=(1_300_000_000_000_000_003, 1_300_000_000_000_000_003))
    os.utime('S/empty', ns=(1_100_000_000_000_000_004, 1_100_000_000_000_000_004))
    os.utime('S', ns=(1_600_000_000_000_000_005, 1_600_000_000_000_000_005))
    """

  @Test func aTreeOfEveryKindRoundTripsEntryByEntryAndAgainChangesNothing() throws {
    let folder = TemporaryFolder("every-kind")
    try Self.python(Self.everyKind, in: folder)
    let source = TreeSnapshot(folder.url("S"))
    let compressed = try SqueezeBinary.run(["--json", "-o", folder.url("M"), folder.url("S/")])
    #expect(compressed.status == 0, "\(compressed.stderrText)")
    let summary = try Self.json(compressed)
    let skipped = (summary["files"] as? [String: Any])?["skipped"] as? [String: Any]
    #expect((skipped?["byReason"] as? [String: Any])?["fifo"] as? NSNumber == 1, "\(summary)")
    #expect(Self.count(summary, "hardLinked") == 1)
    // The system's gzip reads the mirror: a compressed source is wrapped, not recompressed.
    #expect(
      try SystemGzip.decompress(folder.url("M/data.gz.gz")) == (try folder.read("S/data.gz")))
    #expect(
      try SystemGzip.decompress(folder.url("M/regular.txt.gz"))
        == (try folder.read("S/regular.txt")))
    let wrapped = try FileManager.default.attributesOfItem(atPath: folder.url("M/backup.tgz.gz"))
    let original = try FileManager.default.attributesOfItem(atPath: folder.url("S/backup.tgz"))
    #expect(
      (wrapped[.size] as? Int ?? 0) <= (original[.size] as? Int ?? 0) + 5 + 40,
      "stored blocks: the size plus framing")

    let restored = try SqueezeBinary.run(["-d", "-o", folder.url("R"), folder.url("M/")])
    #expect(restored.status == 0, "\(restored.stderrText)")
    let back = TreeSnapshot(folder.url("R"))
    #expect(
      source.differences(from: back, ignoringKinds: ["other"]).isEmpty,
      "\(source.differences(from: back, ignoringKinds: ["other"]).joined(separator: "\n"))")
    #expect(back.entries[Array("pipe".utf8)] == nil, "a FIFO is a skip, not restored")
    let diff = try Shell.run(
      "/usr/bin/diff", ["-r", "--no-dereference", folder.url("S"), folder.url("R")])
    #expect(diff.stdoutText == "Only in \(folder.url("S")): pipe\n", "\(diff.stdoutText)")

    // The same restore, and the same mirror run, again: nothing changes.
    let mirror = TreeSnapshot(folder.url("M"))
    #expect(try SqueezeBinary.run(["-d", "-o", folder.url("R"), folder.url("M/")]).status == 0)
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    #expect(TreeSnapshot(folder.url("R")).identities == back.identities)
    #expect(TreeSnapshot(folder.url("M")).identities == mirror.identities)
  }

  @Test func dashDStripsExactlyOneLayer() throws {
    let folder = TemporaryFolder("one-layer")
    try folder.makeFolder("S")
    _ = try Shell.sh("printf 'twice\\n' | gzip -n | gzip -n > \(Shell.quote(folder.url("S/x.gz")))")
    let original = try folder.read("S/x.gz")
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    #expect(try SqueezeBinary.run(["-d", "-o", folder.url("R"), folder.url("M/")]).status == 0)
    #expect(try folder.read("R/x.gz") == original, "one layer off: the file as it was")
    #expect(TemporaryFolder.files(in: folder.url("R")) == ["x.gz"])
  }

  @Test func removeWithOutputAlsoRemovesAWrappedCompressedSourceAndMarksTheMirror() throws {
    let folder = TemporaryFolder("rm-wrapped")
    try folder.write("S/log.1.gz", TestData.random(3000))
    try folder.write("S/log.2", TestData.text(3000))
    let result = try SqueezeBinary.run(["--rm", "-o", folder.url("M"), folder.url("S/")])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(TemporaryFolder.files(in: folder.url("S")).isEmpty)
    #expect(try SystemGzip.decompress(folder.url("M/log.1.gz.gz")) == TestData.random(3000))
    #expect(FileManager.default.fileExists(atPath: folder.url("M/.squeeze-archive")))
    // In place, compressed names are still skipped as gzip skips them.
    try folder.write("T/other.gz", TestData.random(100))
    let inPlace = try SqueezeBinary.run(["--json", folder.url("T")])
    #expect(Self.count(try Self.json(inPlace), "compressed") == 0)
    #expect(TemporaryFolder.files(in: folder.url("T")) == ["other.gz"])
  }

  @Test func anInPlaceReRunCountsEachFileOnce() throws {
    let folder = TemporaryFolder("once")
    for index in 0..<12 { try folder.write("in/f\(index).txt", TestData.text(500 + index)) }
    try folder.write("in/lonely.gz", TestData.random(50))
    #expect(try SqueezeBinary.run([folder.url("in")]).status == 0)
    let again = try SqueezeBinary.run(["--json", "-v", folder.url("in")])
    let summary = try Self.json(again)
    #expect(Self.count(summary, "upToDate") == 12)
    let skipped = (summary["files"] as? [String: Any])?["skipped"] as? [String: Any]
    #expect((skipped?["total"] as? NSNumber)?.intValue == 1, "only lonely.gz: \(summary)")
    #expect(again.stderrText.contains("12 up to date, 1 skipped"))
  }

  @Test func argumentsMapAsRsyncsAndTheSameNameTwiceCollides() throws {
    let folder = TemporaryFolder("mapping")
    try folder.write("a/x/one.txt", text: "a one")
    try folder.write("b/y/two.txt", text: "b two")
    try folder.write("b/x/three.txt", text: "b three")
    let apart = try SqueezeBinary.run(["-o", folder.url("M"), folder.url("a/x"), folder.url("b/y")])
    #expect(apart.status == 0, "\(apart.stderrText)")
    #expect(TemporaryFolder.files(in: folder.url("M")) == ["x/one.txt.gz", "y/two.txt.gz"])
    // `.` names contents, as a trailing slash does.
    let contents = try SqueezeBinary.run(
      ["-o", folder.url("D"), "."], currentDirectory: folder.url("a/x"))
    #expect(contents.status == 0, "\(contents.stderrText)")
    #expect(TemporaryFolder.files(in: folder.url("D")) == ["one.txt.gz"])
    // a/x and b/x both want M2/x: the later one is an error, the earlier one is done.
    let clash = try SqueezeBinary.run([
      "-o", folder.url("M2"), folder.url("a/x"), folder.url("b/x"),
    ])
    #expect(clash.status == 1)
    #expect(
      clash.stderrText.contains(
        "\(folder.url("b/x")): would be mirrored to '\(folder.url("M2"))/x'"))
    #expect(TemporaryFolder.files(in: folder.url("M2")) == ["x/one.txt.gz"])
    // A link argument without a slash is stored as a link; with one, what it leads to.
    symlink(folder.url("a/x"), folder.url("to-x"))
    #expect(try SqueezeBinary.run(["-o", folder.url("L"), folder.url("to-x")]).status == 0)
    var status = stat()
    #expect(lstat(folder.url("L/to-x"), &status) == 0 && status.st_mode & S_IFMT == S_IFLNK)
    #expect(try SqueezeBinary.run(["-o", folder.url("L2"), folder.url("to-x/")]).status == 0)
    #expect(TemporaryFolder.files(in: folder.url("L2")) == ["one.txt.gz"])
  }

  @Test func theOldLayoutGuardStopsUntilATrailingSlashOrTheNewFolder() throws {
    let folder = TemporaryFolder("guard")
    try folder.write("photos/top.jpg", TestData.random(2000))
    try folder.write("photos/album/a.jpg", TestData.random(1000, seed: 3))
    try folder.write("albums-only/trip/b.jpg", TestData.random(900, seed: 4))
    // The layout earlier versions made of `-o backup photos`: the contents at the top.
    #expect(try SqueezeBinary.run(["-o", folder.url("backup"), folder.url("photos/")]).status == 0)
    #expect(
      try SqueezeBinary.run(["-o", folder.url("backup2"), folder.url("albums-only/")]).status == 0)
    for (mirror, argument) in [("backup", "photos"), ("backup2", "albums-only")] {
      let stopped = try SqueezeBinary.run(["-o", folder.url(mirror), folder.url(argument)])
      #expect(stopped.status == 1, "\(argument)")
      #expect(stopped.stderrText.contains("trailing slash ('\(folder.url(argument))/')"))
      #expect(!FileManager.default.fileExists(atPath: folder.url("\(mirror)/\(argument)")))
    }
    #expect(try SqueezeBinary.run(["-o", folder.url("backup"), folder.url("photos/")]).status == 0)
    // A restore of that layout is guarded the same way.
    #expect(
      try SqueezeBinary.run(["-d", "-o", folder.url("R"), folder.url("backup/")]).status == 0)
    let restore = try SqueezeBinary.run(["-d", "-o", folder.url("R"), folder.url("backup")])
    #expect(restore.status == 1, "\(restore.stderrText)")
    // Creating the new folder says a second copy is wanted.
    try folder.makeFolder("backup/photos")
    #expect(try SqueezeBinary.run(["-o", folder.url("backup"), folder.url("photos")]).status == 0)
    #expect(FileManager.default.fileExists(atPath: folder.url("backup/photos/top.jpg.gz")))
  }

  @Test func aNameClashInTheMirrorNamesBothSources() throws {
    let folder = TemporaryFolder("clash")
    try folder.write("S/a", text: "file a")
    try folder.write("S/a.gz/inside.txt", text: "a folder named a.gz")
    symlink("a", folder.url("S/b.gz"))
    try folder.write("S/b", text: "file b")
    let result = try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")])
    #expect(result.status == 1)
    #expect(
      result.stderrText.contains(
        "\(folder.url("S/a")): output '\(folder.url("M"))/a.gz' is also where '\(folder.url("S/a.gz"))' is mirrored"
      ), "\(result.stderrText)")
    #expect(
      result.stderrText.contains(
        "\(folder.url("S/b")): output '\(folder.url("M"))/b.gz' is also where '\(folder.url("S/b.gz"))' is mirrored"
      ), "\(result.stderrText)")
    #expect(
      try SystemGzip.decompress(folder.url("M/a.gz/inside.txt.gz"))
        == Array("a folder named a.gz".utf8))
  }

  @Test func anEntryThatChangedKindIsReplacedOnlyWhenSafe() throws {
    let folder = TemporaryFolder("kinds")
    try folder.write("S/x", text: "x was a file")
    try folder.makeFolder("S/d.gz")  // an empty folder where d's output will go
    try folder.write("S/full.gz/keep.txt", text: "full")
    symlink("x", folder.url("S/l"))
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    // x becomes a link, l a folder, the empty folder d.gz a file d, full.gz a file full.
    unlink(folder.url("S/x"))
    symlink("elsewhere", folder.url("S/x"))
    unlink(folder.url("S/l"))
    try folder.write("S/l/now-a-folder.txt", text: "l")
    rmdir(folder.url("S/d.gz"))
    try folder.write("S/d", text: "d is a file now")
    _ = try Shell.run("/bin/rm", ["-r", folder.url("S/full.gz")])
    try folder.write("S/full", text: "full is a file now")
    let kept = try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")])
    #expect(kept.status == 1, "the non-empty folder in the way is kept and reported")
    #expect(
      kept.stderrText.contains("'\(folder.url("M/full.gz"))' is a folder that is not empty; kept"))
    var status = stat()
    #expect(lstat(folder.url("M/x"), &status) == 0 && status.st_mode & S_IFMT == S_IFLNK)
    #expect(lstat(folder.url("M/l"), &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
    #expect(try SystemGzip.decompress(folder.url("M/d.gz")) == Array("d is a file now".utf8))
    #expect(try SystemGzip.decompress(folder.url("M/full.gz/keep.txt.gz")) == Array("full".utf8))
    // --delete prunes the folder (it mirrors nothing now), then the file takes its place.
    let pruned = try SqueezeBinary.run(["--delete", "-o", folder.url("M"), folder.url("S/")])
    #expect(pruned.status == 0, "\(pruned.stderrText)")
    #expect(try SystemGzip.decompress(folder.url("M/full.gz")) == Array("full is a file now".utf8))
    #expect(!FileManager.default.fileExists(atPath: folder.url("M/x.gz")), "x's old output pruned")
    let everything = (try FileManager.default.subpathsOfDirectory(atPath: folder.url("M")))
    #expect(everything.filter(TemporaryFolder.isSqueezeTemporary).isEmpty, "\(everything)")
  }

  @Test func aRestoreReRunIsIncrementalAndRemoveNeverTrustsTheQuickCheck() throws {
    let folder = TemporaryFolder("restore-rerun")
    try folder.write("S/a.txt", TestData.text(4000))
    try folder.write("S/b.txt", TestData.text(3000, seed: 9))
    #expect(try SqueezeBinary.run(["-o", folder.url("M"), folder.url("S/")]).status == 0)
    #expect(try SqueezeBinary.run(["-d", "-o", folder.url("R"), folder.url("M/")]).status == 0)
    let again = try SqueezeBinary.run(["--json", "-d", "-o", folder.url("R"), folder.url("M/")])
    #expect(again.status == 0, "\(again.stderrText)")
    #expect(Self.count(try Self.json(again), "upToDate") == 2)
    // A different file at a restore path: one error, left alone, unless -f.
    try folder.write("R/b.txt", Array("someone else's".utf8))
    let different = try SqueezeBinary.run(["-d", "-o", folder.url("R"), folder.url("M/")])
    #expect(different.status == 1)
    #expect(different.stderrText.components(separatedBy: "already exists").count == 2)
    #expect(try folder.read("R/b.txt") == Array("someone else's".utf8))
    #expect(
      try SqueezeBinary.run(["-f", "-d", "-o", folder.url("R"), folder.url("M/")]).status == 0)
    #expect(try folder.read("R/b.txt") == TestData.text(3000, seed: 9))
    // Same size, time and bits but other bytes: up to date by the quick check; with --rm the
    // .gz is removed only after its decoded bytes are published.
    let path = folder.url("R/a.txt")
    var original = stat()
    stat(path, &original)
    var damaged = TestData.text(4000)
    damaged[0] ^= 0xFF
    try folder.write("R/a.txt", damaged)
    var times = [original.st_atim, original.st_mtim]
    utimensat(AT_FDCWD, path, &times, 0)
    let trusted = try SqueezeBinary.run(["--json", "-d", "-o", folder.url("R"), folder.url("M/")])
    #expect(Self.count(try Self.json(trusted), "upToDate") == 2)
    let removing = try SqueezeBinary.run(["-d", "--rm", "-o", folder.url("R"), folder.url("M/")])
    #expect(removing.status == 0, "\(removing.stderrText)")
    #expect(try folder.read("R/a.txt") == TestData.text(4000))
    #expect(!FileManager.default.fileExists(atPath: folder.url("M/a.txt.gz")))
  }

  @Test func withShardsEveryShardMakesEveryFolderAndLinksGoByTheHash() throws {
    let folder = TemporaryFolder("shards")
    for index in 0..<30 {
      try folder.write("S/d\(index % 3)/f\(index)", TestData.text(200 + index))
    }
    try folder.makeFolder("S/empty")
    for index in 0..<9 { symlink("f\(index)", folder.url("S/d0/link\(index)")) }
    try folder.write("S/one", text: "shared")
    link(folder.url("S/one"), folder.url("S/two"))
    for shard in 1...3 {
      let result = try SqueezeBinary.run([
        "--shard", "\(shard)/3", "-o", folder.url("M\(shard)"), folder.url("S/"),
      ])
      #expect(result.status == 0, "\(result.stderrText)")
      for name in ["d0", "d1", "d2", "empty"] {
        var status = stat()
        #expect(stat(folder.url("M\(shard)/\(name)"), &status) == 0, "shard \(shard) has \(name)")
      }
    }
    var links = 0
    for shard in 1...3 {
      let names = (try FileManager.default.contentsOfDirectory(atPath: folder.url("M\(shard)/d0")))
      links += names.filter { $0.hasPrefix("link") }.count
      for name in ["one.gz", "two.gz"]
      where FileManager.default.fileExists(atPath: folder.url("M\(shard)/\(name)")) {
        var status = stat()
        stat(folder.url("M\(shard)/\(name)"), &status)
        #expect(status.st_nlink == 1, "hard-link groups are not linked across shards")
      }
    }
    #expect(links == 9, "each link in exactly one shard")
  }
}
