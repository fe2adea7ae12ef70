import Foundation
import Glibc
import Testing

@testable import TestSupport

/// The per-file system-call budget of compressing a folder of small files, counted
/// with `strace -f -c` on a real run. A call added to the per-file path fails this test.
@Suite(.tags(.system), .systemTier) struct SystemCallTests {
  /// Counts each system call of `squeeze arguments` (all threads).
  static func countCalls(_ arguments: [String], in folder: TemporaryFolder) throws -> [String: Int]
  {
    let summary = folder.url("strace.txt")
    let result = try Shell.run(
      "/usr/bin/env", ["strace", "-f", "-c", "-o", summary, SqueezeBinary.path] + arguments)
    #expect(result.status == 0, "\(result.stderrText)")
    var counts: [String: Int] = [:]
    // Rows: % time, seconds, usecs/call, calls, [errors,] syscall.
    for line in try String(contentsOfFile: summary, encoding: .utf8).split(separator: "\n") {
      let fields = line.split(separator: " ")
      guard fields.count >= 5, let calls = Int(fields[3]), let name = fields.last,
        name != "total"
      else { continue }
      counts[String(name)] = calls
    }
    return counts
  }

  /// Writes `count` small files (mode 0644) in ten subfolders of `name`.
  static func makeTree(_ name: String, files count: Int, in folder: TemporaryFolder) throws {
    for index in 0..<count {
      let path = "\(name)/d\(index % 10)/f\(index).txt"
      try folder.write(path, TestData.text(1500, seed: UInt64(index)))
      chmod(folder.url(path), 0o644)
    }
  }

  /// The descriptor table is grown once at start, while squeeze has one thread
  /// (`DescriptorTable`): a running squeeze's `FDSize` (`/proc/PID/status`, the slots of its
  /// table) is 4,096, or the soft `RLIMIT_NOFILE` when that is lower. Before, the table grew
  /// as the run opened files (256 here for `-c`), and every growth with threads running waits
  /// for an RCU grace period.
  @Test(arguments: [nil, 512])
  func theDescriptorTableIsGrownBeforeTheFirstThread(limit: Int?) throws {
    let lower = limit.map { "ulimit -n \($0); " } ?? ""
    let result = try Shell.sh(
      lower
        + "echo limit $(ulimit -n); sleep 2 | \(Shell.quote(SqueezeBinary.path)) -c >/dev/null & "
        + "pid=$!; sleep 0.5; grep FDSize /proc/$pid/status; wait")
    #expect(result.status == 0, "\(result.stderrText)")
    let words = result.stdoutText.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
    let shellLimit = try #require(words.count == 4 ? Int(words[1]) : nil, "\(result.stdoutText)")
    #expect(words.count == 4 && words[3] == "\(min(shellLimit, 4096))", "\(result.stdoutText)")
  }

  @Test func eachSmallFileCostsTenSystemCallsAndNoFsync() throws {
    let folder = TemporaryFolder("syscalls")
    // Two runs that differ only in the number of files: the difference is the per-file
    // cost, free of start-up and per-folder calls.
    let (few, many) = (100, 400)
    try Self.makeTree("few", files: few, in: folder)
    try Self.makeTree("many", files: many, in: folder)
    let base = try Self.countCalls([folder.url("few")], in: folder)
    let counts = try Self.countCalls([folder.url("many")], in: folder)
    func perFile(_ names: String...) -> Double {
      let extra = names.reduce(0) { $0 + (counts[$1] ?? 0) - (base[$1] ?? 0) }
      return Double(extra) / Double(many - few)
    }
    // Threads add a few calls that do not depend on the files (wake-ups, timers).
    func about(_ value: Double, _ expected: Double) -> Bool { abs(value - expected) < 0.05 }
    let report = "per run of \(few) files: \(base); of \(many) files: \(counts)"
    // Open the source and create the temporary.
    #expect(about(perFile("openat2", "openat", "open"), 2), "\(report)")
    // Listing (fstatat) and the check that the opened file is the listed one (fstat).
    #expect(about(perFile("newfstatat", "fstat", "statx"), 2), "\(report)")
    #expect(about(perFile("close"), 2), "\(report)")
    // A small file is read by one read and written by one write (header, data, trailer).
    #expect(about(perFile("read", "pread64"), 1), "\(report)")
    #expect(about(perFile("write", "pwrite64"), 1), "\(report)")
    // Times, then the link into place: the output is made unnamed (O_TMPFILE), with the
    // final mode, and given its name by one linkat; no temporary name, no rename.
    #expect(about(perFile("utimensat"), 1), "\(report)")
    #expect(about(perFile("linkat"), 1), "\(report)")
    #expect(perFile("renameat2", "renameat", "rename", "unlinkat", "unlink") == 0, "\(report)")
    #expect(perFile("fchmod", "fchown", "fchownat", "fchmodat") == 0, "\(report)")
    // Durability comes from syncfs batches on the publisher's thread, never a per-file sync.
    #expect(perFile("fsync", "fdatasync") == 0, "\(report)")
    #expect((counts["syncfs"] ?? 0) >= 1, "\(report)")
    for index in stride(from: 0, to: many, by: 37) {
      let path = "many/d\(index % 10)/f\(index).txt"
      #expect(try SystemGzip.decompress(folder.url(path + ".gz")) == (try folder.read(path)))
    }
  }

  /// The main-actor heartbeat (the `squeeze-beat` thread, which wakes every 5 ms and hops
  /// onto the main actor) runs only when something reads the lag it measures: `--json`, the
  /// summary with diagnostics (`-v`), the task-state log. An everyday run starts no such
  /// thread. The threads are seen naming themselves (`prctl(PR_SET_NAME)`) under `strace`.
  @Test(
    arguments: [
      (label: "everyday", arguments: ["-q"], beats: false),
      (label: "--progress plain", arguments: ["--progress", "plain"], beats: false),
      (label: "--json", arguments: ["-q", "--json"], beats: true),
      (label: "-v", arguments: ["-v"], beats: true),
      (label: "--task-log", arguments: ["-q", "--task-log", "LOG"], beats: true),
    ])
  func theHeartbeatRunsOnlyWhenItsLagIsRead(label: String, arguments: [String], beats: Bool)
    throws
  {
    let folder = TemporaryFolder("syscalls-heartbeat")
    try Self.makeTree("in", files: 20, in: folder)
    let trace = folder.url("prctl.txt")
    let resolved = arguments.map { $0 == "LOG" ? folder.url("run.jsonl") : $0 }
    let result = try Shell.run(
      "/usr/bin/env",
      ["strace", "-f", "-e", "trace=prctl", "-o", trace, SqueezeBinary.path]
        + resolved + [folder.url("in")])
    #expect(result.status == 0, "\(label): \(result.stderrText)")
    let names = try String(contentsOfFile: trace, encoding: .utf8)
    // The publisher names its thread in every run: the names are seen.
    #expect(names.contains("squeeze-publish"), "\(label): \(names)")
    #expect(names.contains("squeeze-beat") == beats, "\(label): \(names)")
    #expect(
      try SystemGzip.decompress(folder.url("in/d3/f3.txt.gz")) == (try folder.read("in/d3/f3.txt")))
  }

  /// Each folder of small files costs eight calls beyond its files' own: the listing's
  /// `fstatat` of it in its parent, `openat2`, two `getdents64` (the second finds the end),
  /// the default-ACL probe (`fgetxattr`) and `close`; and one `openat2` (`O_PATH`) and
  /// `close` of the handle its temporaries are made and renamed in, shared by all its files.
  /// Nothing else grows with the folders: no second listing, no handle per file.
  @Test func eachFolderCostsEightSystemCalls() throws {
    let folder = TemporaryFolder("syscalls-per-folder")
    // The same 400 files in 10 folders or in 50: the difference is the cost of 40 folders.
    let (few, many) = (10, 50)
    for (name, count) in [("few", few), ("many", many)] {
      for index in 0..<400 {
        let path = "\(name)/d\(index % count)/f\(index).txt"
        try folder.write(path, TestData.text(1500, seed: UInt64(index)))
        chmod(folder.url(path), 0o644)
      }
    }
    let base = try Self.countCalls(["-j", "1", folder.url("few")], in: folder)
    let counts = try Self.countCalls(["-j", "1", folder.url("many")], in: folder)
    func perFolder(_ names: String...) -> Double {
      let extra = names.reduce(0) { $0 + (counts[$1] ?? 0) - (base[$1] ?? 0) }
      return Double(extra) / Double(many - few)
    }
    // Batches and wake-ups vary by a few calls from run to run, never by one per folder.
    func about(_ value: Double, _ expected: Double) -> Bool { abs(value - expected) < 0.2 }
    let report = "per run of \(few) folders: \(base); of \(many) folders: \(counts)"
    #expect(about(perFolder("openat2", "openat", "open"), 2), "\(report)")
    #expect(about(perFolder("getdents64"), 2), "\(report)")
    #expect(about(perFolder("fgetxattr"), 1), "\(report)")
    #expect(about(perFolder("close"), 2), "\(report)")
    #expect(about(perFolder("newfstatat", "fstat", "statx"), 1), "\(report)")
    #expect(
      about(perFolder("fcntl", "lseek", "read", "write", "renameat2", "utimensat"), 0), "\(report)")
    for index in stride(from: 0, to: 400, by: 37) {
      let path = "many/d\(index % many)/f\(index).txt"
      #expect(try SystemGzip.decompress(folder.url(path + ".gz")) == (try folder.read(path)))
    }
  }

  /// A snapshot night (`--link-dest`) over unchanged files costs each file eight calls: the
  /// listing's `fstatat`, the re-run rules' look at the earlier output (`openat2`, `fstat`,
  /// two `pread`s for its header and trailer, `close`), the `linkat` and the `fstatat` that
  /// checks the link is that very output. The folders on the way are opened once for all
  /// their files, the source is not examined again for its owner, and the earlier output is
  /// not examined twice.
  @Test func eachLinkedFileCostsEightSystemCalls() throws {
    let folder = TemporaryFolder("syscalls-link-dest")
    let (few, many) = (100, 400)
    for name in ["few", "many"] {
      try Self.makeTree(name, files: name == "few" ? few : many, in: folder)
      let first = try SqueezeBinary.run(["-o", folder.url("\(name)-1"), folder.url(name + "/")])
      try #require(first.status == 0, "\(first.stderrText)")
    }
    func night(_ name: String) throws -> [String: Int] {
      try Self.countCalls(
        ["-o", folder.url("\(name)-2"), "--link-dest", "../\(name)-1", folder.url(name + "/")],
        in: folder)
    }
    let base = try night("few")
    let counts = try night("many")
    func perFile(_ names: String...) -> Double {
      let extra = names.reduce(0) { $0 + (counts[$1] ?? 0) - (base[$1] ?? 0) }
      return Double(extra) / Double(many - few)
    }
    func about(_ value: Double, _ expected: Double) -> Bool { abs(value - expected) < 0.05 }
    let report = "per night of \(few) files: \(base); of \(many) files: \(counts)"
    #expect(about(perFile("linkat", "link"), 1), "\(report)")
    #expect(about(perFile("openat2", "openat", "open"), 1), "\(report)")
    #expect(about(perFile("close"), 1), "\(report)")
    #expect(about(perFile("newfstatat", "fstat", "statx", "lstat", "stat"), 3), "\(report)")
    #expect(about(perFile("read", "pread64"), 2), "\(report)")
    // None per linked file; the count of a whole night may differ by one (a `write` of the
    // progress or wake-up path lands in one night and not the other), as the others do.
    #expect(about(perFile("write", "pwrite64", "renameat2", "utimensat", "fsync"), 0), "\(report)")
    for index in stride(from: 0, to: many, by: 37) {
      let path = "many-2/d\(index % 10)/f\(index).txt.gz"
      var (new, earlier) = (stat(), stat())
      #expect(lstat(folder.url(path), &new) == 0)
      #expect(lstat(folder.url("many-1/d\(index % 10)/f\(index).txt.gz"), &earlier) == 0)
      #expect(new.st_ino == earlier.st_ino, "\(path) is a link of the earlier output")
    }
  }

  /// A snapshot night's hard links are made on the workers, as many batches at once as
  /// there are slots, not one at a time by the task that schedules the files: with `-j 2`,
  /// the links of ten batches (256 files each) come from more than one thread.
  @Test func aNightsLinksAreMadeOnMoreThanOneThread() throws {
    let folder = TemporaryFolder("syscalls-link-threads")
    try Self.makeTree("S", files: 2_560, in: folder)
    let first = try SqueezeBinary.run(["-o", folder.url("N1"), folder.url("S/")])
    try #require(first.status == 0, "\(first.stderrText)")
    let trace = folder.url("links.txt")
    let night = try Shell.run(
      "/usr/bin/env",
      [
        "strace", "-f", "-e", "trace=linkat", "-o", trace, SqueezeBinary.path, "-j", "2", "-o",
        folder.url("N2"), "--link-dest", "../N1", folder.url("S/"),
      ])
    #expect(night.status == 0, "\(night.stderrText)")
    // Lines: "<thread id> linkat(...) = 0", or, when another thread's call comes between,
    // "<thread id> linkat(... <unfinished ...>" and later "<... linkat resumed>...".
    let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
      .filter { $0.contains("linkat(") }
    let threads = Set(lines.compactMap { $0.split(separator: " ").first.map(String.init) })
    #expect(lines.count == 2_560, "every output linked")
    #expect(threads.count >= 2, "links made by threads \(threads)")
  }

  /// A mirror folder made by the run is made with its source's bits (owner `rwx` added), so
  /// a `0755` source folder needs no `fchmod` when the folders get their metadata at the
  /// end: only its times are set.
  @Test func aNewMirrorFolderOf0755NeedsNoChmod() throws {
    let folder = TemporaryFolder("syscalls-folders")
    // The same 50 files in both trees, in 10 folders or in 50: the difference is the cost
    // of 40 folders.
    let (few, many) = (10, 50)
    for (name, count) in [("few", few), ("many", many)] {
      for index in 0..<many {
        try folder.write("\(name)/d\(index % count)/f\(index).txt", text: "file \(index)\n")
        chmod(folder.url("\(name)/d\(index % count)"), 0o755)
      }
    }
    let base = try Self.countCalls(["-o", folder.url("few-out"), folder.url("few/")], in: folder)
    let counts = try Self.countCalls(
      ["-o", folder.url("many-out"), folder.url("many/")], in: folder)
    func perFolder(_ names: String...) -> Double {
      let extra = names.reduce(0) { $0 + (counts[$1] ?? 0) - (base[$1] ?? 0) }
      return Double(extra) / Double(many - few)
    }
    let report = "per run of \(few) folders: \(base); of \(many) folders: \(counts)"
    #expect(perFolder("fchmod", "fchmodat", "chmod") == 0, "\(report)")
    #expect(perFolder("mkdirat", "mkdir") == 1, "\(report)")
    for index in 0..<many {
      var status = stat()
      #expect(stat(folder.url("many-out/d\(index)"), &status) == 0)
      #expect(status.st_mode & 0o7777 == 0o755, "d\(index) has its source's bits")
    }
  }

  /// A restore makes the same ten calls a file as compression: its output is created with
  /// its final mode (no fchmod), the read that returns the whole file ends it (no read
  /// that returns 0), nothing is stat-ed again after decoding, and the output's file
  /// system is known from the listing.
  @Test func eachSmallRestoreCostsTenSystemCallsAndNoFchmod() throws {
    let folder = TemporaryFolder("syscalls-restore")
    let (few, many) = (100, 400)
    for name in ["few", "many"] {
      try Self.makeTree(name, files: name == "few" ? few : many, in: folder)
      #expect(try SqueezeBinary.run(["--rm", folder.url(name)]).status == 0)
    }
    let base = try Self.countCalls(["-d", folder.url("few")], in: folder)
    let counts = try Self.countCalls(["-d", folder.url("many")], in: folder)
    func perFile(_ names: String...) -> Double {
      let extra = names.reduce(0) { $0 + (counts[$1] ?? 0) - (base[$1] ?? 0) }
      return Double(extra) / Double(many - few)
    }
    func about(_ value: Double, _ expected: Double) -> Bool { abs(value - expected) < 0.05 }
    let report = "per run of \(few) files: \(base); of \(many) files: \(counts)"
    #expect(about(perFile("openat2", "openat", "open"), 2), "\(report)")
    #expect(about(perFile("close"), 2), "\(report)")
    #expect(about(perFile("write", "pwrite64"), 1), "\(report)")
    #expect(about(perFile("utimensat"), 1), "\(report)")
    #expect(about(perFile("linkat"), 1), "\(report)")
    #expect(perFile("renameat2", "renameat", "rename") == 0, "\(report)")
    // The temporary is created with the restored file's mode (0644 here): no fchmod.
    #expect(perFile("fchmod", "fchown", "fchownat", "fchmodat") == 0, "\(report)")
    // Listing (fstatat) and the check that the opened file is the listed one (fstat).
    #expect(about(perFile("newfstatat", "fstat", "statx"), 2), "\(report)")
    // One read returns the whole .gz file, exactly the size fstat gave.
    #expect(about(perFile("read", "pread64"), 1), "\(report)")
    #expect(perFile("fsync", "fdatasync") == 0, "\(report)")
    for index in stride(from: 0, to: many, by: 37) {
      let path = folder.url("many/d\(index % 10)/f\(index).txt")
      var status = stat()
      #expect(stat(path, &status) == 0)
      #expect(status.st_mode & 0o7777 == 0o644, "the restored mode is the .gz file's")
    }
  }
}
