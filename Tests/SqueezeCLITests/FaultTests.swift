import Foundation
import Glibc
import SqueezeSystem
import TestSupport
import Testing

@testable import SqueezeCore

/// Faults caused for real: kill -9, full disks, file-size limits, files that vanish,
/// shrink, grow or turn into links mid-run, unreadable folders, overlapping runs.
@Suite(.tags(.system), .systemTier) struct FaultTests {
  /// A checksum of every regular file below `folder` (path → bytes' FNV-1a).
  static func snapshot(_ folder: String) throws -> [String: UInt64] {
    var result: [String: UInt64] = [:]
    for path in TemporaryFolder.files(in: folder)
    where !path.hasSuffix(".gz") && !TemporaryFolder.isSqueezeTemporary(path) {
      result[path] = FNV1a.hash64(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + path)))
    }
    return result
  }

  /// Every `.gz` under `output` is whole and decompresses to its source under `source`.
  static func checkOutputs(_ output: String, sources source: String) throws -> Int {
    var checked = 0
    for path in TemporaryFolder.files(in: output) where path.hasSuffix(".gz") {
      let original = source + "/" + String(path.dropLast(3))
      let restored = try SystemGzip.decompress(output + "/" + path)
      #expect(restored == Array(try Data(contentsOf: URL(fileURLWithPath: original))), "\(path)")
      checked += 1
    }
    return checked
  }

  /// Waits (up to 20 s) until a temporary exists below `folder`.
  static func waitForTemporary(in folder: String) -> Bool {
    for _ in 0..<400 {
      if !temporaries(in: folder).isEmpty { return true }
      usleep(50_000)
    }
    return false
  }

  static func temporaries(in folder: String) -> [String] {
    TemporaryFolder.squeezeTemporaries(under: folder)
  }

  @Test func killNineAtRandomMomentsLosesNothing() throws {
    let folder = TemporaryFolder("kill9")
    for index in 0..<2500 {
      try folder.write(
        "in/d\(index % 25)/f\(index).txt",
        TestData.text(1500 + (index * 37) % 6000, seed: UInt64(index)))
    }
    for index in 0..<6 {
      try folder.write("in/big/b\(index).bin", TestData.text(900_000, seed: UInt64(100 + index)))
    }
    let originals = try Self.snapshot(folder.url("in"))
    var generator = SystemRandomNumberGenerator()
    for round in 0..<6 {
      // Beside the sources on even rounds, into a mirror on odd ones.
      let arguments =
        round % 2 == 0 ? [folder.url("in")] : ["-o", folder.url("out"), folder.url("in/")]
      let delay = UInt32.random(in: 30_000...400_000, using: &generator)
      let result = try SqueezeBinary.run(["-j", "2", "--block-size", "64K"] + arguments) { pid in
        usleep(delay)
        kill(pid, SIGKILL)
      }
      #expect(result.signal == SIGKILL || result.status == 0, "round \(round)")
      _ = try Self.checkOutputs(folder.url("in"), sources: folder.url("in"))
      _ = try Self.checkOutputs(folder.url("out"), sources: folder.url("in"))
      #expect(
        try Self.snapshot(folder.url("in")) == originals, "originals unchanged after round \(round)"
      )
    }
    for arguments in [[folder.url("in")], ["-o", folder.url("out"), folder.url("in/")]] {
      let finish = try SqueezeBinary.run(arguments)
      #expect(finish.status == 0, "\(finish.stderrText)")
    }
    #expect(Self.temporaries(in: folder.path).isEmpty, "stale temporaries cleaned up")
    #expect(try Self.checkOutputs(folder.url("in"), sources: folder.url("in")) == 2506)
    // The mirror also holds a wrapped copy (x.gz.gz) of each output beside the sources.
    #expect(try Self.checkOutputs(folder.url("out"), sources: folder.url("in")) == 2 * 2506)
  }

  @Test func cleaningUpNeverRemovesALiveRunsTemporary() throws {
    let folder = TemporaryFolder("live")
    try folder.write("in/big.txt", TestData.text(40_000_000, seed: 3))
    try folder.write("in/small.txt", Array("small".utf8))
    // A slow run (level 9, one job) writes big.txt's temporary while a second run walks the
    // same folder (and cleans stale temporaries as it goes). With --rm its output has a
    // temporary name (other outputs are made unnamed and have none to remove).
    let slow = Process()
    slow.executableURL = URL(fileURLWithPath: SqueezeBinary.path)
    slow.arguments = ["-9", "-j", "1", "--rm", "--isolation", "actor", folder.url("in/big.txt")]
    try slow.run()
    #expect(Self.waitForTemporary(in: folder.url("in")), "the slow run's temporary exists")
    for _ in 0..<3 {
      #expect(try SqueezeBinary.run(["--exclude", "big.txt", folder.url("in")]).status == 0)
    }
    slow.waitUntilExit()
    #expect(slow.terminationStatus == 0)
    #expect(
      try SystemGzip.decompress(folder.url("in/big.txt.gz")) == TestData.text(40_000_000, seed: 3))
  }

  @Test func staleTemporariesAreJudgedByWriterAndAge() throws {
    let folder = TemporaryFolder("stale")
    try folder.write("in/sub/a.txt", Array("a".utf8))
    try folder.makeFolder("out/sub")
    let me = ProcessIdentity.current
    // A process of this host, boot and PID namespace that has ended.
    let ended = Process()
    ended.executableURL = URL(fileURLWithPath: "/bin/true")
    try ended.run()
    ended.waitUntilExit()
    let dead =
      ".squeeze-\(me.hostHash)-\(me.bootID)-\(me.pidNamespace)-\(String(ended.processIdentifier, radix: 16))-1-1.tmp"
    // A writer in another PID namespace (a container): fresh is kept, a day old is removed.
    let foreignFresh = ".squeeze-\(me.hostHash)-\(me.bootID)-abc-1-1-1.tmp"
    let foreignOld = ".squeeze-\(me.hostHash)-\(me.bootID)-abd-1-1-2.tmp"
    for name in [dead, foreignFresh, foreignOld] {
      try folder.write("out/sub/\(name)", Array("partial".utf8))
    }
    var old = [
      timespec(tv_sec: time(nil) - 2 * 86400, tv_nsec: 0),
      timespec(tv_sec: time(nil) - 2 * 86400, tv_nsec: 0),
    ]
    utimensat(AT_FDCWD, folder.url("out/sub/\(foreignOld)"), &old, 0)
    #expect(try SqueezeBinary.run(["-o", folder.url("out"), folder.url("in/")]).status == 0)
    let left = Set(
      ((try? FileManager.default.contentsOfDirectory(atPath: folder.url("out/sub"))) ?? []))
    #expect(left == ["a.txt.gz", foreignFresh])
  }

  /// A user's own files that merely look like temporaries (`.squeeze-` … `.tmp`, not of the
  /// exact shape) are files like any other, however old: compressed, mirrored, never removed.
  @Test func filesThatOnlyLookLikeTemporariesAreKeptAndCompressed() throws {
    let folder = TemporaryFolder("lookalike")
    let names = [
      ".squeeze-my notes.tmp", ".squeeze-notes.tmp", ".squeeze-1-2-3-4-5.tmp",
      ".squeeze-0BADCAFE-1-2-3-4-5.tmp",
    ]
    var old = [
      timespec(tv_sec: time(nil) - 3 * 86400, tv_nsec: 0),
      timespec(tv_sec: time(nil) - 3 * 86400, tv_nsec: 0),
    ]
    for name in names {
      try folder.write("in/\(name)", Array("mine".utf8))
      #expect(utimensat(AT_FDCWD, folder.url("in/\(name)"), &old, 0) == 0)
    }
    let inPlace = try SqueezeBinary.run([folder.url("in")])
    #expect(inPlace.status == 0, "\(inPlace.stderrText)")
    let mirrored = try SqueezeBinary.run(["-o", folder.url("out"), folder.url("in/")])
    #expect(mirrored.status == 0, "\(mirrored.stderrText)")
    for name in names {
      #expect(try folder.read("in/\(name)") == Array("mine".utf8), "\(name) is kept")
      #expect(try SystemGzip.decompress(folder.url("in/\(name).gz")) == Array("mine".utf8))
      #expect(try SystemGzip.decompress(folder.url("out/\(name).gz")) == Array("mine".utf8))
    }
  }

  @Test(.enabled(if: TestMachine.canMountPrivately, "needs root and unshare for a PID namespace"))
  func aLiveRunInAnotherPIDNamespaceKeepsItsTemporary() throws {
    let folder = TemporaryFolder("pidns")
    try folder.write("in/big.txt", TestData.text(30_000_000, seed: 4))
    let slow = Process()
    slow.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
    slow.arguments = [
      // --rm: its output has a temporary name (see cleaningUpNeverRemovesALiveRunsTemporary).
      "--pid", "--fork", "--mount-proc", SqueezeBinary.path, "-9", "-j", "1", "--rm",
      "--isolation", "actor", folder.url("in"),
    ]
    try slow.run()
    #expect(Self.waitForTemporary(in: folder.url("in")), "the other namespace's temporary exists")
    #expect(try SqueezeBinary.run(["--exclude", "big.txt", folder.url("in")]).status == 0)
    slow.waitUntilExit()
    #expect(slow.terminationStatus == 0, "the run in the other namespace kept its temporary")
    #expect(try SystemGzip.accepts(folder.url("in/big.txt.gz")))
  }

  @Test(.enabled(if: TestMachine.canMountPrivately, "needs root and unshare for a private tmpfs"))
  func aFullDiskStopsTheRunCleanlyAndARerunAfterMakingRoomFinishes() throws {
    let folder = TemporaryFolder("full")
    for index in 0..<20 {
      try folder.write("in/small-\(index).txt", TestData.text(3000, seed: UInt64(index)))
    }
    try folder.write("in/huge.bin", TestData.random(3_000_000, seed: 9))
    try folder.makeFolder("disk")
    let originals = try Self.snapshot(folder.url("in"))
    // One job and one block per file: the big file goes first and fills the disk. The run
    // stops there, once (as gzip and pigz stop at their first failed write), though the
    // small files would have fit once its temporary was gone; a run after making room
    // (here: the same mount, larger) does them all.
    let run =
      "\(Shell.quote(SqueezeBinary.path)) -j 1 --block-size 64M -o \(Shell.quote(folder.url("disk/out"))) \(Shell.quote(folder.url("in/")))"
    let script = """
      mount -t tmpfs -o size=1m none \(Shell.quote(folder.url("disk"))) && \
      \(run); status=$?; cp -a \(Shell.quote(folder.url("disk/out"))) \(Shell.quote(folder.url("copy"))); \
      mount -o remount,size=8m none \(Shell.quote(folder.url("disk"))) && \
      \(run) && cp -a \(Shell.quote(folder.url("disk/out"))) \(Shell.quote(folder.url("again"))); exit $status
      """
    let result = try Shell.run("/usr/bin/unshare", ["-m", "/bin/sh", "-c", script])
    #expect(result.status == 74, "\(result.stderrText)")
    #expect(
      result.stderrText.hasPrefix(
        "squeeze: \(folder.url("disk")): no space left on device: the run stopped; 21 files not done, their sources kept (first: '\(folder.url("in/huge.bin"))': cannot write '\(folder.url("disk/out/huge.bin.gz"))': No space left on device (errno 28))\n"
      ), "\(result.stderrText)")
    #expect(result.stderrText.split(separator: "\n").count == 2, "one line, then the summary")
    #expect(try Self.checkOutputs(folder.url("copy"), sources: folder.url("in")) == 0)
    #expect(Self.temporaries(in: folder.url("copy")).isEmpty)
    #expect(!FileManager.default.fileExists(atPath: folder.url("copy/huge.bin.gz")))
    #expect(try Self.snapshot(folder.url("in")) == originals)
    #expect(
      try Self.checkOutputs(folder.url("again"), sources: folder.url("in")) == 21,
      "the run after making room does every file")
  }

  @Test func aFileSizeLimitFailsBigFilesWithEFBIG() throws {
    let folder = TemporaryFolder("ulimit-f")
    try folder.write("in/small.txt", TestData.text(5000, seed: 1))
    try folder.write("in/big.bin", TestData.random(2_000_000, seed: 2))
    let script =
      "ulimit -f 200; exec \(Shell.quote(SqueezeBinary.path)) -o \(Shell.quote(folder.url("out"))) \(Shell.quote(folder.url("in/")))"
    let result = try Shell.sh(script)
    #expect(result.status == 1, "\(result.stderrText)")
    #expect(
      result.stderrText.contains(
        "big.bin: cannot write '\(folder.url("out/big.bin.gz"))': File too large (errno 27)"))
    #expect(TemporaryFolder.files(in: folder.url("out")) == ["small.txt.gz"])
    #expect(try Self.checkOutputs(folder.url("out"), sources: folder.url("in")) == 1)
  }

  /// A folder whose big files keep one job busy for a while, so files listed last are
  /// still waiting when the test changes them.
  static func busyFolder(_ folder: TemporaryFolder) throws {
    for index in 0..<24 {
      try folder.write("in/big-\(index).txt", TestData.text(3_000_000, seed: UInt64(index)))
    }
  }

  @Test func filesChangedAfterListingAreCaughtNeverFollowed() throws {
    let folder = TemporaryFolder("changed")
    try Self.busyFolder(folder)
    try folder.write("in/z-vanishes.txt", Array("here now".utf8))
    try folder.write("in/z-becomes-link.txt", Array("plain".utf8))
    // Once a temporary exists the files are listed and the big ones (largest first) are
    // being compressed; the small z- files wait for them. A fixed delay was not enough
    // under load: the files changed before they were listed, and the run never saw it.
    let result = try SqueezeBinary.run(["-j", "1", folder.url("in")]) { pid in
      SignalTests.waitForTemporary(under: folder.url("in"), pid: pid)
      unlink(folder.url("in/z-vanishes.txt"))
      unlink(folder.url("in/z-becomes-link.txt"))
      symlink("/etc/passwd", folder.url("in/z-becomes-link.txt"))
    }
    #expect(result.status == 1)
    #expect(result.stderrText.contains("z-vanishes.txt: vanished after it was listed"))
    #expect(
      result.stderrText.contains(
        "z-becomes-link.txt: became a symbolic link after it was listed; not followed"))
    #expect(!FileManager.default.fileExists(atPath: folder.url("in/z-becomes-link.txt.gz")))
    #expect(TemporaryFolder.files(in: folder.url("in")).filter { $0.hasSuffix(".gz") }.count == 24)
  }

  @Test func aFileThatGrowsWhileReadIsNotCompressed() throws {
    let folder = TemporaryFolder("grows")
    try folder.write("in/growing.log", TestData.text(30_000_000, seed: 5))
    let writer = Process()
    writer.executableURL = URL(fileURLWithPath: "/bin/sh")
    writer.arguments = [
      "-c", "while :; do echo appended line >> \(Shell.quote(folder.url("in/growing.log"))); done",
    ]
    try writer.run()
    defer {
      kill(writer.processIdentifier, SIGKILL)
      writer.waitUntilExit()
    }
    usleep(50_000)
    let result = try SqueezeBinary.run(["-j", "1", folder.url("in")])
    #expect(result.status == 1)
    #expect(result.stderrText.contains("growing.log: changed while being read"))
    #expect(!FileManager.default.fileExists(atPath: folder.url("in/growing.log.gz")))
    #expect(Self.temporaries(in: folder.url("in")).isEmpty)
  }

  @Test func aFileThatShrinksWhileReadIsNotCompressed() throws {
    let folder = TemporaryFolder("shrinks")
    try folder.write("in/shrinking.bin", TestData.text(60_000_000, seed: 6))
    // Shrunk once its output's temporary exists (reading has begun), not after a fixed
    // delay, which a loaded machine can outlast before the run even starts reading.
    let result = try SqueezeBinary.run(["-j", "1", "-9", folder.url("in")]) { pid in
      SignalTests.waitForTemporary(under: folder.url("in"), pid: pid)
      truncate(folder.url("in/shrinking.bin"), 1_000_000)
    }
    #expect(result.status == 1)
    #expect(result.stderrText.contains("shrinking.bin: changed while being read"))
    #expect(!FileManager.default.fileExists(atPath: folder.url("in/shrinking.bin.gz")))
  }

  @Test(.enabled(if: TestMachine.isRoot, "needs root to run squeeze as the user nobody"))
  func anUnreadableFolderFailsAloneWhenRunUnprivileged() throws {
    let folder = TemporaryFolder("unreadable-folder")
    let binary = try SqueezeBinary.publicCopy(in: folder)
    try folder.write("in/ok/a.txt", Array("a".utf8))
    try folder.write("in/closed/secret.txt", Array("s".utf8))
    for path in ["in", "in/ok"] { chmod(folder.url(path), 0o777) }
    chmod(folder.url("in/closed"), 0o000)
    let result = try SqueezeBinary.runAsNobody(binary, [folder.url("in")])
    #expect(result.status == 1)
    #expect(
      result.stderrText.contains(
        "squeeze: \(folder.url("in/closed")): cannot open folder: Permission denied (errno 13)"))
    #expect(try SystemGzip.decompress(folder.url("in/ok/a.txt.gz")) == Array("a".utf8))
  }

  /// The harness's own retry: a copy of the binary still open for writing somewhere (as in
  /// a child another test forked while the copy was written) is refused with `ETXTBSY`;
  /// ``SqueezeBinary/runAsNobody(_:_:)`` waits for the writer to let go instead of reporting
  /// `setpriv`'s 126 as squeeze's status.
  @Test(.enabled(if: TestMachine.isRoot, "needs root to run squeeze as the user nobody"))
  func aCopyBrieflyOpenForWritingStillRunsAsNobody() throws {
    let folder = TemporaryFolder("busy-copy")
    let binary = try SqueezeBinary.publicCopy(in: folder)
    let writer = open(binary, O_WRONLY | O_CLOEXEC)
    try #require(writer >= 0)
    let closer = Thread {
      usleep(300_000)
      close(writer)
    }
    closer.start()
    let result = try SqueezeBinary.runAsNobody(binary, ["--version"])
    #expect(result.status == 0, "\(result.stderrText)")
    #expect(result.stdoutText.hasPrefix("squeeze"))
  }

  @Test func twoRunsAtOnceBothSucceedAndAgree() throws {
    let folder = TemporaryFolder("overlap-runs")
    for index in 0..<1500 {
      try folder.write(
        "in/d\(index % 10)/f\(index)", TestData.text(2000 + index, seed: UInt64(index)))
    }
    for arguments in [["-o", folder.url("out")], []] {
      let (mine, otherStatus, otherErrors) = try SqueezeBinary.runTwiceAtOnce(
        arguments + [folder.url("in/")])
      #expect(mine.status == 0, "\(mine.stderrText)")
      #expect(otherStatus == 0, "\(otherErrors)")
      let output = arguments.isEmpty ? folder.url("in") : folder.url("out")
      #expect(try Self.checkOutputs(output, sources: folder.url("in")) == 1500)
      #expect(Self.temporaries(in: folder.path).isEmpty)
    }
  }

  /// Two restores of one mirror into one folder at once (a restore started twice): each
  /// file is published by whichever finishes it first, and the other, finding in place the
  /// file a restore re-run would keep, counts it as up to date rather than failing on it.
  @Test func twoRestoresAtOnceBothSucceedAndAgree() throws {
    let folder = TemporaryFolder("overlap-restores")
    for index in 0..<1500 {
      try folder.write(
        "S/d\(index % 10)/f\(index)", TestData.text(2000 + index, seed: UInt64(index)))
    }
    #expect(try SqueezeBinary.run(["-q", "-o", folder.url("M"), folder.url("S/")]).status == 0)
    let arguments = ["-d", "-o", folder.url("R"), folder.url("M/")]
    let (mine, otherStatus, otherErrors) = try SqueezeBinary.runTwiceAtOnce(arguments)
    #expect(mine.status == 0, "\(mine.stderrText.prefix(600))")
    #expect(otherStatus == 0, "\(otherErrors.prefix(600))")
    let differences = TreeSnapshot(folder.url("S")).differences(
      from: TreeSnapshot(folder.url("R")))
    #expect(differences.isEmpty, "\(differences.prefix(10))")
    #expect(Self.temporaries(in: folder.path).isEmpty)
  }

  /// Where two runs at once write: a fresh mirror, or a fresh snapshot linking from an
  /// earlier one.
  enum SharedDestination: String, CaseIterable, CustomTestStringConvertible {
    case mirror, snapshot
    var testDescription: String { rawValue }
  }

  @Test(.tags(.slow), arguments: SharedDestination.allCases)
  func twoRunsAtOnceOverLinksAndHardLinksBothSucceed(into destination: SharedDestination)
    throws
  {
    let folder = TemporaryFolder("overlap-links")
    for index in 0..<200 {
      try folder.write("S/d\(index % 4)/f\(index)", TestData.text(500 + index, seed: UInt64(index)))
      symlink("d\(index % 4)/f\(index)", folder.url("S/l\(index)"))
    }
    for index in stride(from: 0, to: 200, by: 4) {
      try #require(
        link(folder.url("S/d0/f\(index)"), folder.url("S/d\(1 + index % 3)/h\(index)")) == 0)
    }
    let source = TreeSnapshot(folder.url("S"))
    var linkDest: [String] = []
    if destination == .snapshot {
      #expect(try SqueezeBinary.run(["-q", "-o", folder.url("N"), folder.url("S/")]).status == 0)
      linkDest = ["--link-dest", "../N"]
    }
    for round in 0..<4 {
      let arguments = ["-o", folder.url("M\(round)")] + linkDest + [folder.url("S/")]
      let (mine, otherStatus, otherErrors) = try SqueezeBinary.runTwiceAtOnce(arguments)
      #expect(mine.status == 0, "round \(round): \(mine.stderrText.prefix(600))")
      #expect(otherStatus == 0, "round \(round): \(otherErrors.prefix(600))")
      let restored = try SqueezeBinary.run([
        "-d", "-o", folder.url("R\(round)"), folder.url("M\(round)/"),
      ])
      #expect(restored.status == 0, "round \(round): \(restored.stderrText.prefix(600))")
      // Two snapshot runs at once each give the top folder its time and then remove or
      // find gone the marker (which sets that time again): whichever ends last decides it,
      // so the top folder's own time is left out there; every entry below is compared.
      let differences = source.differences(from: TreeSnapshot(folder.url("R\(round)"))).filter {
        !(destination == .snapshot && $0.hasPrefix(".: "))
      }
      #expect(differences.isEmpty, "round \(round): \(differences.prefix(10))")
      #expect(access(folder.url("M\(round)/.squeeze-snapshot"), F_OK) != 0, "round \(round)")
    }
  }

  @Test func twoRemovingRunsAtOnceBothSucceed() throws {
    // Two --rm runs over one folder (a cron job overlapping the last one): each original is
    // compressed and removed by one of them; the other, finding it gone with its output in
    // place, counts it as done, not as a failure.
    let folder = TemporaryFolder("overlap-rm")
    var contents: [String: [UInt8]] = [:]
    for index in 0..<1500 {
      let data = TestData.text(200 + index * 3, seed: UInt64(index))
      contents["f\(index)"] = data
      try folder.write("in/f\(index)", data)
    }
    let (mine, otherStatus, otherErrors) = try SqueezeBinary.runTwiceAtOnce(
      ["--rm", folder.url("in")])
    #expect(mine.status == 0, "\(mine.stderrText.prefix(500))")
    #expect(otherStatus == 0, "\(otherErrors.prefix(500))")
    let left = try FileManager.default.contentsOfDirectory(atPath: folder.url("in")).sorted()
    #expect(left == contents.keys.map { $0 + ".gz" }.sorted(), "only outputs are left")
    for (name, data) in contents where name.hasSuffix("0") {
      #expect(try SystemGzip.decompress(folder.url("in/\(name).gz")) == data)
    }
  }
}

/// Scale: many files in one folder under a small descriptor limit, a very deep
/// tree, a file over 4 GiB, a decompression bomb.
@Suite(.tags(.system, .slow), .systemTier) struct ScaleTests {
  @Test func aHundredThousandFilesInOneFolderUnderUlimitN64() throws {
    let folder = TemporaryFolder("many")
    let made = try Shell.run(
      "/usr/bin/python3",
      [
        "-c",
        "import os,sys\nd=sys.argv[1]\nos.makedirs(d)\nfor i in range(100000):\n  open(f'{d}/f{i:06d}','w').write(f'file {i}\\n')",
        folder.url("in"),
      ])
    #expect(made.status == 0)
    // Two workers, whatever the machine's cores, so the peak does not grow with them.
    let result = try Shell.sh(
      "ulimit -n 64; /usr/bin/time -f '%M' \(Shell.quote(SqueezeBinary.path)) -j 2 -o \(Shell.quote(folder.url("out"))) \(Shell.quote(folder.url("in/")))"
    )
    #expect(result.status == 0, "\(result.stderrText.suffix(500))")
    let peakKilobytes = Int(result.stderrText.split(separator: "\n").last ?? "") ?? 0
    // 1.5 times the peak of the debug build these tests run (55,220 KB measured; a release
    // build peaks at about 46,000 KB): a listing or a plan that starts to grow per file
    // (a few hundred bytes each is tens of MB here) fails it.
    #expect(peakKilobytes > 0 && peakKilobytes < 83_000, "peak RSS \(peakKilobytes) KB")
    let outputs = try FileManager.default.contentsOfDirectory(atPath: folder.url("out"))
    #expect(outputs.count == 100_000)
    #expect(try SystemGzip.decompress(folder.url("out/f099999.gz")) == Array("file 99999\n".utf8))
  }

  @Test func aThousandLevelsDeepUnderUlimitN256() throws {
    let folder = TemporaryFolder("deep-tree")
    let made = try Shell.run(
      "/usr/bin/python3",
      [
        "-c",
        """
        import os, sys
        fd = os.open(sys.argv[1], os.O_RDONLY)
        for i in range(1000):
            f = os.open(f"file{i}", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd); os.write(f, b"level %d\\n" % i); os.close(f)
            os.mkdir("d", dir_fd=fd); n = os.open("d", os.O_RDONLY, dir_fd=fd); os.close(fd); fd = n
        """, folder.path,
      ])
    #expect(made.status == 0, "\(made.stderrText)")
    let result = try Shell.sh(
      "ulimit -n 256; \(Shell.quote(SqueezeBinary.path)) --json -o \(Shell.quote(folder.url("out"))) \(Shell.quote(folder.url("file0"))) \(Shell.quote(folder.url("d")))"
    )
    #expect(result.status == 0, "\(result.stderrText.suffix(500))")
    let summary = try #require(
      JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    #expect(((summary["files"] as? [String: Any])?["compressed"] as? NSNumber)?.intValue == 1000)
  }

  @Test func aSparseFileOverFourGibibytesRoundTrips() throws {
    let folder = TemporaryFolder("sparse")
    let path = folder.url("in/sparse.img")
    try folder.write("in/sparse.img", Array("start of the file\n".utf8))
    let size: Int64 = 5 << 30
    truncate(path, off_t(size))
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try handle.seek(toOffset: UInt64(4_500_000_000))
    try handle.write(contentsOf: Data(TestData.random(1 << 20, seed: 7)))
    try handle.seek(toOffset: UInt64(size - 100))
    try handle.write(contentsOf: Data(repeating: 0x7A, count: 100))
    try handle.close()
    let result = try SqueezeBinary.run(["--block-size", "4M", folder.url("in")])
    #expect(result.status == 0, "\(result.stderrText)")
    // gzip, ISA-L's igzip and squeeze itself restore it.
    for reader in ["gzip -dc", "igzip -dc", "\(Shell.quote(SqueezeBinary.path)) -dc"] {
      let compare = try Shell.sh(
        "\(reader) \(Shell.quote(path + ".gz")) | cmp - \(Shell.quote(path))")
      #expect(
        compare.status == 0,
        "\(reader) gives identical bytes: \(compare.stdoutText) \(compare.stderrText)")
    }
    let gz = try FileHandle(forReadingFrom: URL(fileURLWithPath: path + ".gz"))
    let end = try gz.seekToEnd()
    try gz.seek(toOffset: end - 4)
    let isize = Array(try gz.readToEnd() ?? Data())
    try gz.close()
    let expected = UInt32(truncatingIfNeeded: size)
    #expect(
      isize == [
        UInt8(expected & 0xFF), UInt8(expected >> 8 & 0xFF), UInt8(expected >> 16 & 0xFF),
        UInt8(expected >> 24),
      ])
  }

  @Test func aDecompressionBombStreamsAndFailsCleanlyUnderLimits() throws {
    let folder = TemporaryFolder("bomb")
    // 32 members of 64 MiB of zeros: 2 GiB from about 2 MB.
    let member = try Shell.run(
      "/bin/gzip", ["-9", "-c"], input: [UInt8](repeating: 0, count: 64 << 20)
    ).stdout
    var bomb: [UInt8] = []
    for _ in 0..<32 { bomb += member }
    try folder.write("bomb.bin.gz", bomb)
    #expect(bomb.count < 4_000_000)
    let tested = try Shell.sh(
      "/usr/bin/time -f '%M' \(Shell.quote(SqueezeBinary.path)) -t -j 2 \(Shell.quote(folder.url("bomb.bin.gz")))"
    )
    #expect(tested.status == 0, "a bomb is not an error by itself")
    let peak = Int(tested.stderrText.split(separator: "\n").last ?? "") ?? 0
    // 1.5 times the 25,572 KB this run peaked at here (debug build, -j 2); holding one
    // 64 MiB member would be far above it.
    #expect(peak > 0 && peak < 38_000, "bounded memory: \(peak) KB")
    let limited = try Shell.sh(
      "ulimit -f 20000; exec \(Shell.quote(SqueezeBinary.path)) -d \(Shell.quote(folder.url("bomb.bin.gz")))"
    )
    #expect(limited.status == 1)
    #expect(limited.stderrText.contains("File too large (errno 27)"))
    #expect(!FileManager.default.fileExists(atPath: folder.url("bomb.bin")), "no partial output")
    #expect(FaultTests.temporaries(in: folder.path).isEmpty)
  }
}
