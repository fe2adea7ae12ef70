import Foundation
import Glibc
import TestSupport
import Testing

/// Runs of squeeze in which one file system call fails, the one a test names: the k-th call
/// of one kind, with a chosen errno, through `scripts/faults/faultshim.c` preloaded into the
/// real binary (`LD_PRELOAD`). `scripts/faults/sweep` makes every call of every kind fail in
/// turn; these tests hold the faults it found, and run a quick part of the sweep itself.
enum FaultShim {
  /// The checkout's root folder.
  static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

  /// True when gcc is there to build the shim.
  static let canBuild = FileManager.default.isExecutableFile(atPath: "/usr/bin/gcc")

  /// The shim, built once per test process into the build folder (`.build/faults`), under a
  /// name of its own and then renamed, so a sweep building it at the same time never loads
  /// a half-written library.
  static let library: Result<String, BuildFailure> = {
    let folder = repository + "/.build/faults"
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let output = folder + "/faultshim-tests.so"
    let building = folder + "/faultshim-tests.\(getpid()).new"
    do {
      let result = try Shell.run(
        "/usr/bin/gcc",
        [
          "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", building,
          repository + "/scripts/faults/faultshim.c", "-ldl",
        ])
      guard result.status == 0, rename(building, output) == 0 else {
        return .failure(BuildFailure(message: result.stderrText))
      }
    } catch {
      return .failure(BuildFailure(message: "\(error)"))
    }
    return .success(output)
  }()

  /// gcc could not build the shim.
  struct BuildFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { "cannot build faultshim.c: \(message)" }
  }

  /// A failing call: the `at`-th call of `kind` (the shim's kinds: open, read, write, sync,
  /// rename, link, unlink, mkdir, fchmod, fchown, utimens, getdents, close, symlink, stat,
  /// readlink) fails with `errno` (a name: EIO, ENOSPC, EACCES, ...); with `path`, the
  /// `at`-th of those on a path that contains it. With `kill`, that call is not made: the
  /// process is killed (SIGKILL) in its place, as a `kill -9` landing just before it.
  struct Fault: CustomTestStringConvertible, Sendable {
    var kind: String
    var at: Int
    var errno: String
    var path: String? = nil
    var kill = false
    var testDescription: String {
      "\(kind) #\(at)\(path.map { " on '\($0)'" } ?? "") \(kill ? "killed" : "fails with \(errno)")"
    }
  }

  /// What a run under the shim did.
  struct Run {
    var result: Shell.Result
    /// Calls of each kind the run made.
    var counts: [String: UInt64]
    /// True when the fault's call was reached (and failed).
    var fired: Bool
  }

  /// The shim's kinds, in the order of its counts file.
  static let kinds = [
    "open", "read", "write", "sync", "rename", "link", "unlink", "mkdir", "fchmod", "fchown",
    "utimens", "getdents", "close", "symlink", "stat", "readlink",
  ]

  /// Runs squeeze with `arguments` in `folder`, failing `fault` (or counting only).
  static func run(_ arguments: [String], in folder: TemporaryFolder, failing fault: Fault?)
    throws -> Run
  {
    let library = try Self.library.get()
    let countsFile = folder.url("faultshim-counts")
    var environment = ProcessInfo.processInfo.environment
    environment["LD_PRELOAD"] = library
    environment["SQUEEZE_FAULT_COUNTS"] = countsFile
    if let fault {
      environment["SQUEEZE_FAULT_KIND"] = fault.kind
      environment["SQUEEZE_FAULT_AT"] = String(fault.at)
      environment["SQUEEZE_FAULT_ERRNO"] = fault.errno
      environment["SQUEEZE_FAULT_PATH"] = fault.path
      if fault.kill { environment["SQUEEZE_FAULT_KILL"] = "1" }
    }
    let result = try Shell.run(
      SqueezeBinary.path, arguments, environment: environment, currentDirectory: folder.path)
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: countsFile)))
    unlink(countsFile)
    func value(_ index: Int) -> UInt64 {
      (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[index * 8 + $1]) << (8 * UInt64($1)) }
    }
    var counts: [String: UInt64] = [:]
    for (index, kind) in kinds.enumerated() { counts[kind] = value(index) }
    return Run(result: result, counts: counts, fired: value(kinds.count) != 0)
  }
}

@Suite(.tags(.system), .systemTier) struct FaultInjectionTests {
  /// Writes the files of a small tree under `name`, each with mode 0644 and a modification
  /// time of its own.
  static func makeTree(_ name: String, in folder: TemporaryFolder) throws -> [String: [UInt8]] {
    let files = [
      "a.txt": TestData.text(5_000, seed: 1), "sub/b.txt": TestData.text(2_000, seed: 2),
      "sub/c.bin": TestData.random(3_000, seed: 3),
    ]
    for (index, (path, bytes)) in files.sorted(by: { $0.key < $1.key }).enumerated() {
      try folder.write("\(name)/\(path)", bytes)
      chmod(folder.url("\(name)/\(path)"), 0o644)
      var times = [
        timespec(tv_sec: 1_600_000_000 + index, tv_nsec: 0),
        timespec(tv_sec: 1_600_000_000 + index, tv_nsec: 0),
      ]
      utimensat(AT_FDCWD, folder.url("\(name)/\(path)"), &times, 0)
    }
    return files
  }

  /// The mode bits and modification time (seconds) of `path`.
  static func metadata(_ path: String) -> (mode: mode_t, seconds: Int) {
    var status = stat()
    guard lstat(path, &status) == 0 else { return (0, -1) }
    return (status.st_mode & 0o7777, status.st_mtim.tv_sec)
  }

  /// A restore (`-d -o`) whose `fchmod` or `futimens` of a restored file fails: the file is
  /// reported and not published, rather than left under its final name with the wrong mode or
  /// time, which the next restore would take for a file that is not squeeze's and refuse to
  /// overwrite.
  @Test(
    .enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"),
    arguments: [
      FaultShim.Fault(kind: "utimens", at: 1, errno: "EACCES"),
      FaultShim.Fault(kind: "fchmod", at: 1, errno: "EIO"),
    ])
  func aRestoredFileWhoseMetadataCannotBeSetIsNotPublished(fault: FaultShim.Fault) throws {
    let folder = TemporaryFolder("fault-metadata")
    let files = try Self.makeTree("original", in: folder)
    let mirror = try SqueezeBinary.run(["-q", "-o", folder.url("mirror"), folder.url("original/")])
    try #require(mirror.status == 0, "\(mirror.stderrText)")
    // The first file restored into a folder the run creates is made 0600 and then given its
    // mode by fchmod; every restored file is given its times by futimens.
    let arguments = ["-q", "-j", "1", "-d", "-o", "restored", "mirror/"]
    let run = try FaultShim.run(arguments, in: folder, failing: fault)
    #expect(run.fired, "the restore made no \(fault.kind) call: \(run.counts)")
    #expect(run.result.status == 1, "\(run.result.stderrText)")
    #expect(
      run.result.stderrText.contains("cannot set the ")
        && run.result.stderrText.contains("(errno "), "\(run.result.stderrText)")
    for path in files.keys
    where FileManager.default.fileExists(atPath: folder.url("restored/\(path)")) {
      let original = Self.metadata(folder.url("original/\(path)"))
      #expect(Self.metadata(folder.url("restored/\(path)")) == original, "\(path)")
    }
    #expect(TemporaryFolder.squeezeTemporaries(under: folder.path).isEmpty)
    // The next restore finishes the job.
    let again = try SqueezeBinary.run(arguments, currentDirectory: folder.path)
    #expect(again.status == 0, "\(again.stderrText)")
    for (path, bytes) in files {
      #expect(try folder.read("restored/\(path)") == bytes, "\(path)")
      #expect(
        Self.metadata(folder.url("restored/\(path)"))
          == Self.metadata(folder.url("original/\(path)")))
    }
  }
}

/// `scripts/faults/sweep`, run from the tests on a quick subset: one mode, four kinds of call,
/// the first and the last call of each failing.
@Suite(.tags(.system), .systemTier) struct FaultSweepTests {
  static let sweep = FaultShim.repository + "/scripts/faults/sweep"
  static let canRun =
    FaultShim.canBuild && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

  @Test(.enabled(if: canRun, "needs gcc and python3"))
  func aQuickSweepFindsNothingLost() throws {
    let folder = TemporaryFolder("fault-sweep")
    let result = try Shell.run(
      "/usr/bin/python3",
      [Self.sweep, "--quick", "--binary", SqueezeBinary.path, "--work", folder.url("work")])
    #expect(result.status == 0, "\(result.stdoutText)\(result.stderrText)")
    let summary = result.stdoutText.split(separator: "\n").last.map(String.init) ?? ""
    #expect(summary.contains(", 0 invariant failures"), "\(result.stdoutText)")
    // The points reached the calls they were to fail: "8 injected runs (8 reached their
    // call)". All but the last sync: how many syncs a run makes depends on how the publisher
    // batches files (it waits up to a millisecond for more), so on a busy machine the
    // injected run may make one sync fewer than the run that counted them.
    let numbers = summary.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
    try #require(numbers.count >= 3, "\(summary)")
    #expect(numbers[1] >= 8 && numbers[2] >= numbers[1] - 1, "\(summary)")
  }

  /// The sweep is not blind: a squeeze that truncates one of its outputs after every run
  /// (a wrapper around the real one) fails it, with the output named.
  @Test(.enabled(if: canRun, "needs gcc and python3"))
  func theSweepCatchesATruncatedOutput() throws {
    let folder = TemporaryFolder("fault-sweep-broken")
    let wrapper = try folder.write(
      "broken-squeeze",
      text: """
        #!/bin/sh
        \(Shell.quote(SqueezeBinary.path)) "$@"
        status=$?
        if [ -f src/a.txt.gz ]; then
          head -c 20 src/a.txt.gz > src/a.txt.gz.cut && mv src/a.txt.gz.cut src/a.txt.gz
        fi
        exit $status

        """)
    chmod(wrapper, 0o755)
    let result = try Shell.run(
      "/usr/bin/python3",
      [
        Self.sweep, "--binary", wrapper, "--modes", "beside", "--kinds", "write", "--points", "1",
        "--errnos", "EIO", "--work", folder.url("work"),
      ])
    #expect(result.status == 1, "\(result.stdoutText)\(result.stderrText)")
    #expect(
      result.stdoutText.contains("wrong or truncated file under a final name: src/a.txt.gz"),
      "\(result.stdoutText)")
  }
}

extension FaultInjectionTests {
  /// `--rm` reads each output back before it removes the source; when that read fails the
  /// source is kept and the output's temporary removed (it was left behind).
  @Test(.enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"))
  func anOutputThatCannotBeReadBackLeavesNoTemporary() throws {
    let folder = TemporaryFolder("fault-verify")
    let source = TestData.text(5_000, seed: 4)
    try folder.write("src/a.txt", source)
    // One file read whole by one read (the first), then its output read back (the second,
    // and a third that finds its end).
    let counted = try FaultShim.run(["-q", "--rm", "src"], in: folder, failing: nil)
    try #require(counted.result.status == 0 && counted.counts["read"] == 3, "\(counted.counts)")
    try FileManager.default.removeItem(atPath: folder.url("src/a.txt.gz"))
    try folder.write("src/a.txt", source)

    let run = try FaultShim.run(
      ["-q", "--rm", "src"], in: folder,
      failing: FaultShim.Fault(kind: "read", at: 2, errno: "EIO"))
    #expect(run.fired)
    #expect(run.result.status == 1)
    #expect(
      run.result.stderrText.contains("did not verify, source kept")
        && run.result.stderrText.contains("(errno 5)"), "\(run.result.stderrText)")
    #expect(try folder.read("src/a.txt") == source)
    #expect(!FileManager.default.fileExists(atPath: folder.url("src/a.txt.gz")))
    #expect(TemporaryFolder.squeezeTemporaries(under: folder.path) == [])

    let again = try SqueezeBinary.run(["-q", "--rm", "src"], currentDirectory: folder.path)
    #expect(again.status == 0, "\(again.stderrText)")
    #expect(try SystemGzip.decompress(folder.url("src/a.txt.gz")) == source)
    #expect(!FileManager.default.fileExists(atPath: folder.url("src/a.txt")))
  }
}

extension FaultInjectionTests {
  /// `--delete` removes only what it can tell is squeeze's; when it cannot examine an entry
  /// (the manifest, an output's header, a folder, a source that may still be there) it keeps
  /// the entry and the run fails with the entry named, where it used to keep it silently
  /// and end with status 0.
  @Test(
    .enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"),
    arguments: [
      FaultShim.Fault(kind: "open", at: 1, errno: "EACCES", path: ".squeeze-manifest"),
      FaultShim.Fault(kind: "open", at: 1, errno: "EACCES", path: "gone.txt.gz"),
      FaultShim.Fault(kind: "open", at: 1, errno: "ENOMEM", path: "sub"),
    ])
  func anEntryDeleteCannotExamineIsKeptAndTheRunFails(fault: FaultShim.Fault) throws {
    let folder = TemporaryFolder("fault-delete")
    try folder.write("src/kept.txt", TestData.text(3_000, seed: 1))
    try folder.write("src/gone.txt", TestData.text(3_000, seed: 2))
    try folder.write("src/sub/deep/c.txt", TestData.text(3_000, seed: 3))
    let arguments = ["-q", "--delete", "-o", "out", "src/"]
    let first = try SqueezeBinary.run(arguments, currentDirectory: folder.path)
    try #require(first.status == 0, "\(first.stderrText)")
    unlink(folder.url("src/gone.txt"))
    unlink(folder.url("src/sub/deep/c.txt"))
    rmdir(folder.url("src/sub/deep"))
    rmdir(folder.url("src/sub"))

    let run = try FaultShim.run(arguments, in: folder, failing: fault)
    #expect(run.fired)
    #expect(run.result.status == 1, "\(run.result.stderrText)")
    #expect(
      run.result.stderrText.split(separator: "\n").contains {
        $0.hasPrefix("squeeze: out/") && $0.contains("(errno \(fault.errno == "ENOMEM" ? 12 : 13))")
      }, "\(run.result.stderrText)")
    #expect(
      try SystemGzip.decompress(folder.url("out/kept.txt.gz")) == (try folder.read("src/kept.txt")))
    #expect(TemporaryFolder.squeezeTemporaries(under: folder.path) == [])

    let again = try SqueezeBinary.run(arguments, currentDirectory: folder.path)
    #expect(again.status == 0, "\(again.stderrText)")
    #expect(TemporaryFolder.files(in: folder.url("out")) == ["kept.txt.gz"])
  }
}

extension FaultInjectionTests {
  /// The owner (user, group) of `path`, a link not followed.
  static func owner(_ path: String) -> (user: UInt32, group: UInt32)? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    return (status.st_uid, status.st_gid)
  }

  /// A mirror made as root gives each link its source link's owner (`fchownat`). When that
  /// fails, the link is not left under its name with root as its owner, where every later run
  /// took it for the mirrored link and kept it so.
  @Test(
    .enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"),
    .enabled(if: getuid() == 0, "gives the tree another owner: needs root"),
    arguments: [
      FaultShim.Fault(kind: "fchown", at: 1, errno: "EIO", path: "link"),
      FaultShim.Fault(kind: "fchown", at: 1, errno: "EPERM", path: "link"),
    ])
  func aMirroredLinkWhoseOwnerCannotBeSetIsNotLeftInPlace(fault: FaultShim.Fault) throws {
    let folder = TemporaryFolder("fault-owner")
    try folder.write("src/a.txt", TestData.text(3_000, seed: 1))
    symlink("a.txt", folder.url("src/link"))
    for path in ["src", "src/a.txt", "src/link"] { lchown(folder.url(path), 65534, 65534) }
    let arguments = ["-q", "-o", "out", "src/"]

    let run = try FaultShim.run(arguments, in: folder, failing: fault)
    #expect(run.fired)
    #expect(run.result.status == 1, "\(run.result.stderrText)")
    #expect(
      run.result.stderrText.contains("'out/link'")
        && run.result.stderrText.contains("(errno \(fault.errno == "EIO" ? 5 : 1))"),
      "\(run.result.stderrText)")
    if let owner = Self.owner(folder.url("out/link")) {
      #expect(owner == (65534, 65534), "a link with the wrong owner was left in the mirror")
    }

    let again = try SqueezeBinary.run(arguments, currentDirectory: folder.path)
    #expect(again.status == 0, "\(again.stderrText)")
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: folder.url("out/link")) == "a.txt")
    #expect(Self.owner(folder.url("out/link")).map { $0 == (65534, 65534) } == true)
  }

  /// A mirrored link with another owner than its source's (as a run killed between making
  /// the link and setting its owner leaves it) is made again by the next run, not kept
  /// because its target and times are right.
  @Test(.enabled(if: getuid() == 0, "gives the tree another owner: needs root"))
  func aMirroredLinkWithTheWrongOwnerIsMadeAgain() throws {
    let folder = TemporaryFolder("owner-again")
    try folder.write("src/a.txt", TestData.text(3_000, seed: 1))
    symlink("a.txt", folder.url("src/link"))
    for path in ["src", "src/a.txt", "src/link"] { lchown(folder.url(path), 65534, 65534) }
    let arguments = ["-q", "-o", "out", "src/"]
    let first = try SqueezeBinary.run(arguments, currentDirectory: folder.path)
    try #require(first.status == 0, "\(first.stderrText)")
    try #require(Self.owner(folder.url("out/link")).map { $0 == (65534, 65534) } == true)
    lchown(folder.url("out/link"), 0, 0)

    let again = try SqueezeBinary.run(arguments, currentDirectory: folder.path)
    #expect(again.status == 0, "\(again.stderrText)")
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: folder.url("out/link")) == "a.txt")
    #expect(Self.owner(folder.url("out/link")).map { $0 == (65534, 65534) } == true)
  }

  /// A mirror's further name of a hard-link group (`sub/hard.txt.gz`, a link of
  /// `sub/b.txt.gz`) is judged before a re-run. Each open on the way to it fails in turn:
  /// a name that could not be examined was taken for absent (and the run failed with
  /// "appeared while this output was being written", the real cause lost), or for stale,
  /// and then the hard link made under a temporary name stayed beside it, because renaming
  /// one name of a file over another name of the same file does nothing.
  @Test(.enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"))
  func aHardLinkThatCannotBeExaminedLeavesNoTemporaryAndNamesTheCause() throws {
    var k = 1
    while true {
      let folder = TemporaryFolder("fault-follower")
      let bytes = TestData.text(2_000, seed: 4)
      try folder.write("src/sub/b.txt", bytes)
      link(folder.url("src/sub/b.txt"), folder.url("src/sub/hard.txt"))
      let arguments = ["-q", "-o", "out", "src/"]
      let first = try SqueezeBinary.run(arguments, currentDirectory: folder.path)
      try #require(first.status == 0, "\(first.stderrText)")

      let fault = FaultShim.Fault(kind: "open", at: k, errno: "EACCES", path: "sub")
      let run = try FaultShim.run(arguments, in: folder, failing: fault)
      if !run.fired { break }
      #expect([0, 1].contains(run.result.status), "\(fault): \(run.result.stderrText)")
      if run.result.status == 1 {
        #expect(
          run.result.stderrText.split(separator: "\n").allSatisfy {
            !$0.hasPrefix("squeeze:") || $0.contains("(errno 13)")
          }, "\(fault): \(run.result.stderrText)")
      }
      #expect(TemporaryFolder.squeezeTemporaries(under: folder.path) == [], "\(fault)")
      let again = try SqueezeBinary.run(arguments, currentDirectory: folder.path)
      #expect(again.status == 0, "\(fault): \(again.stderrText)")
      #expect(try SystemGzip.decompress(folder.url("out/sub/hard.txt.gz")) == bytes)
      #expect(try SystemGzip.decompress(folder.url("out/sub/b.txt.gz")) == bytes)
      #expect(TemporaryFolder.squeezeTemporaries(under: folder.path) == [], "\(fault)")
      k += 1
    }
    #expect(k > 3, "the re-run opened fewer than 3 paths with 'sub' in them")
  }
}

extension FaultInjectionTests {
  /// A mode whose syncs are failed in turn.
  struct SyncMode: CustomTestStringConvertible, Sendable {
    var name: String
    var arguments: [String]
    var testDescription: String { name }
  }

  /// Each `syncfs` of a run fails in turn (EIO): every one fails the run with its cause.
  /// The last commits of a run (the publisher's after its last renames, a mirror's after
  /// its links, folders and manifest) and the one `--delete` makes before it removes
  /// anything were made and their failure ignored: the run ended with 0, and `--delete`
  /// went on to remove entries after a sync that had failed.
  @Test(
    .enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"),
    arguments: [
      SyncMode(name: "beside", arguments: ["-q", "src"]),
      SyncMode(name: "mirror", arguments: ["-q", "-o", "out", "src/"]),
      SyncMode(name: "delete", arguments: ["-q", "--delete", "-o", "out", "src/"]),
    ])
  func everyFailedSyncFailsTheRun(mode: SyncMode) throws {
    var k = 1
    var skippedDeletions = 0
    while true {
      let folder = TemporaryFolder("fault-sync-\(mode.name)")
      try folder.write("src/a.txt", TestData.text(3_000, seed: 1))
      try folder.write("src/sub/b.txt", TestData.text(2_000, seed: 2))
      if mode.name == "delete" {
        try folder.write("src/gone.txt", TestData.text(1_000, seed: 3))
        let first = try SqueezeBinary.run(mode.arguments, currentDirectory: folder.path)
        try #require(first.status == 0, "\(first.stderrText)")
        unlink(folder.url("src/gone.txt"))
        try folder.write("src/new.txt", TestData.text(1_500, seed: 4))
      }
      let fault = FaultShim.Fault(kind: "sync", at: k, errno: "EIO")
      let run = try FaultShim.run(mode.arguments, in: folder, failing: fault)
      if !run.fired { break }
      #expect(run.result.status == 1, "\(fault): \(run.result.stderrText)")
      #expect(run.result.stderrText.contains("(errno 5)"), "\(fault): \(run.result.stderrText)")
      #expect(TemporaryFolder.squeezeTemporaries(under: folder.path) == [], "\(fault)")
      if run.result.stderrText.contains("deletions skipped: cannot sync 'out' to disk") {
        skippedDeletions += 1
        #expect(FileManager.default.fileExists(atPath: folder.url("out/gone.txt.gz")))
      }
      let again = try SqueezeBinary.run(mode.arguments, currentDirectory: folder.path)
      #expect(again.status == 0, "\(fault): \(again.stderrText)")
      k += 1
    }
    #expect(k > 2, "the run made fewer than 2 syncs")
    #expect(skippedDeletions == (mode.name == "delete" ? 1 : 0))
  }
}

extension FaultInjectionTests {
  /// Before a re-run each mirrored link is examined (`fstatat`, `readlinkat`). Each of those
  /// calls fails in turn: a link that could not be examined was taken for absent, and
  /// making it again met the link there (`EEXIST`): the run failed with "'out/link' appeared
  /// while this output was being written", the real cause lost.
  @Test(
    .enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"),
    arguments: ["stat", "readlink"])
  func aLinkThatCannotBeExaminedIsMadeAgainOrFailsWithItsCause(kind: String) throws {
    var k = 1
    while true {
      let folder = TemporaryFolder("fault-examine")
      try folder.write("src/a.txt", TestData.text(3_000, seed: 1))
      symlink("a.txt", folder.url("src/link"))
      let arguments = ["-q", "-o", "out", "src/"]
      let first = try SqueezeBinary.run(arguments, currentDirectory: folder.path)
      try #require(first.status == 0, "\(first.stderrText)")

      let fault = FaultShim.Fault(kind: kind, at: k, errno: "EACCES", path: "link")
      let run = try FaultShim.run(arguments, in: folder, failing: fault)
      if !run.fired { break }
      #expect([0, 1].contains(run.result.status), "\(fault): \(run.result.stderrText)")
      #expect(
        run.result.stderrText.split(separator: "\n").allSatisfy {
          !$0.hasPrefix("squeeze:") || $0.contains("(errno 13)")
        }, "\(fault): \(run.result.stderrText)")
      #expect(TemporaryFolder.squeezeTemporaries(under: folder.path) == [], "\(fault)")
      let again = try SqueezeBinary.run(arguments, currentDirectory: folder.path)
      #expect(again.status == 0, "\(fault): \(again.stderrText)")
      #expect(
        try FileManager.default.destinationOfSymbolicLink(atPath: folder.url("out/link"))
          == "a.txt")
      k += 1
    }
    #expect(k > 1, "the re-run made no \(kind) call on the link")
  }
}

extension FaultInjectionTests {
  /// `--delete` refuses a mirror that `--rm -o` made an archive of (its marker says so).
  /// When the marker cannot be examined (`fstatat` fails), the run stops with the cause:
  /// it took the marker for absent and pruned the archive, deleting the only copies of the
  /// files whose originals `--rm` had removed.
  @Test(
    .enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"),
    arguments: [
      FaultShim.Fault(kind: "stat", at: 1, errno: "EIO", path: ".squeeze-archive"),
      FaultShim.Fault(kind: "stat", at: 1, errno: "EACCES", path: ".squeeze-archive"),
      FaultShim.Fault(kind: "stat", at: 1, errno: "ENOMEM", path: ".squeeze-archive"),
    ])
  func anArchiveWhoseMarkerCannotBeExaminedIsNeverPruned(fault: FaultShim.Fault) throws {
    let folder = TemporaryFolder("fault-archive")
    let bytes = TestData.text(2_000, seed: 5)
    try folder.write("S/a.log", bytes)
    let archived = try SqueezeBinary.run(
      ["-q", "--rm", "-o", "M", "S/"], currentDirectory: folder.path)
    try #require(archived.status == 0, "\(archived.stderrText)")
    try #require(!FileManager.default.fileExists(atPath: folder.url("S/a.log")))
    // --delete keeps what changed since its run started, on the coarse clock file times are
    // stamped with: the run starts a tick after the output was made, so only the marker
    // stands between the output and its deletion.
    var status = stat()
    try #require(lstat(folder.url("M/a.log.gz"), &status) == 0)
    var now = timespec()
    repeat {
      usleep(1_000)
      clock_gettime(CLOCK_REALTIME_COARSE, &now)
    } while (now.tv_sec, now.tv_nsec) <= (status.st_ctim.tv_sec, status.st_ctim.tv_nsec)

    let run = try FaultShim.run(["-q", "--delete", "-o", "M", "S/"], in: folder, failing: fault)
    #expect(run.fired)
    #expect(run.result.status == 1, "\(run.result.stderrText)")
    #expect(
      run.result.stderrText.contains("cannot examine 'M/.squeeze-archive'")
        && run.result.stderrText.contains("(errno "), "\(run.result.stderrText)")
    #expect(try SystemGzip.decompress(folder.url("M/a.log.gz")) == bytes, "the only copy")
  }

  /// The last calls of a snapshot run give the `-o` folder its times back after its marker
  /// of an unfinished snapshot is removed, and sync it. The sweep's link-dest mode found that
  /// when either failed, the run failed (status 1) but the folder looked finished, and the
  /// next run refused it instead of resuming it.
  @Test(
    .enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"),
    arguments: ["utimens", "sync"])
  func aSnapshotWhoseLastCallsFailIsResumedByTheNextRun(kind: String) throws {
    let folder = TemporaryFolder("fault-snapshot")
    try folder.write("S/a.txt", TestData.text(3_000, seed: 1))
    try folder.write("S/b.txt", TestData.text(4_000, seed: 2))
    let first = try SqueezeBinary.run(["-q", "-o", "N1", "S/"], currentDirectory: folder.path)
    try #require(first.status == 0, "\(first.stderrText)")
    try folder.write("S/b.txt", TestData.text(4_100, seed: 3))
    let source = TreeSnapshot(folder.url("S"))
    let counting = try FaultShim.run(
      ["-q", "-o", "count", "--link-dest", "../N1", "S/"], in: folder, failing: nil)
    try #require(counting.result.status == 0, "\(counting.result.stderrText)")
    let last = Int(try #require(counting.counts[kind]))
    let run = try FaultShim.run(
      ["-q", "-o", "N2", "--link-dest", "../N1", "S/"], in: folder,
      failing: FaultShim.Fault(kind: kind, at: last, errno: "EIO"))
    #expect(run.fired)
    #expect(run.result.status == 1, "\(run.result.stderrText)")
    #expect(
      FileManager.default.fileExists(atPath: folder.url("N2/.squeeze-snapshot")),
      "still unfinished")
    let again = try SqueezeBinary.run(
      ["-q", "-o", "N2", "--link-dest", "../N1", "S/"], currentDirectory: folder.path)
    #expect(again.status == 0, "resumed: \(again.stderrText)")
    #expect(!FileManager.default.fileExists(atPath: folder.url("N2/.squeeze-snapshot")))
    let restored = try SqueezeBinary.run(
      ["-q", "-d", "-o", "R", "N2/"], currentDirectory: folder.path)
    #expect(restored.status == 0, "\(restored.stderrText)")
    let differences = source.differences(from: TreeSnapshot(folder.url("R")))
    #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
  }

  /// A snapshot run killed while it writes its marker of an unfinished snapshot (its
  /// temporary made, not yet renamed) leaves nothing but that temporary. The next run takes
  /// the folder for the new snapshot's it is, rather than refuse it as not empty; the
  /// rotation recipe runs squeeze on it rather than keep it as a finished night.
  @Test(.enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"))
  func aSnapshotKilledWhileItWritesItsMarkerIsMadeByTheNextRun() throws {
    let folder = TemporaryFolder("fault-snapshot-start")
    try folder.write("S/a.txt", TestData.text(3_000, seed: 1))
    try folder.write("S/sub/b.txt", TestData.text(4_000, seed: 2))
    let environment = ["PATH": "/usr/bin:/bin", "SQUEEZE": SqueezeBinary.path]
    let script = SnapshotRotationTests.script
    var first = environment
    first["SNAPSHOT_DATE"] = "2026-11-30"
    let night = try Shell.run(
      "/bin/bash", [script, folder.url("S/"), folder.url("B")], environment: first)
    try #require(night.status == 0, "\(night.stderrText)")
    try folder.write("S/sub/b.txt", TestData.text(4_100, seed: 3))
    let source = TreeSnapshot(folder.url("S"))
    let earlier = TreeSnapshot(folder.url("B/2026-11-30"))
    let marker = FaultShim.Fault(
      kind: "rename", at: 1, errno: "EIO", path: ".squeeze-snapshot", kill: true)
    for work in ["N", "B/.unfinished-2026-12-01"] {
      let killed = try FaultShim.run(
        ["-q", "-o", work, "--link-dest", work == "N" ? "../B/2026-11-30" : "../2026-11-30", "S/"],
        in: folder, failing: marker)
      #expect(killed.fired)
      #expect(killed.result.signal == SIGKILL)
      let left = try FileManager.default.contentsOfDirectory(atPath: folder.url(work))
      #expect(left.count == 1 && left[0].hasPrefix(".squeeze-") && left[0].hasSuffix(".tmp"))
    }
    let again = try SqueezeBinary.run(
      ["-q", "-o", "N", "--link-dest", "../B/2026-11-30", "S/"], currentDirectory: folder.path)
    #expect(again.status == 0, "a new snapshot: \(again.stderrText)")
    var tonight = environment
    tonight["SNAPSHOT_DATE"] = "2026-12-01"
    let recipe = try Shell.run(
      "/bin/bash", [script, folder.url("S/"), folder.url("B")], environment: tonight)
    #expect(recipe.status == 0, "\(recipe.stderrText)")
    for made in ["N", "B/2026-12-01"] {
      let names = try FileManager.default.contentsOfDirectory(atPath: folder.url(made))
      #expect(
        !names.contains { $0.hasPrefix(".squeeze-") && $0 != ".squeeze-manifest" }, "\(names)")
      let restore = "R-" + made.replacingOccurrences(of: "/", with: "-")
      let restored = try SqueezeBinary.run(
        ["-q", "-d", "-o", restore, made + "/"], currentDirectory: folder.path)
      #expect(restored.status == 0, "\(restored.stderrText)")
      let differences = source.differences(from: TreeSnapshot(folder.url(restore)))
      #expect(differences.isEmpty, "\(made): \(differences.joined(separator: "\n"))")
    }
    let after = TreeSnapshot(folder.url("B/2026-11-30"))
    #expect(after.differences(from: earlier).isEmpty, "the earlier snapshot is unchanged")
  }

  /// Removing the marker of an unfinished snapshot sets its folder's modification time, so
  /// the folder's times are given back right after, in the next system call. A kill between
  /// the two leaves a finished snapshot: every entry on disk and restoring exactly, the top
  /// folder's times those of the removal. The next run refuses it as it refuses any finished
  /// snapshot, and changes nothing in it.
  @Test(.enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"))
  func aSnapshotKilledBeforeItsTimesAreGivenBackIsFinishedAndRefused() throws {
    let folder = TemporaryFolder("fault-snapshot-end")
    try folder.write("S/a.txt", TestData.text(3_000, seed: 1))
    try folder.write("S/sub/b.txt", TestData.text(4_000, seed: 2))
    let first = try SqueezeBinary.run(["-q", "-o", "N1", "S/"], currentDirectory: folder.path)
    try #require(first.status == 0, "\(first.stderrText)")
    try folder.write("S/a.txt", TestData.text(3_100, seed: 3))
    let source = TreeSnapshot(folder.url("S"))
    let counting = try FaultShim.run(
      ["-q", "-o", "count", "--link-dest", "../N1", "S/"], in: folder, failing: nil)
    try #require(counting.result.status == 0, "\(counting.result.stderrText)")
    let last = Int(try #require(counting.counts["utimens"]))
    let killed = try FaultShim.run(
      ["-q", "-o", "N2", "--link-dest", "../N1", "S/"], in: folder,
      failing: FaultShim.Fault(kind: "utimens", at: last, errno: "EIO", kill: true))
    #expect(killed.fired)
    #expect(killed.result.signal == SIGKILL)
    #expect(!FileManager.default.fileExists(atPath: folder.url("N2/.squeeze-snapshot")))
    let restored = try SqueezeBinary.run(
      ["-q", "-d", "-o", "R", "N2/"], currentDirectory: folder.path)
    #expect(restored.status == 0, "\(restored.stderrText)")
    let restoredTree = TreeSnapshot(folder.url("R"))
    let differences = source.differences(from: restoredTree, comparingRoot: false)
    #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
    let top = try #require(restoredTree.entries[Array(".".utf8)])
    #expect(top.modified != source.entries[Array(".".utf8)]?.modified, "the top's time is off")
    let check = try SqueezeBinary.run(["--check", "-o", "N2", "S/"], currentDirectory: folder.path)
    #expect(check.status == 0, "\(check.stdoutText)\(check.stderrText)")
    let before = TreeSnapshot(folder.url("N2"))
    let again = try SqueezeBinary.run(
      ["-q", "-o", "N2", "--link-dest", "../N1", "S/"], currentDirectory: folder.path)
    #expect(again.status == 1)
    #expect(again.stderrText.contains("is not empty and is not an unfinished snapshot"))
    let after = TreeSnapshot(folder.url("N2"))
    #expect(after.differences(from: before).isEmpty)
    #expect(after.identities == before.identities, "inodes and change times")
    // The next night links from it as from any snapshot.
    let third = try SqueezeBinary.run(
      ["--json", "-o", "N3", "--link-dest", "../N2", "S/"], currentDirectory: folder.path)
    #expect(third.status == 0, "\(third.stderrText)")
    #expect(third.stdoutText.contains(#""linked":2"#), "\(third.stdoutText)")
  }
}

extension FaultInjectionTests {
  /// `--rm` tries a file that found no room again once the outputs in flight have freed
  /// their sources' room. Each sync of such a run fails in turn with `ENOSPC`: the run
  /// ends with 0 and every source gone with its whole output (the retry got past it), or
  /// stops with 74, a source kept beside each output whose removal was not made sure of. A
  /// retry of the file whose folder could not be synced found its output in place and kept
  /// its source, with status 0.
  @Test(.enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"))
  func withRmAFullDiskAtEachSyncEndsDoneOrStopped() throws {
    var k = 1
    while true {
      let folder = TemporaryFolder("fault-rm-sync")
      let files = ["a.txt", "sub/b.txt", "sub/c.txt"]
      for (index, name) in files.enumerated() {
        try folder.write("src/\(name)", TestData.text(2_000, seed: UInt64(index + 1)))
      }
      let fault = FaultShim.Fault(kind: "sync", at: k, errno: "ENOSPC")
      let run = try FaultShim.run(["-q", "--rm", "src"], in: folder, failing: fault)
      if !run.fired { break }
      #expect([0, 74].contains(run.result.status), "\(fault): \(run.result.stderrText)")
      for (index, name) in files.enumerated() {
        let source = folder.url("src/\(name)")
        let output = source + ".gz"
        if run.result.status == 0 {
          #expect(!FileManager.default.fileExists(atPath: source), "\(fault): \(name) kept")
        }
        if FileManager.default.fileExists(atPath: output) {
          #expect(
            try SystemGzip.decompress(output) == TestData.text(2_000, seed: UInt64(index + 1)))
        } else {
          #expect(FileManager.default.fileExists(atPath: source), "\(fault): \(name) lost")
        }
      }
      #expect(TemporaryFolder.squeezeTemporaries(under: folder.path) == [], "\(fault)")
      k += 1
    }
    #expect(k > 2, "the run made fewer than 2 syncs")
  }
}

extension FaultInjectionTests {
  /// Each sync of a mirror's run fails in turn with `ENOSPC`, the last ones too (before
  /// `--delete` prunes, and after the links, folders and manifest): the run stops with
  /// the full-disk status and one line, never 1 (the syncs after the files gave 1 before).
  @Test(
    .enabled(if: FaultShim.canBuild, "needs gcc to build scripts/faults/faultshim.c"),
    arguments: [
      SyncMode(name: "mirror", arguments: ["-q", "-o", "out", "src/"]),
      SyncMode(name: "delete", arguments: ["-q", "--delete", "-o", "out", "src/"]),
    ])
  func aFullDiskAtEachSyncOfAMirrorGivesTheFullDiskStatus(mode: SyncMode) throws {
    var k = 1
    while true {
      let folder = TemporaryFolder("fault-full-sync-\(mode.name)")
      try folder.write("src/a.txt", TestData.text(3_000, seed: 1))
      try folder.write("src/sub/b.txt", TestData.text(2_000, seed: 2))
      if mode.name == "delete" {
        try folder.write("src/gone.txt", TestData.text(1_000, seed: 3))
        let first = try SqueezeBinary.run(mode.arguments, currentDirectory: folder.path)
        try #require(first.status == 0, "\(first.stderrText)")
        unlink(folder.url("src/gone.txt"))
      }
      let fault = FaultShim.Fault(kind: "sync", at: k, errno: "ENOSPC")
      let run = try FaultShim.run(mode.arguments, in: folder, failing: fault)
      if !run.fired { break }
      #expect(run.result.status == 74, "\(fault): \(run.result.stderrText)")
      let lines = run.result.stderrText.split(separator: "\n")
      #expect(lines.count == 1, "\(fault): \(run.result.stderrText)")
      #expect(lines.first?.contains("(errno 28)") == true, "\(fault): \(run.result.stderrText)")
      #expect(TemporaryFolder.squeezeTemporaries(under: folder.path) == [], "\(fault)")
      let again = try SqueezeBinary.run(mode.arguments, currentDirectory: folder.path)
      #expect(again.status == 0, "\(fault): \(again.stderrText)")
      k += 1
    }
    #expect(k > 2, "the run made fewer than 2 syncs")
  }
}
