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
  /// rename, link, unlink, mkdir, fchmod, fchown, utimens, getdents, close, symlink) fails
  /// with `errno` (a name: EIO, ENOSPC, EACCES, ...); with `path`, the `at`-th of those on a
  /// path that contains it.
  struct Fault: CustomTestStringConvertible, Sendable {
    var kind: String
    var at: Int
    var errno: String
    var path: String? = nil
    var testDescription: String {
      "\(kind) #\(at)\(path.map { " on '\($0)'" } ?? "") fails with \(errno)"
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
    "utimens", "getdents", "close", "symlink",
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

@Suite struct FaultInjectionTests {
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
@Suite struct FaultSweepTests {
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
    // Every point reached the call it was to fail: "8 injected runs (8 reached their call)".
    let numbers = summary.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
    try #require(numbers.count >= 3, "\(summary)")
    #expect(numbers[1] >= 8 && numbers[2] == numbers[1], "\(summary)")
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
